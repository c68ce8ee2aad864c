"""Answers that decline to name a diagnosis.

"Insufficient information", "I cannot provide a diagnosis", "further testing is needed", an
apology, a model speaking of itself ("as an AI"), or "a variety of conditions" name no
diagnosis. A diagnosis named before such words still counts ("Psoriasis; further testing is
needed"), unless the "name" is the refusal itself ("This question cannot be answered") or
speaks of the case, not a condition ("The symptoms could indicate many conditions").
"""

from __future__ import annotations

import re

from ..terminology import content

__all__ = ["is_non_answer", "is_refusal", "named_before_refusal", "names_an_option_only"]

_REFUSAL = re.compile(
    r"\b(?:insufficient|not\s+enough|inadequate|limited)\s+(?:information|data|details|clinical)"
    r"|\b(?:cannot|can\s*not|can't|unable\s+to|not\s+possible\s+to|impossible\s+to|difficult\s+to)"
    r"\s+(?:\w+\s+){0,3}?(?:provide|determine|make|give|establish|diagnose|identify|confirm|"
    r"ascertain|definitively|offer|say|be\s+made|be\s+determined|reach|specify|assess|tell|"
    r"conclude|answer|be\s+answered|be\s+established|be\s+narrowed|narrow)"
    # many conditions at once name none: "a variety of conditions", "several disorders"
    r"|\b(?:a\s+(?:number|variety|range|multitude)\s+of|several|many|various|numerous)\s+"
    r"(?:\w+\s+)?(?:conditions|diseases|disorders|causes|diagnoses|possibilities|etiologies)\b"
    r"|\bno\s+(?:definitive|specific|clear|final|certain|single|conclusive)?\s*diagnosis"
    r"|\bundetermined\b|\bunknown\s+(?:etiology|cause|diagnosis)|\bnot\s+(?:yet\s+)?determined"
    r"|\b(?:further|more|additional)\s+(?:information|history|details|evaluation|investigation|"
    r"testing|tests|questioning|examination|assessment|workup|work-up|data)\s+(?:(?:is|are|"
    r"would\s+be)\s+)?(?:needed|required|necessary)"
    r"|\b(?:symptoms|findings|presentation)\s+(?:are|is)\s+(?:not\s+specific|non-?specific)"
    r"|\bpending\s+(?:further|more)|\bunclear\b|\binconclusive\b|\bnot\s+a\s+medical\s+condition"
    # a model speaking of itself refuses
    r"|\bas\s+an\s+ai\b|\bai\s+language\s+model\b",
    re.I)
# An apology opens a refusal. Matched apart: a "^" among the alternatives of a search makes
# every search of the refusal pattern three times slower.
_APOLOGY = re.compile(r"\W*(?:(?:i'm|i\s+am)\s+sorry|(?:my\s+)?apologies|i\s+apologi[sz]e)\b",
                      re.I)
# A "name" that says it cannot be given.
_CANNOT = re.compile(r"\b(?:cannot|can\s*not|can't|unable\s+to|not\s+possible\s+to|impossible"
                     r"\s+to)\b", re.I)
# What a refusal speaks of, not a diagnosis: "the symptoms could indicate many conditions".
# Who speaks or is spoken to: the subject of a refusal ("I can't ..."), never a name.
_SPEAKERS = frozenset({"i", "we", "you", "it", "this"})
_ABOUT_THE_CASE = frozenset({"symptom", "symptoms", "sign", "signs", "finding", "findings",
                             "presentation", "picture", "information", "history", "patient",
                             "case", "question", "clinical"})


# A name that is none: "Unknown", "unclear", "not sure", "N/A".
_NON_ANSWER = re.compile(
    r"\W*(?:unknown|uncertain|unsure|not\s+sure|no\s+idea|n/?a|none|nil|idk|undetermined|"
    r"indeterminate|undiagnosed|unclear|pending|tbd|no\s+diagnosis|not\s+known)\W*", re.I)


# An option's letter alone, announced or not ("C", "(C)", "Option C", "The answer is C.",
# "The correct answer is (B)"): in a free response it names no diagnosis (the paper's step 1:
# "If there are no diagnoses present, return 'None'"; red team round 7)
_OPTION_ONLY = re.compile(
    r"\W*(?:(?:the\s+|my\s+)?(?:correct\s+|right\s+|best\s+|final\s+|most\s+likely\s+)?"
    r"(?:answer|option|choice)\s*(?:is|would\s+be|:)?\s*(?:option\s+|choice\s+)?)?"
    r"\(?[A-Ea-e]\)?\W*", re.I)


def names_an_option_only(text: str) -> bool:
    """Whether ``text`` gives only an option's letter ("The answer is C.")."""
    return _OPTION_ONLY.fullmatch(text) is not None


def is_non_answer(name: str) -> bool:
    """Whether ``name`` says that no diagnosis is given ("Unknown", "unclear")."""
    return _NON_ANSWER.fullmatch(name) is not None


def is_refusal(text: str) -> bool:
    """Whether ``text`` declines to name a diagnosis."""
    return _refusal_at(text) is not None


def named_before_refusal(stmt: str, main: str) -> bool:
    """Whether the diagnosis ``main`` comes before the refusal in ``stmt`` ("X; further
    testing is needed"). A refusal inside a name ("syncope of unknown etiology") leaves the
    name one."""
    refusal = _refusal_at(stmt)
    # "I can't diagnose T without an examination": the refusal's subject, the speaker, is
    # no name before it (red team round 13)
    return (refusal is not None and main.strip().lower() not in _SPEAKERS
            and -1 < stmt.find(main) < refusal
            and _CANNOT.search(main) is None and not set(content(main)) <= _ABOUT_THE_CASE)


def _refusal_at(text: str) -> int | None:
    """Where ``text`` starts refusing, or None when it does not."""
    if _APOLOGY.match(text):
        return 0
    found = _REFUSAL.search(text)
    return None if found is None else found.start()
