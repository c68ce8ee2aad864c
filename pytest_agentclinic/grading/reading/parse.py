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

from ..terminology import FILLER, GENERIC, content
from ..terms.concurrent import complication, finding
from ..terms.kinds import kind
from .companions import hedged_role, parenthesized_role, restating_role, slashed
from .context import cut_context
from .joins import (
    ADJECTIVE,
    ALIAS,
    ALTERNATIVE,
    ASIDE,
    CAUSE,
    COEXISTING,
    COEXISTING_NOTE,
    COMPANION,
    COMPLICATION,
    CONCURRENT,
    HEDGED,
    LEADING,
    OR,
    PAREN,
    REFINE,
    SEEN_ON,
    SPECIFIC,
    TAIL_ALIAS,
    WORD,
)
from .notes import is_note, without_notes
from .plans import plan_names_nothing
from .refusals import is_non_answer, is_refusal, named_before_refusal
from .statement import (
    DIFFERENTIAL_LABEL,
    DISJUNCTION,
    SENTENCE_END,
    bare_name,
    clean,
)
from .written_names import coordinate_end, only_qualifiers, whole_name_end

__all__ = ["Category", "Extraction", "Mention", "Role", "bare", "parse"]

Category = Literal["single", "multiple", "none"]
Role = Literal["main", "alias", "refinement", "concurrent", "listed", "cause", "alternative",
               "hedged", "offered", "parenthesized", "beside", "after", "complication",
               "suggested", "comorbid", "claimed"]


@dataclass(frozen=True)
class Mention:
    """A condition named in the answer and the part it plays there."""

    text: str
    role: Role


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
        return cut_context(_parentheticals(self.statement)[0])

    @property
    def label(self) -> str:
        """The extraction as the paper records it: the name, "multiple" or "none"."""
        return self.diagnosis if self.category == "single" else self.category


def _bare(phrase: str) -> str:
    """A phrase without hedges, articles and trailing punctuation."""
    phrase = SEEN_ON.sub("", LEADING.sub("", phrase.strip(" .,:;-\"'")))
    return phrase.strip(" .,:;-\"'")


def _is_condition_phrase(phrase: str) -> bool:
    # "(possibly viral)" qualifies the diagnosis; "(possibly lupus)" names another one; a
    # generic head alone ("disease", "syndrome") names none.
    # The written words, not the normalised tokens: those read a noun as its adjective
    # ("depression" as "depressive", "dysthymia" as "dysthymic"), and a noun alone is a name.
    words = [w for w in WORD.findall(phrase.lower()) if w not in FILLER]
    return (bool(content(phrase)) and not set(content(phrase)) <= GENERIC
            and not (len(words) == 1 and ADJECTIVE.match(words[0])))


def _parentheticals(text: str) -> tuple[str, list[str]]:
    """The text without its parentheses (innermost first) and their contents."""
    inner: list[str] = []
    while True:
        found = PAREN.search(text)
        if found is None:
            return re.sub(r"\s+", " ", text).strip(), inner
        inner.append((found.group(1) or found.group(2) or "").strip())
        text = text[: found.start()] + " " + text[found.end():]


def _split(text: str, role: Role) -> list[Mention]:
    """The phrase as one mention, or as alternatives when it offers several."""
    parts = [_bare(p) for p in ALTERNATIVE.split(text)]
    parts = [q for p in parts if p and _is_condition_phrase(p) for q in slashed(p)]
    if len(parts) > 1 and role != "alias":  # "(also known as X or Y)": names, not options
        return [Mention(p, "alternative") for p in parts]
    return [Mention(p, role) for p in parts]


def _classify_paren(inner: str) -> list[Mention]:
    """The mentions one parenthetical adds to the diagnosis it follows."""
    if not inner or not content(inner):
        return []
    cause = CAUSE.match(inner)
    if cause is not None:
        return _split(cut_context(inner[cause.end():]), "cause")
    for pattern, role in ((SPECIFIC, "refinement"), (OR, "offered"), (ALIAS, "alias"),
                          (HEDGED, "hedged"), (REFINE, "alternative")):
        found = pattern.match(inner)
        if found is not None:
            rest = inner[found.end():]
            if role in ("hedged", "alternative") and re.match(COMPANION, rest, re.I):
                # "(possibly with lung abscess)": read as after a comma ("X, possibly with
                # lung abscess"), what the disease may bring with it: one reader for both
                return _paren_companion(rest)
            return _split(cut_context(rest), role)  # type: ignore[arg-type]
    if ASIDE.match(inner) or only_qualifiers(inner):
        return []  # "(complete)", "(mild, bilateral)": how, not what
    # "(fifth disease or erythema infectiosum)": other names of the same condition, or
    # "(lupus)" after rosacea: another condition named beside it (see :mod:`.companions`).
    return [Mention(_bare(p), "parenthesized") for p in ALTERNATIVE.split(cut_context(inner))
            if _bare(p) and _is_condition_phrase(p)]


def _paren_companion(rest: str) -> list[Mention]:
    """A bracket's hedged companion joined by "with" or "complicated by": the role the same
    words take after a comma (:func:`_marker`)."""
    role, phrase = _marker(" " + rest)
    return _split(cut_context(phrase), role)


# "W mimicking T", "W masquerading as T": what W resembles, a second name beside W that the
# answer does not diagnose, as after "with features suggestive of" (docs/grading.md, round 4)
_MIMIC = re.compile(r"\s*,?\s*\b(?:mimicking|mimics|masquerading\s+as|simulating|imitating|"
                    r"resembling)\b\s*", re.I)


def _marker(tail: str) -> tuple[Role, str]:
    """The role the clause at the start of ``tail`` gives its phrase, and the phrase on."""
    mimic = _MIMIC.match(tail)
    if mimic is not None:
        return "suggested", tail[mimic.end():]
    alias = TAIL_ALIAS.match(tail)
    if alias is not None:  # ", formerly known as Churg-Strauss syndrome"
        return "alias", tail[alias.end():]
    cause = CAUSE.match(tail)
    if cause is not None:
        return "cause", tail[cause.end():]
    refine = REFINE.match(tail)
    if refine is not None:
        rest = tail[refine.end():]
        if CAUSE.match(" " + rest) or re.match(COMPANION, rest, re.I):
            return _marker(" " + rest)  # "possibly due to X", "possibly complicated by X"
        if SPECIFIC.match(tail) is not None:
            return "refinement", rest
        return ("hedged" if HEDGED.match(tail) is not None else "alternative"), rest
    complication = COMPLICATION.match(tail)
    if complication is not None:
        return "complication", tail[complication.end():]
    concurrent = CONCURRENT.match(tail)
    if concurrent is not None:
        disjunction = DISJUNCTION.match(tail, concurrent.end())
        if disjunction is not None:  # "X, or Y", "X; alternatively Y"
            return "alternative", tail[disjunction.end():]
        listed = concurrent.group().strip() in (",", ";")
        return ("listed" if listed else "concurrent"), tail[concurrent.end():]
    return "concurrent", tail


# An infection named by its agent ("Infection with herpes simplex virus", "W or infection
# with X"): the head word says what, the agent after "with" which (the sources name it
# "herpes simplex virus infection").
# Only the infection by itself: "diabetic foot infection with osteomyelitis" and "urinary
# tract infection with possible HHS" name a second condition after "with".
_INFECTION_END = re.compile(r"(?:^|[,;(/]|\b(?:or|and|vs\.?|versus|from|than)\b)\s*(?:(?:an?|the|"
                            r"acute|chronic|recurrent|primary|latent|active|disseminated|"
                            r"systemic|congenital)\s+)*(?:infections?|infestations?|"
                            r"co-?infection)$", re.I)


def _next_segment(text: str) -> tuple[str, str]:
    """The phrase up to the next clause marker, and the rest from that marker on."""
    start = len(text) - len(LEADING.sub("", text))  # a leading hedge is part of the phrase
    # a comma or "and" inside a name the sources write so is no clause marker
    start += whole_name_end(text[start:]) or coordinate_end(text[start:])
    cuts = [m.start() for pattern in (CAUSE, REFINE, _MIMIC)
            for m in [pattern.search(text, max(start, 1))] if m and m.end() > m.start()]
    # "Infection with X" is X's infection: "with" names the agent, not a second condition
    # (the first join that is not such a "with"; the scan stops there)
    join = next((m for m in CONCURRENT.finditer(text, max(start, 1))
                 if m.end() > m.start() and not (m.group().strip().lower() == "with"
                                                 and _INFECTION_END.search(text, 0, m.start()))),
                None)
    cuts += [join.start()] if join is not None else []
    cut = min(cuts) if cuts else len(text)
    return text[:cut], text[cut:]


def _tail_mentions(tail: str) -> list[Mention]:
    """Mentions from the clauses after the main diagnosis (causes, refinements, companions)."""
    out: list[Mention] = []
    previous = ""
    for _ in range(16):  # a bound, not a limit real answers reach
        if not tail.strip():
            break
        role, rest = _marker(tail)
        segment, rest = _next_segment(rest.lstrip())
        if not segment.strip() and rest == tail:
            break
        tail = rest
        if role in ("hedged", "alternative") and _FEATURES.fullmatch(previous.strip(" ,")):
            # "W with features suggestive of T": the features are W's, and T a second name
            # beside W, never a kind of it; only suggested, it is no concurrent diagnosis
            role = "suggested"
        previous = segment
        coexisting = COEXISTING.match(segment)
        if role in ("concurrent", "listed") and coexisting is not None:
            # "T, known hypertension": co-existing by the answer's own words
            role, segment = "comorbid", segment[coexisting.end():]
        out.extend(_split(segment, role))
    return out


_FEATURES = re.compile(r"(?:some\s+|several\s+|many\s+|clinical\s+|atypical\s+)?(?:features?|"
                       r"findings?|signs?|changes?|elements?|characteristics?)", re.I)


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
        cleaned = clean(sentence)
        name = _bare(cleaned)
        if not name:
            continue
        if plan_names_nothing(name) or (
                _CONSIDERED.match(name) or _ABOUT_THE_ANSWER.search(name) or not bare_name(name)
                or kind(name) != "condition" or not _is_condition_phrase(name)):
            # "Diagnosis: X. Differential diagnoses include Y and Z.": the answer is X; what
            # it considered after it is no second diagnosis (and never scores); nor is a plan
            # ("Recommend biopsy to confirm.")
            break
        coexisting = COEXISTING.match(cleaned)
        out.append(Mention(_bare(cleaned[coexisting.end():]), "comorbid")
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


def _explained(mentions: tuple[Mention, ...]) -> tuple[Mention, ...]:
    """A finding explained by its cause names the cause as the diagnosis: in "jaundice due to
    Gilbert syndrome" or "hypercalcemia secondary to hyperparathyroidism" the sign is what
    the patient shows and the cause what the doctor diagnoses (docs/grading.md, "Main and
    concurrent"); the finding stays beside it as a concurrent one."""
    if len(mentions) < 2 or mentions[0].role != "main":
        return mentions
    main, cause = mentions[0], mentions[1]
    # "chest pain, possibly pericarditis", "thunderclap headache (possible subarachnoid
    # hemorrhage)": the one disease the doctor suspects behind the sign is the answer
    suspected = cause.role == "hedged" and sum(
        m.role in ("hedged", "alternative", "offered") for m in mentions) == 1
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
    body, parens = _parentheticals(COEXISTING_NOTE.sub(r"comorbid \1", stmt))
    head, tail = _next_segment(cut_context(_bare(body)))
    mentions = [*_split(head, "main"), *_tail_mentions(tail)]
    for inner in parens:
        mentions.extend(_classify_paren(inner))
    mentions.extend(_after(text, stmt))
    # a note beside the diagnosis ("(left eye)", ", moderate severity") names no disease,
    # and is no part of the statement read as one name ("GPA, moderate severity")
    notes = [m.text for m in mentions if m.role != "main" and is_note(m.text)]
    mentions = [m for m in mentions if m.text not in notes]
    # (the statement's name up to where it explains: "T (formerly W) is the most likely ...")
    found = _categorise(stmt, cut_context(_bare(without_notes(body, notes))),
                        _explained(tuple(m for m in mentions if m.text)),
                        differential=_DIFFERENTIAL.search(text) is not None,
                        conditions_only=conditions_only)
    return replace(found, statement=without_notes(_bare(stmt), notes))


def bare(phrase: str) -> str:
    """A phrase without hedges, articles and trailing punctuation."""
    return _bare(phrase)
