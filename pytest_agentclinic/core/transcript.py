"""Versioned records of an encounter: every utterance, its cost, and the verdict."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from .summable import Summable
from .versioned import Format

TRANSCRIPT_VERSION = 1
#: A run's ``transcripts/*.json`` (read by :mod:`pytest_agentclinic.runs.transcripts`).
TRANSCRIPT_FORMAT = Format("transcript", TRANSCRIPT_VERSION, unversioned=1)

#: The roles and utterance kinds the built-in protocols write. The vocabularies are open: a
#: protocol may add its own (a triage "nurse", a "handover" kind), and a record keeps any
#: non-empty name it was written with; its ``protocol`` says whose vocabulary it is.
KNOWN_ROLES = ("doctor", "patient", "measurement", "moderator", "summarizer", "system")
KNOWN_KINDS = ("question", "test_request", "test_result", "image_request", "image_result",
               "answer", "diagnosis", "judgement", "perception_request", "perception",
               "summary", "final_question", "final_answer")
#: A role or kind name: one of the above or a protocol's own (non-empty, no spaces).
Role = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]+$")]
Kind = Role
#: ``limit``: the encounter used more than its per-encounter budget (tokens or cost).
Outcome = Literal["correct", "incorrect", "no_diagnosis", "limit", "error"]
#: The conditions every item has, whatever its protocol (header fields; the patient's is its
#: model). A protocol's own conditions follow them, from ``ItemHeader.conditions``; readers
#: take both through :meth:`ItemHeader.condition`, so the reports treat them alike.
BUILTIN_CONDITIONS = ("patient", "bias", "turn_budget", "experiment", "answer_format")


class Usage(Summable, BaseModel):
    """Tokens, cost and cache use of one or more model calls (``a + b`` sums them)."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: What the calls cost this run: a cache hit costs nothing.
    cost_usd: float = 0.0
    cache_hits: int = 0
    latency_s: float = 0.0
    #: What the cache hits would have cost uncached (their recorded cost): the run's cost
    #: uncached is ``cost_usd + saved_usd``.
    saved_usd: float = 0.0


class Utterance(BaseModel):
    """One message of the encounter, as the speaking role produced it."""

    model_config = ConfigDict(frozen=True)

    turn: int
    role: Role
    kind: Kind
    text: str
    model: str
    #: The requested test's name or the stated diagnosis, parsed from ``text``.
    detail: str = ""
    #: Images delivered with this message (URLs or local paths), for vision models.
    images: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class Perception(BaseModel):
    """The patient's 1-10 ratings after the diagnosis; None where missing or out of range."""

    model_config = ConfigDict(frozen=True)

    confidence: int | None = None
    compliance: int | None = None
    consultation: int | None = None


class Verdict(BaseModel):
    """The moderator's decision and who made it."""

    model_config = ConfigDict(frozen=True)

    correct: bool
    decided_by: str
    reason: str = ""
    #: How the extracted diagnosis relates to the truth ("same", "synonym", "broader", ...)
    #: when the rules judged it; None when a model or a conftest's moderator decided alone.
    relation: str | None = None


class ItemHeader(BaseModel):
    """What identifies an item and the conditions it ran under; both the transcript and the
    result record are this header plus their own fields, so the two cannot drift apart."""

    #: The protocol that played the item (``agentclinic``, ``craftmd``, or a plugin's): its
    #: ``Protocol.name``. Required: a default would label a subclassed protocol's items as
    #: another's, and the report would drop its tables.
    protocol: Annotated[str, StringConstraints(min_length=1)]
    case_id: str
    dataset: str
    specialty: str
    models: dict[str, str]
    sample: int
    turn_budget: int
    #: CRAFT-MD conditions: vignette / multiturn / singleturn / summarized / examonly.
    experiment: str | None = None
    #: CRAFT-MD answer mode: mcq / mcq-many / frq.
    answer_format: str | None = None
    bias: str = "none"
    image_mode: str | None = None
    #: A protocol's own conditions (name -> value), e.g. a triage protocol's urgency scale:
    #: the reports treat each name as a condition like ``bias`` or ``turn_budget``.
    conditions: dict[str, str] = Field(default_factory=dict)
    #: The doctor turn that first wrote REQUEST IMAGES, if any.
    image_requested_turn: int | None = None
    perception: Perception | None = None
    #: Roles whose model visibly refused to play its bias.
    refusals: list[str] = Field(default_factory=list)
    error: str | None = None
    #: The stage (``turn 3: patient``, ``grading``...) an encounter cut off by
    #: --agent-encounter-timeout was in; what it had before is kept.
    timed_out_in: str | None = None
    #: Wall-clock start (epoch seconds) and length of the encounter.
    started_at: float = 0.0
    duration_s: float = 0.0

    def condition(self, name: str) -> str:
        """The item's value of condition ``name`` as the reports show it, a built-in one or
        its protocol's own (``-`` where the item has none)."""
        if name == "patient":
            return self.models.get("patient", "?")
        if name == "turn_budget":
            return str(self.turn_budget)
        if name in ("bias", "experiment", "answer_format"):
            value: str | None = getattr(self, name)
            return value or "-"
        return self.conditions.get(name, "-")

    def condition_values(self) -> dict[str, str]:
        """Every condition of the item by name: the built-in ones, then its protocol's own."""
        return {**{name: self.condition(name) for name in BUILTIN_CONDITIONS},
                **self.conditions}

    def header(self) -> dict[str, Any]:
        """The header's fields only (what a result record copies)."""
        values = self.__dict__  # pydantic keeps the fields here; 40,000 imports read them
        return {name: values[name] for name in _HEADER_FIELDS}


_HEADER_FIELDS = tuple(ItemHeader.model_fields)


class Transcript(ItemHeader):
    """A whole encounter: written to ``reports/<run>/transcripts/``."""

    # Its values are not kept in pydantic's process-wide table of parsed strings: a
    # transcript lives for one item, and the table (16,384 strings) kept each item's own
    # texts long after it, ~0.15 KB an item up to its bound.
    model_config = ConfigDict(cache_strings="keys")

    version: int = TRANSCRIPT_VERSION
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    utterances: list[Utterance] = Field(default_factory=list)
    diagnosis: str | None = None
    verdict: Verdict | None = None
    outcome: Outcome | None = None

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        return TRANSCRIPT_FORMAT.check(value)

    @property
    def turns_used(self) -> int:
        """Doctor inferences spent (the budgeted quantity)."""
        return sum(1 for u in self.utterances if u.role == "doctor")

    @property
    def tests_requested(self) -> list[str]:
        """The test names the doctor asked for, in order."""
        return [u.detail for u in self.utterances if u.kind == "test_request"]

    def usage_by_role(self) -> dict[str, Usage]:
        """Summed usage of each role's calls."""
        out: dict[str, Usage] = {}
        for u in self.utterances:
            out[u.role] = out.get(u.role, Usage()) + u.usage
        return out
