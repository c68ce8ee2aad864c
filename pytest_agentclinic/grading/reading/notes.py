"""Notes a writer adds beside a diagnosis that name no disease (stage 1, for :mod:`.parse`).

Models annotate their answer: how severe, how long, which side or where ("moderate
severity", "(acute phase)", "(left eye)"), its status ("(working diagnosis)",
"(provisional)"), its code ("(ICD-10: N41.1)", ", ICD-10 code L40.0"). Read as mentions
beside the main diagnosis, such notes were a second diagnosis under ``strict`` (a disease
beside the main one), an item of a list ("X with Y, moderate severity": three items), or
hid a bare head noun from its guard rail. A note says nothing of *what* the disease is, so
the statement is read without it. Only notes whose every word is of this kind: "(left eye
glaucoma)" names a disease.
"""

from __future__ import annotations

import re

from ..terminology import tokens
from ..terms.concepts import default_terminology
from ..terms.kinds import INJURIES_AND_STATES
from ..terms.qualifiers import NEUTRAL_QUALIFIERS

__all__ = ["is_note", "without_code_brackets", "without_notes"]

#: Words of a note on the diagnosis: its status, urgency, severity, phase; not of a disease.
NOTE_WORDS = frozenset({"working", "provisional", "final", "diagnosis", "impression",
                        "presumptive", "tentative", "answer", "emergency", "urgent",
                        "emergent", "phase", "severity", "grade", "degree", "course",
                        # a problem list's status of each problem ("T, stable"; red team
                        # round 13): how it goes, not what it is
                        "stable", "improving", "worsening", "resolving", "unchanged",
                        "controlled", "uncontrolled", "well", "poorly",
                        # the main diagnosis's label ("T (leading diagnosis)"; red team round
                        # 14), as "(working diagnosis)" is
                        "leading", "principal", "preferred", "main"})
# A code of ICD-9/10/11 with its label ("ICD-10 code L40.0", "ICD-10: N41") or with its
# decimals alone ("N41.1"): models write them after the name. Not "B12" alone (a vitamin).
# SNOMED CT's concept ids (6 to 18 digits) with their label ("SNOMED CT: 9014002"): a code
# too (red team round 11).
# An ICD-11 code with its label: WHO's MMS stem codes are four characters, a chapter's digit
# or letter, a letter, a digit, a letter or digit ("ICD-11: 4A44.A1", "ICD-11 EA80"; red
# team round 13).
_CODE_TEXT = (r"icd[- ]?(?:9|10|11)?(?:[- ]?cm)?\s*(?:code)?\s*[:#=]?\s*"
              r"[a-z]\d{2}(?:\.[0-9a-z]{1,4})?|[a-z]\d{2}\.[0-9a-z]{1,4}"
              r"|icd[- ]?11(?:[- ]?mms)?\s*(?:code)?\s*[:#=]?\s*[0-9a-z][a-z]\d[0-9a-z]"
              r"(?:\.[0-9a-z]{1,2})?"
              r"|snomed(?:[- ]?ct)?\s*(?:code|id)?\s*[:#=]?\s*\d{6,18}")
_CODE = re.compile(_CODE_TEXT, re.I)
# A bracket of codes alone, several joined by ";" or "," ("(ICD-10: L40.0; SNOMED CT:
# 9014002)"): it names no disease, and its ";" ends no sentence of the answer.
_CODES_BRACKET = re.compile(rf"(?<!\s)\s*[(\[]\s*(?:{_CODE_TEXT})(?:\s*[;,]\s*(?:{_CODE_TEXT}))+"
                            rf"\s*[)\]]", re.I)


def without_code_brackets(text: str) -> str:
    """``text`` without its brackets of several codes ("(ICD-10: L40.0; SNOMED CT: ...)"),
    and each other bracket's notes joined by ";" written as brackets of their own."""
    return _NOTES_BRACKET.sub(_notes_apart, _CODES_BRACKET.sub("", text), count=NOTE_BRACKETS)


# A bracket of notes joined by ";" after a name ("Psoriasis (chronic; plaque type)",
# "Fatigue (non-specific symptom; further evaluation needed)"): its ";" is inside the
# bracket and ends no sentence of the answer; read as it stood, the name was cut at it
# ("Psoriasis (chronic", narrower than psoriasis). At most 200 characters and no bracket
# inside, so the scan is linear; the first NOTE_BRACKETS of them only, since a reply of
# thousands of brackets costs the reader more than as many semicolons do (1.3 s against
# 0.1 s of CPU at 64 KB: the hostile-reply guard's "bracketed notes with ';'").
NOTE_BRACKETS = 4
# A bracket against its word is no such note: ISCN's "t(15;17)", whose ";" has no space
# after it either ("t(9;22)(q34;q11)").
_NOTES_BRACKET = re.compile(r"(?<=\s)\(([^()\n;]{1,200};[ \t][^()\n]{1,200})\)")


def _notes_apart(match: re.Match[str]) -> str:
    """"(a; b)" as "(a) (b)": each note a bracket of its own."""
    notes = [n.strip() for n in match[1].split(";")]
    return " ".join(f"({n})" for n in notes if n)


# "(dx of exclusion)", "diagnosis of exclusion": the answer's status, made once the others
# were excluded; "; on warfarin", "on long-term steroids": what the patient takes (a
# problem list's "on X"), no second diagnosis; "on examination": where a finding was seen.
_STATUS = re.compile(r"(?:a\s+)?(?:dx|diagnosis)\s+of\s+exclusion"
                     r"|(?:currently\s+|already\s+|chronically\s+)?(?:on|taking|receiving)\s+"
                     r"(?!a\s+background\b)(?!an?\s+)[^\W\d_][\w -]{0,40}", re.I)


# DSM-5's specifiers of a depressive or bipolar disorder, which its "Coding and Recording
# Procedures" write after the name, separated by commas ("major depressive disorder, single
# episode, in full remission"; "bipolar I disorder, current or most recent episode manic,
# severe, with mixed features"): which episode and how it stands, not another disorder.
# Not "with catatonia", which DSM-5 also codes as a condition of its own.
_SPECIFIER = re.compile(
    r"(?:with\s+)?(?:(?:single|recurrent)\s+episode"
    r"|(?:current|most\s+recent)(?:\s+or\s+most\s+recent)?\s+episode"
    r"(?:\s+(?:manic|hypomanic|depressed|depressive|mixed|unspecified))?"
    r"|(?:in\s+)?(?:partial|full)\s+remission"
    r"|anxious\s+distress|mixed\s+features|rapid\s+cycling|melancholic\s+features"
    r"|atypical\s+features|(?:mood[- ](?:in)?congruent\s+)?psychotic\s+features"
    r"|peripartum\s+onset|seasonal\s+pattern)", re.I)


# What the answer says is still to be done or may follow, naming no disease: "complications"
# unnamed ("T with possible complications", "T with no complications": a complication is
# concurrent, and none is named), and the need of more evaluation before a firmer diagnosis
# ("T; further evaluation needed for a definitive diagnosis"), as CRAFT-MD's step 1 returns
# the main diagnosis beside either.
_PENDING = re.compile(
    r"(?:(?:no|possible|potential|possibly|any|some|other|further|associated|related|"
    r"current)\s+)*complications?"
    r"|(?:further|additional|more)\s+(?:clinical\s+)?(?:evaluation|investigations?|"
    r"information|work-?up|testing|tests|assessment)\s+(?:is\s+|are\s+)?(?:needed|required|"
    r"necessary|recommended|warranted)(?:\s+(?:for|to\s+(?:confirm|establish|make|reach))\s+"
    r"(?:an?\s+|the\s+)?(?:(?:specific|definitive|precise|accurate|final|exact|firm|"
    r"confirmed)\s+)?diagnosis)?", re.I)


# A reason of its own after a semicolon ("T; classic presentation", "T; typical
# findings"): why the answer holds, as the same words are in brackets ("(classic
# presentation)", :data:`.joins.ASIDE`) or after a dash (:mod:`.context`); no second name
# (red team round 19). "Classical" alone may name a kind, so a noun of the case must follow.
_REASON = re.compile(r"(?:(?:a|the)\s+)?(?:classic(?:al)?|typical|textbook|characteristic)\s+"
                     r"(?:clinical\s+)?(?:presentation|findings?|features?|picture|history|case|"
                     r"signs?|symptoms?|course)", re.I)


def is_note(text: str, *, places: bool = False) -> bool:
    """Whether a mention beside the diagnosis only notes its severity, course, side, status,
    DSM-5 specifier or code (:data:`.qualifiers.NEUTRAL_QUALIFIERS`, :data:`NOTE_WORDS`),
    naming no disease; with ``places``, or where (ICD-10-CM's site words: "(left eye)"). A
    place is kept in the reading, where it may narrow the name to the truth ("Psoriasis
    (scalp)"), and is no second disease."""
    if any(p.fullmatch(text.strip()) is not None for p in (_CODE, _STATUS, _SPECIFIER,
                                                            _PENDING, _REASON)):
        return True
    words = tokens(text)
    # a state like the puerperium is a second condition, though ICD-10-CM says "in" it
    sites = default_terminology().site_words - INJURIES_AND_STATES if places else frozenset()
    return bool(words) and all(w in NEUTRAL_QUALIFIERS or w in NOTE_WORDS or w in sites
                               for w in words)


def without_notes(stmt: str, notes: list[str]) -> str:
    """The statement without the notes that end it (", ICD-10 code L40.0")."""
    for note in reversed(notes):
        stmt = re.sub(rf"\s*[,;:\-\u2013\u2014]?\s*{re.escape(note)}\W*$", "", stmt)
    return stmt
