"""The beyond-accuracy measures of one encounter, as a result record carries them.

Computed by :mod:`pytest_agentclinic.metrics.gathering` (definitions there and in
``docs/beyond-accuracy.md``); defined here so the record, a core type, can hold them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .versioned import Format

MEASURES_VERSION = 1
#: A record's measures (read with the record: a migration of the record's format brings
#: its measures forward too).
MEASURES_FORMAT = Format("encounter measures", MEASURES_VERSION, unversioned=1)


class EncounterMeasures(BaseModel):
    """The beyond-accuracy measures of one encounter, as ``results.jsonl`` holds them."""

    model_config = ConfigDict(frozen=True)

    version: int = MEASURES_VERSION
    #: The elicitation method (``elicit-1``: see ``metrics/facts.py``).
    method: str
    facts: int
    facts_elicited: int
    key_facts: int
    key_facts_elicited: int
    questions: int
    repeated_questions: int
    redundant_questions: int
    tests_ordered: int
    #: Tests the measurement agent refused under ``--agent-test-budget`` (not in the spend).
    tests_refused: int = 0
    test_spend_usd: float
    tests_unpriced: list[str] = Field(default_factory=list)
    turns_to_diagnosis: int | None = None
    premature_closure: bool | None = None
    missed_closure: bool | None = None
    #: Index (into the case's fact list) of each elicited fact -> the turn that elicited it.
    elicited_at: dict[int, int] = Field(default_factory=dict)

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        return MEASURES_FORMAT.check(value)

    @property
    def fact_share(self) -> float | None:
        """Share of the case's facts elicited."""
        return self.facts_elicited / self.facts if self.facts else None

    @property
    def key_fact_share(self) -> float | None:
        """Share of the case's key facts elicited."""
        return self.key_facts_elicited / self.key_facts if self.key_facts else None
