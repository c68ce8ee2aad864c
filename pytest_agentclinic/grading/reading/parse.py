"""Stage 1 of the grader (read), second half: parse the diagnostic statement into one main
claim and the other conditions it names, each with its role.

:mod:`.extract` finds the statement (labels, markers, negations, hedges written as "or");
:func:`parse` splits it into the main diagnosis and its companions: aliases in parentheses,
concurrent conditions ("with", "and", a comma), causes ("due to"), refinements
("specifically"), names in the sentences after it; a claim that a companion is the main
diagnosis again holds only when the terminology links them (:mod:`.companions`). Then it
categorises: *multiple* for alternatives or a list, *none* for no diagnosis, else *single*.
Which companions make the answer multiple is decided by :mod:`.rules` (one place, the table
of docs/grading.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from ..terms.concurrent import complication, finding
from ..terms.equivalence import compare
from ..terms.kinds import kind
from .clauses import (
    Mention,
    Role,
    bare,
    classify_paren,
    findings_after_colon,
    is_condition_phrase,
    next_segment,
    parentheticals,
    split,
    tail_mentions,
)
from .companions import hedged_role, parenthesized_role, restating_role, two_possible
from .context import cut_context
from .joins import COEXISTING, HEDGE, as_comorbid
from .notes import is_note, without_notes
from .plans import plan_names_nothing
from .refusals import is_non_answer, is_refusal, named_before_refusal
from .statement import DIFFERENTIAL_LABEL, SENTENCE_END, bare_name, clean

__all__ = ["Category", "Extraction", "Mention", "Role", "bare", "parse"]

Category = Literal["single", "multiple", "none"]


@dataclass(frozen=True)
class Extraction:
    """What stage 1 found: the category, the main diagnosis and every mention."""

    category: Category
    diagnosis: str
    mentions: tuple[Mention, ...] = field(default=())
    reason: str = ""
    #: Names the answer excludes ("not X", "X ruled out"); never graded.
    excluded: tuple[str, ...] = field(default=())
    #: The diagnostic statement the mentions were read from (markers and hedges removed).
    statement: str = ""

    @property
    def body(self) -> str:
        """The statement without its parentheses, which hold other names than its own, up to
        where it explains ("Granulomatosis with polyangiitis based on the findings")."""
        return cut_context(parentheticals(self.statement)[0])

    @property
    def label(self) -> str:
        """The extraction as the paper records it: the name, "multiple" or "none"."""
        return self.diagnosis if self.category == "single" else self.category


# Sentences after the statement: a bare name there is one more diagnosis ("X; Y", "X. Y").
_NEXT_SENTENCE = SENTENCE_END
# A sentence about the diagnosis just given ("The history and examination support this
# diagnosis."): a reason, no name.
_ABOUT_THE_ANSWER = re.compile(r"\b(?:this|the|that|my|our)\s+(?:diagnosis|condition|"
                               r"impression|assessment)\b|\b(?:supports?|fits?|explains?)\b",
                               re.I)


def _after(text: str, stmt: str) -> list[Mention]:
    """The bare names of conditions in the sentences right after the statement."""
    at = text.find(stmt) if stmt else -1
    if at < 0:
        return []
    out: list[Mention] = []
    for sentence in _NEXT_SENTENCE.split(text[at + len(stmt):], maxsplit=4)[1:4]:
        # "; hypokalemia (incidental)" is "; incidental hypokalemia": the note says the role
        cleaned = as_comorbid(clean(sentence))
        name = bare(cleaned)
        if not name:
            continue
        if plan_names_nothing(name) or (
                _CONSIDERED.match(name) or _ABOUT_THE_ANSWER.search(name) or not bare_name(name)
                or kind(name) != "condition" or not is_condition_phrase(name)):
            # "Diagnosis: X. Differential diagnoses include Y and Z.": the answer is X; what
            # it considered after it is no second diagnosis (and never scores); nor is a plan
            # ("Recommend biopsy to confirm.")
            break
        coexisting = COEXISTING.match(cleaned)
        out.append(Mention(bare(cleaned[coexisting.end():]), "comorbid")
                   if coexisting else Mention(name, "after"))
    return out

def _categorise(stmt: str, body: str, found: tuple[Mention, ...], *, differential: bool,
                conditions_only: bool) -> Extraction:
    # Tests, treatments and drugs are not diagnoses: an answer naming only those names none.
    mentions = tuple(m for m in found if not conditions_only or kind(m.text) == "condition")
    main = next((m.text for m in mentions if m.role == "main"), "")
    # ``body`` (the statement without parentheses): what an abbreviation in them abbreviates
    mentions = tuple(_resolved(m, main, body) for m in mentions)
    if any(m.role == "alternative" for m in mentions):
        names = ", ".join(m.text for m in mentions if m.role in ("main", "alternative"))
        return Extraction("multiple", "", mentions, f"alternatives: {names}")
    if _is_list(mentions, differential):
        names = ", ".join(m.text for m in mentions if m.role in _LISTED)
        return Extraction("multiple", "", mentions, f"a list of diagnoses: {names}")
    if not main or is_non_answer(main) or (is_refusal(stmt)
                                           and not named_before_refusal(stmt, main)):
        return Extraction("none", "", mentions, "the answer names no diagnosis")
    return Extraction("single", main, mentions, "one diagnosis named")


def _resolved(mention: Mention, main: str, named: str) -> Mention:
    """A companion whose role depends on how it relates to the main diagnosis, settled
    (see :mod:`.companions`). A claim inside the answer ("also known as Y", "i.e. Y",
    "specifically Y") proves nothing: Y restates X only when the terminology links them;
    else another name claimed for X is only claimed (no second diagnosis, and no match),
    and a kind claimed of X another condition named beside it."""
    if mention.role == "likely":
        # "bronchitis, probably pneumonia": two diseases the terminology surely tells apart
        # are two possible diagnoses (the paper's step 1); else a refinement, as "specifically"
        return replace(mention, role="alternative" if two_possible(mention.text, main)
                       else restating_role(mention.text, main, named, "refinement"))
    if mention.role in ("alias", "refinement"):
        return replace(mention, role=restating_role(mention.text, main, named, mention.role))
    if mention.role == "hedged":
        # "possible rupture", "possibly with abscess formation": what the disease may do,
        # a complication beside it (docs/grading.md, "Main and concurrent")
        return replace(mention, role="complication" if complication(mention.text)
                       else hedged_role(mention.text, main))
    if mention.role in ("offered", "parenthesized"):
        return replace(mention, role=parenthesized_role(mention.text, main, named,
                                                        offered=mention.role == "offered"))
    return mention


_LISTED = ("main", "listed", "concurrent")
# A sentence opening what the answer considered besides its diagnosis: the differential's
# label (as :mod:`.statement` reads it) or another word for it.
_CONSIDERED = re.compile(rf"(?:the\s+)?(?:{DIFFERENTIAL_LABEL.pattern})|(?:other\s+(?:"
                         r"possibilities|considerations|differentials?)|alternatives?|also\s+"
                         r"considered)\b", re.I)
# "Differential:", "DDx", "possible diagnoses: X, Y": what follows lists candidates
_DIFFERENTIAL = re.compile(r"\bdifferentials?\b|\bddx\b|\bdiagnoses\b", re.I)


def _is_list(mentions: tuple[Mention, ...], differential: bool) -> bool:
    """Whether the statement lists diagnoses rather than naming one (with its companions).

    "X, Y, Z" (three names, commas between) or a "differential" of two or more is a list;
    "X with Y", "X complicated by Y", "X and Y" name a main diagnosis and a companion.
    """
    if not any(m.role == "listed" for m in mentions):
        return False
    # a finding beside the diagnosis ("X, hepatomegaly, leukocytosis") is no item of a list
    count = sum(m.role in _LISTED and (m.role == "main" or not finding(m.text))
                for m in mentions)
    return count >= 3 or (count >= 2 and differential)


_HISTORY = re.compile(r"(?:(?:his|her|their|the\s+patient's|a|known)\s+)*(?:past\s+)?"
                      r"history\s+of\b", re.I)


# A hedge on the statement's first name ("Probably X, maybe Y", "probable X, possible Y"):
# X is a candidate the doctor ranks, not a sign the patient shows.
_HEDGED_FIRST = re.compile(rf"^\W*(?:{HEDGE}|suspected|presumed|presumptive)\b", re.I)


def _explained(mentions: tuple[Mention, ...], *,
               first_hedged: bool = False) -> tuple[Mention, ...]:
    """A finding explained by its cause names the cause as the diagnosis: in "jaundice due to
    Gilbert syndrome" or "hypercalcemia secondary to hyperparathyroidism" the sign is what
    the patient shows and the cause what the doctor diagnoses (docs/grading.md, "Main and
    concurrent"); the finding stays beside it as a concurrent one. With ``first_hedged``
    the finding is itself a suspected diagnosis, and a hedged second name no cause of it."""
    if len(mentions) < 2 or mentions[0].role != "main":
        return mentions
    main, cause = mentions[0], mentions[1]
    # "chest pain, possibly pericarditis", "thunderclap headache (possible subarachnoid
    # hemorrhage)": the one disease the doctor suspects behind the sign is the answer; not
    # after "Probably hypokalemia, maybe T", where both are ranked candidates (issue 31:
    # ranks are alternatives, and the truth in a secondary role never scores)
    # "fever, probably pneumonia", "jaundice (likely hepatitis A)": a stronger hedge reads
    # as a refinement (joins.SPECIFIC), and names the suspected disease all the same
    # and no alternative in the statement but that hedged name itself
    others = sum(m.role in ("hedged", "alternative", "offered") for m in mentions
                 if m is not cause)
    suspected = (not first_hedged and cause.role in ("hedged", "refinement", "likely")
                 and others == 0)
    # "effusion due to his history of renal cancer": a history is known, not diagnosed now
    if (not (cause.role == "cause" or suspected) or not finding(main.text)
            or finding(cause.text) or kind(cause.text) != "condition"
            or _HISTORY.match(cause.text)):
        return mentions
    return (replace(cause, role="main"), replace(main, role="concurrent"), *mentions[2:])


def parse(stmt: str, text: str, *, conditions_only: bool = True) -> Extraction:
    """The extraction of a diagnostic statement ``stmt`` read from ``text``: its main
    diagnosis, the other names with their roles, and its category."""
    # "hypertension (comorbidity)" is "comorbid hypertension": the note says the role
    body, parens = parentheticals(as_comorbid(stmt))
    head, tail = next_segment(cut_context(bare(findings_after_colon(body))))
    mentions = [*split(head, "main"), *tail_mentions(tail)]
    for inner in parens:
        mentions.extend(classify_paren(inner))
    mentions.extend(_after(text, stmt))
    # a note beside the diagnosis ("(left eye)", ", moderate severity") names no disease,
    # and is no part of the statement read as one name ("GPA, moderate severity")
    notes = [m.text for m in mentions if m.role != "main" and is_note(m.text)]
    mentions = [m for m in mentions if m.text not in notes]
    # (the statement's name up to where it explains: "T (formerly W) is the most likely ...")
    found = _categorise(stmt, cut_context(bare(without_notes(body, notes))),
                        _explained(tuple(m for m in mentions if m.text),
                                   first_hedged=_HEDGED_FIRST.match(stmt) is not None),
                        differential=_DIFFERENTIAL.search(text) is not None,
                        conditions_only=conditions_only)
    return _the_kind_named(replace(found, statement=without_notes(bare(stmt), notes)))


def _the_kind_named(found: Extraction) -> Extraction:
    """"X (possibly Y)", "X (e.g. Y)", "X, specifically Y", "X, namely Y" with Y a kind of X
    (the terminology's is-a): the answer names one disease, Y, the more specific, and X is
    only the class it belongs to (CRAFT-MD's grader, step 1: one diagnosis named is its
    name; docs/grading.md, *Three reading faults the paper policy found*). Y not a kind of X
    stays as :func:`_resolved` read it (after "possibly", another possible diagnosis)."""
    if found.category != "single":
        return found
    mentions, main = list(found.mentions), found.diagnosis
    for _ in range(len(mentions)):
        kind_of = next((m for m in mentions if m.role == "refinement"
                        and compare(m.text, main).kind == "narrower"), None)
        if kind_of is None:
            break
        mentions = [replace(m, role="main") if m is kind_of else m for m in mentions
                    if m.role != "main"]
        main = kind_of.text
    if main == found.diagnosis:
        return found
    return replace(found, diagnosis=main, mentions=tuple(mentions), statement=main)

