"""Grading of CRAFT-MD final answers: free response and multiple choice.

A thin seam between the protocol and the grader: the protocol only needs who decided, what
was extracted, and whether it is right.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .matcher import match_diagnosis
from .moderator import FALLBACK_COVERAGE

_FINAL = re.compile(r"final\s+diagnosis\s*[:\-]?\s*", re.I)
_LETTER = re.compile(r"^\W*\(?([A-Z])\)?(?:[).:\s]|$)")


@dataclass(frozen=True)
class Grade:
    """A graded answer; ``extracted`` is None when no diagnosis or choice could be read."""

    extracted: str | None
    correct: bool
    decided_by: str
    reason: str


def _answer_part(text: str) -> str:
    # The last "Final Diagnosis" is the one that counts.
    last = max(_FINAL.finditer(text), key=lambda m: m.start(), default=None)
    rest = text[last.end():] if last else text
    return rest.strip().strip("*").strip().splitlines()[0].strip(" .*") if rest.strip() else ""


def grade_frq(response: str, accepted: Sequence[str]) -> Grade:
    """Extract the final diagnosis and match it against the accepted names."""
    given = _answer_part(response)
    if not given:
        return Grade(None, False, "offline-grader", "no diagnosis in the answer")
    match = match_diagnosis(given, list(accepted))
    correct = match.correct if match.correct is not None else match.coverage >= FALLBACK_COVERAGE
    return Grade(given, correct, "offline-grader", match.reason)


def choice_of(response: str, options: Sequence[str]) -> int | None:
    """The index of the option a reply chose: by letter, else by the option's text."""
    answer = _answer_part(response)
    letter = _LETTER.match(answer)
    if letter and ord(letter.group(1)) - ord("A") < len(options):
        return ord(letter.group(1)) - ord("A")
    named = [i for i, o in enumerate(options) if o.lower() in answer.lower()]
    return max(named, key=lambda i: len(options[i])) if named else None


def grade_mcq(response: str, options: Sequence[str], truth: str) -> Grade:
    """Map the reply to an option and compare it with the correct one."""
    index = choice_of(response, options)
    if index is None:
        return Grade(None, False, "offline-mcq", "no option chosen")
    chosen = options[index]
    return Grade(chosen, chosen == truth, "offline-mcq", f"chose option {chr(65 + index)}")
