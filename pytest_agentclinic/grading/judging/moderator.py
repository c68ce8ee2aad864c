"""The offline moderator: the grading rules alone, with no model to ask."""

from __future__ import annotations

from ...core.case import Case
from ...core.roles import Judgement
from ...core.transcript import Verdict
from ..reading.extract import extract
from .rules import OFFLINE, OFFLINE_UNSURE, Policy, asks_for_a_condition, decide

VERSION = "offline-moderator-4"


class OfflineModerator:
    """Judges by the rules of :mod:`.rules`; where they are unsure, their best guess stands
    (recorded as ``offline (unsure)``). No partial word overlap ever counts as correct."""

    model = OFFLINE
    prompt_version = VERSION

    def __init__(self, policy: Policy = "strict") -> None:
        #: How broader answers are graded (see :data:`.rules.Policy`).
        self.policy: Policy = policy

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        """The rules' verdict on ``diagnosis`` for ``case``."""
        extraction = extract(diagnosis, conditions_only=asks_for_a_condition(case))
        decision = decide(extraction, case.accepted_diagnoses, case.choices or (), self.policy)
        return Judgement(Verdict(correct=decision.correct,
                                 decided_by=OFFLINE if decision.sure else OFFLINE_UNSURE,
                                 reason=decision.reason, relation=decision.relation))
