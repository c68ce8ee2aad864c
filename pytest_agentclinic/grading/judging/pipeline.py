"""The one grading pipeline of both protocols: extract, judge, decide, and say who decided.

AgentClinic's "DIAGNOSIS READY:" answer and CRAFT-MD's free-response answer go through the
same steps:

1. :func:`.extract.extract` finds the statement and :func:`.parse.parse` reads it: *single*
   (one main claim and the other names with their roles), *multiple* or *none*;
2. :class:`.relate.Related` relates each name to the truth and its accepted names (one
   terminology question per name), and finds another disease beside the main one and the
   case's other answer choices named;
3. :func:`.rules.decide` reads those facts through the table of docs/grading.md and says
   whether it is sure;
4. what the rules are unsure of goes to the moderator: the model given by
   ``--agent-moderator`` (or a conftest's), which sees only the extracted diagnosis and the
   truth. With no model the rules' best guess stands, marked ``offline (unsure)``.

Multiple and none score 0 in both protocols; a *none* answer ends with outcome
``no_diagnosis`` in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ...core.case import Case
from ...core.roles import Moderator
from ...core.transcript import Outcome, Usage, Verdict
from ..reading.extract import Category
from ..terms.concepts import terminology_loaded
from .craftmd_grader import CraftMDGrader
from .moderator import OfflineModerator
from .rules import OFFLINE, OFFLINE_UNSURE, Policy, grade_text

_GRADER = CraftMDGrader()
#: The characters of an answer that are graded. Grading runs on the event loop that plays
#: every encounter (~0.3-0.85 s of CPU per MB): a hostile multi-megabyte reply would stall
#: all of them. A diagnosis or a choice is stated long before this.
GRADED_CHARS = 65_536


@dataclass(frozen=True)
class Grade:
    """A graded answer: what was read, the verdict, and what asking a model cost."""

    category: Category
    #: The diagnosis (single), "multiple", or None when the answer names none.
    extracted: str | None
    verdict: Verdict
    usage: Usage = field(default_factory=Usage)

    @property
    def outcome(self) -> Outcome:
        """The item's outcome: ``correct``, ``incorrect`` or ``no_diagnosis``."""
        if self.category == "none":
            return "no_diagnosis"
        return "correct" if self.verdict.correct else "incorrect"


async def grade_answer(answer: str, case: Case, moderator: Moderator, sample: int,
                       policy: Policy | None = None, *,
                       diagnosis_asked: bool | None = None) -> Grade:
    """Grade a free-text final answer (either protocol) against ``case``. ``policy`` (how
    broader answers are graded) defaults to the offline moderator's, else ``strict``;
    ``diagnosis_asked`` is what the question asked (see :func:`.rules.grade_text`)."""
    chosen: Policy = policy or getattr(moderator, "policy", None) or "strict"
    answer = answer[:GRADED_CHARS]
    await terminology_loaded()  # the rules below read it synchronously
    extraction, decision = grade_text(answer, case.accepted_diagnoses, case.choices or (),
                                      chosen, diagnosis_asked=diagnosis_asked)
    if extraction.category != "single":
        label = "multiple" if extraction.category == "multiple" else None
        return Grade(extraction.category, label,
                     Verdict(correct=False, decided_by=OFFLINE, reason=decision.reason))
    name = extraction.diagnosis
    if decision.sure or isinstance(moderator, OfflineModerator):
        verdict = Verdict(correct=decision.correct,
                          decided_by=OFFLINE if decision.sure else OFFLINE_UNSURE,
                          reason=decision.reason, relation=decision.relation)
        return Grade("single", name, verdict)
    judgement = await moderator.judge(case, name, sample)
    verdict = judgement.verdict.model_copy(update={
        "reason": f"{judgement.verdict.reason} (the rules were unsure: {decision.reason})"})
    return Grade("single", name, verdict, judgement.usage)


def grade_choice(reply: str, options: Sequence[str], truth: str) -> Grade:
    """Grade a multiple-choice reply: the option it chose (letter, text, paraphrase; a
    refusal chooses none) against the correct option."""
    v = _GRADER.grade_mcq(reply[:GRADED_CHARS], options, truth)
    category: Category = "none" if v.category == "none" else "single"
    return Grade(category, None if category == "none" else v.extracted,
                 Verdict(correct=bool(v.verdict), decided_by=v.decided_by, reason=v.reason))
