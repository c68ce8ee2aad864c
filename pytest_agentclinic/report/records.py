"""The versioned result record: one line of ``results.jsonl`` per item."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..encounter.transcript import Outcome, Perception, Transcript, Usage

RESULT_VERSION = 1


class ResultRecord(BaseModel):
    """Everything the reports need about one item, JSON-able so xdist workers can send it."""

    version: int = RESULT_VERSION
    run: str
    nodeid: str
    protocol: Literal["agentclinic", "craftmd"] = "agentclinic"
    case_id: str
    dataset: str
    specialty: str
    models: dict[str, str]
    sample: int
    turn_budget: int
    bias: str = "none"
    #: CRAFT-MD conditions: vignette / multiturn / singleturn / summarized / examonly.
    experiment: str | None = None
    #: CRAFT-MD answer mode: mcq / mcq-many / frq.
    answer_format: str | None = None
    image_mode: str | None = None
    image_requested_turn: int | None = None
    perception: Perception | None = None
    refusals: list[str] = Field(default_factory=list)
    outcome: Outcome
    expected: str
    given: str | None
    decided_by: str | None = None
    turns_used: int
    tests_requested: list[str] = Field(default_factory=list)
    usage: dict[str, Usage] = Field(default_factory=dict)
    #: Wall-clock start (epoch seconds) and length of the encounter.
    started_at: float = 0.0
    duration_s: float
    error: str | None = None
    transcript: str | None = None
    case_file: str | None = None
    #: The case's difficulty label, when its file gives one.
    difficulty: str | None = None
    #: model -> what its ``--agent-api-base`` server said it serves (``/v1/models`` id and
    #: any ``system_fingerprint``): a name alone does not tell which weights answered.
    served: dict[str, str] = Field(default_factory=dict)

    @property
    def doctor(self) -> str:
        """The doctor model."""
        return self.models.get("doctor", "?")

    @classmethod
    def from_transcript(cls, t: Transcript, *, run: str, nodeid: str, expected: str,
                        transcript_path: str | None, case_file: str | None,
                        difficulty: str | None = None) -> ResultRecord:
        """Build the record of a finished encounter."""
        protocol: Literal["agentclinic", "craftmd"] = (
            "craftmd" if t.protocol == "craftmd" else "agentclinic")
        return cls(run=run, nodeid=nodeid, protocol=protocol, case_id=t.case_id,
                   experiment=t.experiment, answer_format=t.answer_format,
                   dataset=t.dataset, specialty=t.specialty, models=t.models, sample=t.sample,
                   turn_budget=t.turn_budget, bias=t.bias, image_mode=t.image_mode,
                   image_requested_turn=t.image_requested_turn, perception=t.perception,
                   refusals=t.refusals, outcome=t.outcome or "error", expected=expected,
                   given=t.diagnosis, decided_by=t.verdict.decided_by if t.verdict else None,
                   turns_used=t.turns_used, tests_requested=t.tests_requested,
                   usage=t.usage_by_role(), started_at=t.started_at, duration_s=t.duration_s,
                   error=t.error, transcript=transcript_path, case_file=case_file,
                   difficulty=difficulty)
