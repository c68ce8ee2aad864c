"""The offline moderator, optionally backed by an LLM moderator for undecided cases."""

from __future__ import annotations

from ..agents.base import Judgement, Moderator
from ..cases.models import Case
from ..encounter.transcript import Verdict
from .matcher import match_diagnosis

VERSION = "offline-matcher-1"
#: Without a moderator model, an undecided answer counts as correct from this coverage up.
FALLBACK_COVERAGE = 2 / 3


class OfflineModerator:
    """Deterministic matching; asks ``fallback`` (an LLM moderator) only when undecided."""

    model = "offline"
    prompt_version = VERSION

    def __init__(self, fallback: Moderator | None = None) -> None:
        self.fallback = fallback

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        """Decide with the matcher; defer to the fallback model where it cannot."""
        match = match_diagnosis(diagnosis, case.accepted_diagnoses)
        if match.correct is not None:
            return Judgement(Verdict(correct=match.correct, decided_by="offline-matcher",
                                     reason=match.reason))
        if self.fallback is not None:
            return await self.fallback.judge(case, diagnosis, sample)
        correct = match.coverage >= FALLBACK_COVERAGE
        return Judgement(Verdict(correct=correct, decided_by="offline-matcher (fallback)",
                                 reason=f"{match.reason}; threshold {FALLBACK_COVERAGE:.0%}"))
