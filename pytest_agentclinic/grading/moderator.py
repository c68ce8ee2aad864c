"""The offline moderator, optionally backed by an LLM moderator for undecided cases."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..core.case import Case
from ..core.roles import Judgement, Moderator
from ..core.transcript import Verdict
from .craftmd_grader import CraftMDGrader
from .matcher import match_diagnosis

VERSION = "offline-moderator-2"
#: Without a moderator model, an undecided answer counts as correct from this coverage up.
FALLBACK_COVERAGE = 2 / 3


@cache
def grader() -> CraftMDGrader:
    """The shared deterministic grader (its terminology table loads once per process)."""
    return CraftMDGrader()


@dataclass(frozen=True)
class OfflineDecision:
    """The deterministic verdict on a stated diagnosis; ``correct`` None when unsure."""

    correct: bool | None
    decided_by: str
    reason: str
    coverage: float


def decide(given: str, accepted: list[str]) -> OfflineDecision:
    """Match ``given`` against the accepted names with both deterministic tools.

    The matcher knows abbreviations and reads answers that contain the name; the grader knows
    ICD-10-CM synonyms and the hierarchy (broader counts, more specific does not). Correct
    when either is sure it is; wrong when the matcher finds no shared word or the grader is sure
    it is wrong and the matcher does not disagree; undecided otherwise.
    """
    match = match_diagnosis(given, accepted)
    if match.correct:
        return OfflineDecision(True, "offline-matcher", match.reason, 1.0)
    verdicts = [grader().grade_frq(given, name) for name in accepted]
    best = max(verdicts, key=lambda v: (v.verdict, v.sure))
    if best.verdict and best.sure:
        return OfflineDecision(True, "offline-grader", best.reason, 1.0)
    if match.correct is False or all(v.sure for v in verdicts):
        return OfflineDecision(False, "offline-grader", best.reason, match.coverage)
    return OfflineDecision(None, "offline-grader", f"{match.reason}; {best.reason}",
                           match.coverage)


class OfflineModerator:
    """Deterministic judgement; asks ``fallback`` (an LLM moderator) only when undecided."""

    model = "offline"
    prompt_version = VERSION

    def __init__(self, fallback: Moderator | None = None) -> None:
        self.fallback = fallback

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        """Decide deterministically; defer to the fallback model where that cannot."""
        decision = decide(diagnosis, case.accepted_diagnoses)
        if decision.correct is not None:
            return Judgement(Verdict(correct=decision.correct, decided_by=decision.decided_by,
                                     reason=decision.reason))
        if self.fallback is not None:
            return await self.fallback.judge(case, diagnosis, sample)
        correct = decision.coverage >= FALLBACK_COVERAGE
        return Judgement(Verdict(correct=correct, decided_by="offline (fallback)",
                                 reason=f"{decision.reason}; threshold {FALLBACK_COVERAGE:.0%}"))
