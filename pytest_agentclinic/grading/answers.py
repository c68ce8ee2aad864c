"""Grading of CRAFT-MD final answers through the shared grader, with an optional LLM fallback.

A thin seam between the protocol and :mod:`.craftmd_grader`: the protocol needs what was
extracted, whether it is right, and who decided.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from .craftmd_grader import Verdict
from .moderator import grader

#: Asked about an unsure free-response verdict: (extracted diagnosis) -> (correct, who, why),
#: or None to keep the offline verdict.
Fallback = Callable[[str], Awaitable["tuple[bool, str, str] | None"]]


@dataclass(frozen=True)
class Grade:
    """A graded answer; ``extracted`` is None when no diagnosis or choice could be read."""

    extracted: str | None
    correct: bool
    decided_by: str
    reason: str


def _grade(v: Verdict) -> Grade:
    extracted = None if v.category == "none" else v.extracted
    return Grade(extracted, bool(v.verdict), v.decided_by, v.reason)


async def grade_frq(response: str, accepted: Sequence[str],
                    fallback: Fallback | None = None) -> Grade:
    """Extract the diagnosis (single / multiple / none) and judge it against each accepted
    name; an unsure verdict goes to ``fallback`` when one is configured."""
    verdicts = [grader().grade_frq(response, name) for name in accepted]
    best = max(verdicts, key=lambda v: (v.verdict, v.sure))
    if not best.sure and fallback is not None and best.category == "single":
        asked = await fallback(best.extracted)
        if asked is not None:
            correct, who, why = asked
            return Grade(best.extracted, correct, who, why)
    return _grade(best)


def grade_mcq(response: str, options: Sequence[str], truth: str) -> Grade:
    """Map the reply to the option it chose (letter, text, paraphrase; a refusal chooses
    nothing) and compare it with the correct option."""
    return _grade(grader().grade_mcq(response, options, truth))
