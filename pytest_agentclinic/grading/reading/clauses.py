"""Stage 1 of the grader (read), the statement's clauses: the names a diagnostic statement
gives and the part each plays, by the join before it ("with", "due to", "possibly", a comma,
a bracket). :mod:`.parse` reads the statement with these and categorises it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..terminology import FILLER, GENERIC, content
from ..terms.concepts import default_terminology
from ..terms.concurrent import finding
from ..terms.readings import expansions
from .companions import slashed
from .context import cut_context
from .joins import (
    ADJECTIVE,
    ALIAS,
    ALTERNATIVE,
    ASIDE,
    CAUSE,
    COEXISTING,
    COMPANION,
    COMPLICATION,
    CONCURRENT,
    EXAMPLE,
    HEDGED,
    LEADING,
    LIKELY,
    OR,
    PAREN,
    REFINE,
    SEEN_ON,
    SPECIFIC,
    TAIL_ALIAS,
    WORD,
)
from .notes import is_note
from .statement import DISJUNCTION
from .written_names import coordinate_end, only_qualifiers, whole_name_end

__all__ = ["Mention", "Role", "bare", "classify_paren", "findings_after_colon",
           "is_condition_phrase", "next_segment", "parentheticals", "split", "tail_mentions"]

Role = Literal["main", "alias", "refinement", "likely", "concurrent", "listed", "cause",
               "alternative",
               "hedged", "offered", "parenthesized", "beside", "after", "complication",
               "suggested", "comorbid", "claimed"]


@dataclass(frozen=True)
class Mention:
    """A condition named in the answer and the part it plays there."""

    text: str
    role: Role


def bare(phrase: str) -> str:
    """A phrase without hedges, articles and trailing punctuation."""
    phrase = SEEN_ON.sub("", LEADING.sub("", phrase.strip(" .,:;-\"'")))
    return phrase.strip(" .,:;-\"'")


def is_condition_phrase(phrase: str) -> bool:
    # "(possibly viral)" qualifies the diagnosis; "(possibly lupus)" names another one; a
    # generic head alone ("disease", "syndrome") names none.
    # The written words, not the normalised tokens: those read a noun as its adjective
    # ("depression" as "depressive", "dysthymia" as "dysthymic"), and a noun alone is a name.
    # (Letters in capitals the sources list as an abbreviation have no adjective's ending:
    # "OIC", "WED" are initials; "VOMITING" in an answer all in capitals is a word.)
    words = [w for w in WORD.findall(phrase) if w.lower() not in FILLER]
    return (bool(content(phrase)) and not set(content(phrase)) <= GENERIC
            and not (len(words) == 1 and not _initials(words[0])
                     and ADJECTIVE.match(words[0].lower())))


def _initials(word: str) -> bool:
    return _CAPITALS.fullmatch(word) is not None and bool(expansions(word))


#: A word written in capitals, as an initialism is ("OIC", "ARVD"; "SSc" is no adjective
#: either, but ends in none of the adjectives' endings).
_CAPITALS = re.compile(r"[A-Z][A-Z0-9-]+")


def parentheticals(text: str) -> tuple[str, list[str]]:
    """The text without its parentheses (innermost first) and their contents."""
    inner: list[str] = []
    while True:
        found = PAREN.search(text)
        if found is None:
            return re.sub(r"\s+", " ", text).strip(), inner
        inner.append((found.group(1) or found.group(2) or "").strip())
        text = text[: found.start()] + " " + text[found.end():]


# A word in "-ing" alone as the answer's name is a noun ("Drowning", "Stuttering"), not a
# participle that qualifies a name beside it ("(possibly ongoing)"), where the terminology
# knows a condition by it (not "splitting", a defense mechanism; red team round 16).
_GERUND = re.compile(r"[A-Za-z]{3,30}ing")


def _named(phrase: str) -> bool:
    """Whether a word in "-ing" alone names a condition the terminology knows."""
    return _GERUND.fullmatch(phrase) is not None and default_terminology().known(phrase)


def split(text: str, role: Role) -> list[Mention]:
    """The phrase as one mention, or as alternatives when it offers several."""
    parts = [bare(p) for p in ALTERNATIVE.split(text)]
    parts = [q for p in parts if p and (is_condition_phrase(p) or (role == "main" and _named(p)))
             for q in slashed(p)]
    if len(parts) > 1 and role != "alias":  # "(also known as X or Y)": names, not options
        return [Mention(p, "alternative") for p in parts]
    return [Mention(p, role) for p in parts]


def classify_paren(inner: str) -> list[Mention]:
    """The mentions one parenthetical adds to the diagnosis it follows."""
    if not inner or not content(inner):
        return []
    cause = CAUSE.match(inner)
    if cause is not None:
        return split(cut_context(inner[cause.end():]), "cause")
    for pattern, role in ((SPECIFIC, "refinement"), (OR, "offered"), (ALIAS, "alias"),
                          (HEDGED, "hedged"), (EXAMPLE, "hedged"), (REFINE, "alternative")):
        found = pattern.match(inner)
        if found is not None:
            rest = inner[found.end():]
            if pattern is SPECIFIC and LIKELY.match(inner):
                role = "likely"  # "(likely T)": a hedge, not a claim (joins.LIKELY)
            if pattern is EXAMPLE and "," in rest:
                # "(e.g., A, B, C)": several examples, several possible diagnoses
                return [Mention(bare(p), "alternative") for p in _EXAMPLES.split(rest)
                        if bare(p) and is_condition_phrase(p)]
            if role in ("hedged", "alternative") and re.match(COMPANION, rest, re.I):
                # "(possibly with lung abscess)": read as after a comma ("X, possibly with
                # lung abscess"), what the disease may bring with it: one reader for both
                return _paren_companion(rest)
            return split(cut_context(rest), role)  # type: ignore[arg-type]
    if COMPLICATION.match(inner) is not None:
        # "T (complicated by sepsis)": the complication the answer states, read as after a
        # comma ("T, complicated by sepsis"): one reader for both (red team round 10)
        return _paren_companion(inner)
    if ASIDE.match(inner) or only_qualifiers(inner):
        return []  # "(complete)", "(mild, bilateral)": how, not what
    # "(fifth disease or erythema infectiosum)": other names of the same condition, or
    # "(lupus)" after rosacea: another condition named beside it (see :mod:`.companions`).
    return [Mention(bare(p), "parenthesized") for p in ALTERNATIVE.split(cut_context(inner))
            if bare(p) and is_condition_phrase(p)]


_EXAMPLES = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", re.I)


def _paren_companion(rest: str) -> list[Mention]:
    """A bracket's hedged companion joined by "with" or "complicated by": the role the same
    words take after a comma (:func:`_marker`)."""
    role, phrase = _marker(" " + rest)
    return split(cut_context(phrase), role)


# "W mimicking T", "W masquerading as T": what W resembles, a second name beside W that the
# answer does not diagnose, as after "with features suggestive of" (docs/grading.md, round 4)
_MIMIC = re.compile(r"\s*,?\s*\b(?:mimicking|mimics|masquerading\s+as|simulating|imitating|"
                    r"resembling)\b\s*", re.I)


# A name set against the main one by a contrast ("T, but W is more likely", "T, yet W"):
# another possible diagnosis, whatever W's kind, not a condition beside T. What the main
# disease brings or lacks after "but" stays its own ("T, but with secondary infection",
# "T, but no abscess").
# A clause about the writer or the answer ("I'm sorry, but as an AI I cannot ...") names no
# diagnosis after "but".
_CONTRAST = re.compile(r"\s*[,;]?\s*\b(?:but|yet)\s+(?!(?:with|without|no|not|complicated|"
                       r"also|mild|moderate|severe|early|atypical|as|i|i'm|we|you|it|this|"
                       r"that|there|he|she|they|the\s+patient)\b)", re.I)


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
            return ("likely" if LIKELY.match(tail) else "refinement"), rest
        hedged = HEDGED.match(tail) or EXAMPLE.match(tail)  # "X, e.g. Y": as "possibly Y"
        return ("hedged" if hedged is not None else "alternative"), rest
    complication = COMPLICATION.match(tail)
    if complication is not None:
        return "complication", tail[complication.end():]
    contrast = _CONTRAST.match(tail)
    if contrast is not None:  # "T, but W is more likely": W set against T, not beside it
        return "alternative", tail[contrast.end():]
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


def next_segment(text: str) -> tuple[str, str]:
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


def tail_mentions(tail: str) -> list[Mention]:
    """Mentions from the clauses after the main diagnosis (causes, refinements, companions)."""
    out: list[Mention] = []
    previous = ""
    for _ in range(16):  # a bound, not a limit real answers reach
        if not tail.strip():
            break
        role, rest = _marker(tail)
        segment, rest = next_segment(rest.lstrip())
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
        out.extend(split(segment, role))
    return out


_FEATURES = re.compile(r"(?:some\s+|several\s+|many\s+|clinical\s+|atypical\s+)?(?:features?|"
                       r"findings?|signs?|changes?|elements?|characteristics?)", re.I)


# "T: fever, rash, lymphadenopathy": the name, a colon, then what the patient shows
_COLON_LIST = re.compile(r"^([^:\n]{2,120}?)\s*:\s+(?=\S)")
_ITEMS = re.compile(r"\s*[,;]\s*(?:and\s+)?|\s+and\s+", re.I)


def findings_after_colon(body: str) -> str:
    """``body`` with a colon after the name read as "with" when only findings follow it:
    "T: fever, rash, lymphadenopathy" is "T with fever, rash, lymphadenopathy", the findings
    concurrent beside the main diagnosis (CRAFT-MD's grader, step 1; docs/grading.md, *Main
    and concurrent*; red team round 10). A disease after the colon ("T: W") is read as
    before."""
    found = _COLON_LIST.match(body)
    # a label before the colon ("Final: T", "Answer: T") is no name
    if found is None or is_note(found.group(1)) or not is_condition_phrase(found.group(1)):
        return body
    rest = body[found.end():]
    items = [bare(item) for item in _ITEMS.split(rest.rstrip(" ."))]
    if not items or not all(item and finding(item) for item in items):
        return body
    return f"{found.group(1)} with {rest}"
