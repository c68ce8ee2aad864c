"""The versioned result record: one line of ``results.jsonl`` per item."""

from __future__ import annotations

from pydantic import Field, field_validator

from .measures import EncounterMeasures
from .transcript import ItemHeader, Outcome, Transcript, Usage
from .versioned import Format

RESULT_VERSION = 1
#: results.jsonl's lines (read by :mod:`pytest_agentclinic.runs.results`).
RESULT_FORMAT = Format("result record", RESULT_VERSION, unversioned=1)


class ResultRecord(ItemHeader):
    """Everything the reports need about one item, JSON-able so xdist workers can send it.

    The item's header comes from its transcript as it is (see :meth:`from_transcript`);
    the fields below are the run's and the verdict's.
    """

    version: int = RESULT_VERSION
    run: str
    nodeid: str
    outcome: Outcome
    expected: str
    given: str | None
    decided_by: str | None = None
    #: How the extracted diagnosis relates to the truth, when the rules judged it.
    relation: str | None = None
    turns_used: int
    tests_requested: list[str] = Field(default_factory=list)
    usage: dict[str, Usage] = Field(default_factory=dict)
    duration_s: float
    transcript: str | None = None
    case_file: str | None = None
    #: The case's difficulty label, when its file gives one.
    difficulty: str | None = None
    #: model -> what its ``--agent-api-base`` server said it serves (``/v1/models`` id and
    #: any ``system_fingerprint``): a name alone does not tell which weights answered.
    served: dict[str, str] = Field(default_factory=dict)
    #: Information gathering and test spend (its own ``version``); None for errors and for
    #: CRAFT-MD items other than multiturn.
    measures: EncounterMeasures | None = None

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        # A newer writer's records may mean something else field by field: refuse them (an
        # older one is migrated by the reader, RESULT_FORMAT.upgrade, before it gets here).
        return RESULT_FORMAT.check(value)

    @property
    def doctor(self) -> str:
        """The doctor model."""
        return self.models.get("doctor", "?")

    @classmethod
    def from_transcript(cls, t: Transcript, *, run: str, nodeid: str, expected: str,
                        transcript_path: str | None, case_file: str | None,
                        difficulty: str | None = None,
                        measures: EncounterMeasures | None = None) -> ResultRecord:
        """The record of a finished item, whoever built its transcript (a pytest run,
        ``play``, an import): the one place a record is made from a transcript."""
        return cls(**t.header(), run=run, nodeid=nodeid, outcome=t.outcome or "error",
                   expected=expected, given=t.diagnosis,
                   decided_by=t.verdict.decided_by if t.verdict else None,
                   relation=t.verdict.relation if t.verdict else None,
                   turns_used=t.turns_used, tests_requested=t.tests_requested,
                   usage=t.usage_by_role(), transcript=transcript_path, case_file=case_file,
                   difficulty=difficulty, measures=measures)
