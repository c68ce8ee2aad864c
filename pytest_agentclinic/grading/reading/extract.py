"""Stage 1 of the grader (read), first half: extract the diagnosis from a free-text answer.

The paper's grader returns the diagnosis named in the answer, "Multiple" when the answer does
not commit to one diagnosis, "None" when it names none, and the main diagnosis when a minor
concurrent one accompanies it. This module does the same with rules on the answer's shape:

* the *diagnostic statement* is found (:mod:`.statement`: after a label such as "Final
  Diagnosis:", in a tag or a JSON object, or in the first sentence that answers, from "the
  most likely diagnosis is", "I suspect you have", ... on) and cut where the prose moves on
  to reasons ("given ...", "which requires ...");
* a list of two items or more gives ``multiple`` (after a label, only a list that starts
  right there: "Final Diagnosis: X" may be followed by numbered reasons);
* a refusal ("insufficient information", "cannot determine") or an answer naming only tests,
  procedures, treatments or drugs gives ``none``;
* alternatives ("X or Y", "X vs Y", "(e.g. Y)", "X, possibly Y" unless Y is a kind of X)
  give ``multiple``;
* otherwise the statement is parsed (:mod:`.parse`) into the main diagnosis and the other
  names it gives, with their roles: aliases in parentheses, concurrent conditions ("with",
  "and"), causes ("due to"), refinements ("specifically").
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...core.text import bounded_cache
from ..terminology import content
from ..terms.kinds import kind
from .abbreviations import drop_abbreviations
from .companions import one_condition
from .hedges import open_alternatives
from .markers import addresses_grader, ready_answers, strip_echoes, unwrap
from .negations import drop_negations
from .notes import without_code_brackets
from .parse import Category, Extraction, Mention, Role, parse
from .parse import bare as _bare
from .plans import plan_names_nothing
from .prefaces import drop_heading, drop_preface
from .records import as_labelled_lines
from .refusals import names_an_option_only
from .revisions import drop_absent, revised
from .roles import kept_open, listed_roles, stated_roles
from .sections import cut_sections, differential_after, fold_sub_items, unaddressed
from .soap import soap_assessment
from .statement import (
    bare_name,
    clean,
    declared,
    first_line,
    label,
    starts_labelled,
    statement,
)
from .typography import untransported

__all__ = ["Category", "Extraction", "Mention", "Role", "extract"]

_ALNUM = re.compile(r"[^\W_]")
# "1. X 2. Y" on one line: a ranked list, as if one item a line.
_RANK_ITEM = re.compile(r"(?<=\S)[ \t]+(?=\d{1,2}[.)][ \t]+[^\W\d_])")
_RANKED = re.compile(r"^\s*1[.)][ \t]+\S")
def _unranked(text: str) -> str:
    """``text`` with a ranked list written on one line ("1. X 2. Y") one item a line."""
    return _RANK_ITEM.sub("\n", text) if _RANKED.match(text) else text


# (Only counted, or matched on one line: the item is found from its own line's start, not
# from each blank line above it, one scan of the blank lines each.)
_LIST_ITEM = re.compile(r"^[^\S\n]*(?:\d+[.)]|[-\u2022*])\s+\S", re.M)
_ENUMERATED = re.compile(r"^\s*\d+[.)]\s+")
# "T (90%), W (10%)", "T - 70%" ending its line: a percentage in brackets after a name, or
# after a dash as the rest of the line; two of them weigh diagnoses against each other, a
# differential by percentages (the paper's "more than one possible diagnosis";
# docs/grading.md's table), whichever comes first. Not after a colon, nor a dash inside a
# sentence: those are measurements as often ("hematocrit: 26%, transferrin saturation: 8%",
# "confidence: 80%"), and two of them beside one committed answer weigh nothing.
_WEIGHT = re.compile(r"[(\[]\s*~?\d{1,3}(?:\.\d+)?\s*%|\s[-\u2013\u2014]\s*~?\d{1,3}(?:\.\d+)?"
                     r"\s*%[ \t]*$", re.M)
# (Red team round 12) Shares without brackets: a share right after a name where its item
# ends ("T 70%, W 30%"), or a probability after a colon ("W: 0.6; T: 0.4", a decimal below
# 1), when the answer opens with a name and its share: a differential by shares as above.
# Not a measurement after the answer ("IDA; hematocrit 26%, saturation 8%": the first item
# has no share).
# A percentage after a colon is a share on the same terms ("T: 50%, W: 50%"; red team round
# 13): the answer opens with a name and its share, and two are given.
_BARE_SHARE = (r"(?:[ \t]+~?\d{1,3}(?:\.\d+)?[ \t]*%|:[ \t]*0?\.\d{1,3}"
               r"|:[ \t]*~?\d{1,3}(?:\.\d+)?[ \t]*%)(?=[ \t]*(?:[,;]|$))")
_OPENING_SHARE = re.compile(rf"\s*[^\W\d_][^\d\n,;:%]{{1,80}}?{_BARE_SHARE}")
_SHARES = re.compile(rf"(?<=[^\W\d_]){_BARE_SHARE}", re.M)
# "R/O T", "Rule out T": a plan to exclude T, which commits to no diagnosis (a clinician's
# "r/o" heads what is still to be excluded; "W, r/o T" is W with T kept open).
# "s/p T" ("status post"): a clinician's note of what is past, a procedure or a condition
# treated, with no diagnosis made now (red team round 8; "s/p T, now W" is graded on W).
_STATUS_POST = re.compile(r"status\s+post\b(?![^\n]*\b(?:now|presents?|presenting)\b)",
                          re.I)
_RULE_OUT = re.compile(r"(?:(?:to|need\s+to|must|should)\s+)?rule\s+out\b", re.I)
# "Screen for T", "Prophylaxis against T", "Vaccinate against T": what the patient is to be
# screened or protected for, which the patient is not said to have (red team round 9;
# clinical convention: a screening or prevention target is no diagnosis). Not "Test for":
# it names the test as often ("Test for thyroid function"), which a question may ask for.
_TARGETED = re.compile(r"(?:(?:to|need\s+to|must|should)\s+)?(?:screen(?:ing)?\s+for|"
                       r"(?:start\s+)?(?:prophylaxis|vaccinat\w*|immuni[sz]\w*)\s+"
                       r"(?:against|for))\b", re.I)
# "?T", "Query T": a clinician's query, a diagnosis still to be confirmed or excluded, as
# "r/o T" is (clinical convention, docs/grading.md, red team round 11): no diagnosis made.
_QUERY = re.compile(r"\?\s*(?=[^\W\d_])|query\s+(?![:=])(?=[^\W\d_])", re.I)
# "The differential diagnosis includes T": candidates, never one committed diagnosis (the
# paper's step 1: "more than one possible diagnosis"), even with one named (red team round 9)
_DIFFERENTIAL_OF = re.compile(r"^\s*(?:the\s+|my\s+|a\s+)?(?:differential(?:\s+diagnos[ie]s)?|ddx)"
                              r"\s+(?:includes?|comprises?|consists\s+of|would\s+include|"
                              r"should\s+include)\b", re.I)


def _claims(answer: str) -> list[str]:
    """What the answer's labels declare, and its first line when a name stands alone there
    ("DIAGNOSIS READY: X" or just "X"): "X\nFinal Diagnosis: Y" gives two answers."""
    claims = declared(answer)
    # A numbered first line is a step of the answer ("1. History reviewed"), not a claim.
    first = first_line(answer)
    if (claims and not starts_labelled(answer) and _LIST_ITEM.match(first) is None
            and bare_name(clean(first))):
        claims.insert(0, answer)
    return claims


def _answer(response: str, *,
            conditions_only: bool) -> tuple[str, Extraction | None, bool, tuple[str, ...]]:
    """The doctor's answer, and the extraction when its declarations settle it already:
    none when empty, multiple when "DIAGNOSIS READY:" or labels declare different diagnoses.
    Given twice, the last declaration with words answers: one before it may echo the
    harness's warning ("reply now with DIAGNOSIS READY: <diagnosis>"). The last value says
    whether the answer follows "DIAGNOSIS READY:", which then reads as a label would; the
    last, the names listed under a differential heading after the answer."""
    # what the transport added (HTML entities, a link, a template's tokens, an escaped line
    # break) is read as what it stands for, before anything else (red team round 8)
    response = untransported(response)
    before_ready, declarations = ready_answers(response)
    # an answer given as one record (CSV, a one-row table, ...) reads as labelled lines
    given = [p for p in (strip_echoes(unwrap(as_labelled_lines(d))) for d in declarations)
             if _ALNUM.search(p)]
    if len(given) > 1 and _ready_apart(given, conditions_only=conditions_only):
        return "", Extraction("multiple", "", reason="the answer is declared ready twice, "
                              "naming different diagnoses"), True, ()
    answer = ((given or [""])[-1] if declarations
              else strip_echoes(unwrap(as_labelled_lines(response))))
    # a SOAP note's assessment is its diagnosis (red team round 8)
    answer = soap_assessment(unaddressed(answer))
    # What follows a committed answer under a heading ("Differential:", "Ruled out:",
    # "Reasoning:") is what it weighed or why, in both protocols alike.
    # A list that gives each name its role reads as the lines it lists (red team round 15)
    answer = fold_sub_items(listed_roles(answer))
    aside = differential_after(answer)
    answer = cut_sections(answer)
    # A revised diagnosis supersedes what the answer declared before it (round 6)
    answer = revised(answer)
    if not _ALNUM.search(answer):
        return (answer, Extraction("none", "", reason="empty answer"), bool(declarations),
                aside)
    claims = _claims(answer)
    if declarations:
        # a label before "DIAGNOSIS READY:" declares an answer too ("Final Diagnosis: X ...
        # DIAGNOSIS READY: Y" gives two)
        before = declared(strip_echoes(unwrap(before_ready)))
        claims = [*claims, answer, *before] if before else claims
    if _disagree(claims, conditions_only=conditions_only):
        return answer, Extraction("multiple", "", reason=f"the answer labels {len(claims)} "
                                  "diagnoses"), bool(declarations), aside
    return answer, None, bool(declarations), aside


def _ready_apart(declarations: list[str], *, conditions_only: bool) -> bool:
    """Whether "DIAGNOSIS READY:" given twice or more names different diagnoses (or several
    in one declaration)."""
    read = [extract(part, conditions_only=conditions_only) for part in declarations]
    return any(r.category == "multiple" for r in read) or _disagree(
        [r.diagnosis for r in read if r.category == "single"], conditions_only=conditions_only)


def _disagree(claims: list[str], *, conditions_only: bool) -> bool:
    """Whether labelled answers name different conditions ("Rosacea" and "Lupus"), not one
    condition twice or once more precisely ("Psoriasis", "Psoriasis vulgaris"). A drug or a
    test beside a condition ("Lyme disease ... Answer: doxycycline") is no second one."""
    firsts = {first_line(claim) for claim in claims}
    if len(firsts) < 2:  # one label, or "Final Diagnosis:" read as two of its labels
        return False
    named: dict[frozenset[str], str] = {}
    for first in firsts:
        line = _bare(clean(first))
        if not conditions_only or kind(line) == "condition":
            named.setdefault(frozenset(content(line)), line)
    named.pop(frozenset(), None)
    pairs = [(a, b) for i, a in enumerate(named) for b in list(named)[i + 1:]]
    # One name's words inside the other's ("psoriasis", "psoriasis vulgaris") is one
    # condition named more precisely; only other pairs need the terminology.
    return any(not (a <= b or b <= a) and not one_condition(named[a], named[b])
               for a, b in pairs)


def _lists(text: str, *, labelled: bool, conditions_only: bool) -> bool:
    """Whether the answer is a list of two items or more. After a label, only a list that
    starts right there counts: "Final Diagnosis: X" may be followed by a list of reasons;
    and a list of tests there ("- CBC", "- Urinalysis") lists no diagnoses."""
    if not labelled:
        return len(_LIST_ITEM.findall(text)) >= 2
    if _LIST_ITEM.match(first_line(text)) is None:
        return False
    items = [_bare(clean(_ENUMERATED.sub("", line))) for line in text.splitlines()
             if _LIST_ITEM.match(line)]
    # a step of the plan ("2. Follow up in 2 weeks") lists no diagnosis
    named = [i for i in items if (not conditions_only or kind(i) == "condition")
             and not plan_names_nothing(i)]
    return len(named) >= 2


# One bracket around a whole answer of one line ("(T)", "[T]."); a bracket never nests here
# (its trailing spaces in one run, a full stop between two: two runs side by side tried
# every split of a long one before a fullmatch failed)
_WHOLE_BRACKET = re.compile(r"[ \t]*(?:\(([^()\[\]\n]+)\)|\[([^()\[\]\n]+)\])[ \t]*(?:\.[ \t]*)?")


def _unbracketed(text: str) -> str:
    """``text`` without a bracket that encloses all of it."""
    whole = _WHOLE_BRACKET.fullmatch(text)
    return text if whole is None else (whole.group(1) or whole.group(2)).strip()


@bounded_cache
def extract(response: str, *, conditions_only: bool = True) -> Extraction:
    """Stage 1: the category of the answer and the diagnosis it names.

    A test, treatment, drug or finding is not a diagnosis, so an answer naming only those
    names none; ``conditions_only=False`` reads them as answers (for questions whose correct
    answer is itself a treatment or a test, as some NEJM cases have).
    """
    answer, shape, ready, aside = _answer(response, conditions_only=conditions_only)
    if shape is not None:
        return shape
    labelled = label(answer)
    if labelled is not None or answer.lstrip().startswith(("(", "[")):
        # "Answer: (T)": a bracket around the whole answer is its typography, no aside
        # (red team round 17: it had been read as a note beside no name)
        labelled = _unbracketed(answer if labelled is None else labelled)
    # "DIAGNOSIS READY: X" is read as "Final Diagnosis: X" is: a list counts only where it
    # starts right at the marker
    if _lists(_unranked(answer if labelled is None else labelled),
              labelled=labelled is not None or ready, conditions_only=conditions_only):
        return Extraction("multiple", "", reason="the answer lists several items")
    text, excluded = drop_negations(drop_abbreviations(drop_preface(without_code_brackets(
        clean(answer if labelled is None else labelled)))))
    text, absent = drop_absent(text)
    # the names under a differential heading after the answer: weighed and set aside
    excluded = (*excluded, *absent, *aside)
    # "Considered: W\nVerdict: T": the heading that opens what is left once W is set aside
    text = drop_heading(text) if excluded else text
    # "T; W (cannot be excluded)": a name kept open after the statement's own clause offers
    # W beside T too (red team round 15), so the whole text is read for it first
    text = kept_open(text)
    stmt = statement(open_alternatives(text))
    roles = stated_roles(stmt)
    if roles is not None:
        # "W (differential), T (final)": the name labelled final is the answer, whatever its
        # kind; the names set aside are never graded (issue 31, "Main and concurrent")
        text, stmt, excluded = text.replace(stmt, roles.main, 1), roles.main, (
            *excluded, *roles.aside)
    if len(_WEIGHT.findall(text)) >= 2 or (_OPENING_SHARE.match(text)
                                            and len(_SHARES.findall(text)) >= 2):
        return Extraction("multiple", "", reason="the answer weighs diagnoses by percentages",
                          excluded=excluded)
    if _RULE_OUT.match(stmt) or _TARGETED.match(stmt) or _QUERY.match(stmt):
        return Extraction("none", "", reason="the answer only queries a diagnosis, plans to "
                          "rule it out, screen for it or prevent it", excluded=excluded)
    if _DIFFERENTIAL_OF.match(stmt) or _DIFFERENTIAL_OF.match(text):
        return Extraction("multiple", "", reason="the answer gives a differential",
                          excluded=excluded)
    if _STATUS_POST.match(stmt):
        return Extraction("none", "", reason="the answer names only what the patient is "
                          "status post", excluded=excluded)
    if names_an_option_only(stmt):
        return Extraction("none", "", reason="the answer gives an option's letter, no name",
                          excluded=excluded)
    if addresses_grader(stmt):
        return Extraction("none", "", reason="the answer speaks to the grader instead of "
                          "naming a diagnosis", excluded=excluded)
    found = parse(stmt, text, conditions_only=conditions_only)
    return replace(found, excluded=excluded)
