"""What a protocol is: its options, its roles, how a case becomes items, how an item is
played into a transcript, and the report tables it adds.

A protocol is registered by name (see :mod:`.registry`); the pytest layer, the reports and
the CLI know protocols only through this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.options import Option
from ..core.roles import OFFLINE, MakeAgent

if TYPE_CHECKING:
    # Annotations only: an installed protocol subclasses Protocol in every pytest run of its
    # environment, which must not pay for the pydantic models, the caller, the metrics and
    # the report's numpy.
    from ..core.case import Case
    from ..core.measures import EncounterMeasures
    from ..core.records import ResultRecord
    from ..core.transcript import ItemHeader, Transcript
    from ..grading.judging.rules import Policy
    from ..llm.caller import ModelCaller
    from ..report.tables import Table


@dataclass(frozen=True)
class RoleSpec:
    """One role of a protocol: the interface its agent implements and where its model is set.

    ``option`` names the option holding the role's model; None for the doctor and patient,
    whose models are axes of the items (``--agent-doctor``, ``--agent-patient``).
    """

    name: str
    interface: type
    option: str | None = None
    description: str = ""


@dataclass(frozen=True)
class Wording:
    """How a protocol's misses read in pytest's output (a triage protocol's "mistriage" and
    "no urgency", a management benchmark's "wrong plan")."""

    #: The item's answer was judged wrong.
    wrong: str = "misdiagnosis"
    #: The item ended without an answer.
    missing: str = "no diagnosis"


@dataclass(frozen=True)
class RunOptions:
    """The run-wide axes and the protocol's own option values, as resolved."""

    doctors: tuple[str, ...] = (OFFLINE,)
    patients: tuple[str, ...] = (OFFLINE,)
    turns: tuple[int, ...] = (20,)
    repeat: int = 1
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ItemSpec:
    """One item: a case under one set of conditions."""

    case: Case
    #: The item id's bracketed part (``dermatology-offline-t10``).
    label: str
    #: Each role's configured model.
    models: Mapping[str, str]
    sample: int = 0
    turn_budget: int = 0
    #: Every diagnosis of the case's file (the offline doctor's candidates).
    candidates: tuple[str, ...] = ()
    #: The protocol's own conditions (frozen), e.g. a bias or a CRAFT-MD experiment.
    variant: Any = None

    @property
    def doctor(self) -> str:
        """The doctor model."""
        return self.models["doctor"]

    @property
    def patient(self) -> str:
        """The patient model."""
        return self.models.get("patient", OFFLINE)


@dataclass(frozen=True)
class PlayContext:
    """What playing an item may use besides the item itself."""

    caller: ModelCaller
    #: The user's agents (the ``pytest_agentclinic_make_agent`` hook); None: built-in.
    make_agent: MakeAgent
    options: Mapping[str, Any] = field(default_factory=dict)
    #: How broader answers are graded (``--agent-grading-policy``): strict or paper.
    grading_policy: Policy = "strict"


class Protocol(ABC):
    """A benchmark protocol. Subclass, set the class attributes, implement :meth:`expand`
    and :meth:`play`, and register it (``pytest_agentclinic.api.register_protocol``).

    One instance serves one session, so it may keep state shared by its items (CRAFT-MD
    plays one conversation per case for all of the case's experiments).
    """

    #: The ``--agent-protocol`` value, and ``protocol`` in transcripts and records.
    name: ClassVar[str]
    #: The options of this protocol's conditions and role models.
    options: ClassVar[tuple[Option, ...]] = ()
    #: Its roles, the doctor first.
    roles: ClassVar[tuple[RoleSpec, ...]]
    #: The names of its own conditions (``ItemHeader.conditions``), for ``--agent-gate-on``.
    conditions: ClassVar[tuple[str, ...]] = ()
    #: How its misses read (the built-in protocols grade a diagnosis).
    wording: ClassVar[Wording] = Wording()

    @abstractmethod
    def expand(self, cases: Sequence[Case], run: RunOptions) -> Iterator[ItemSpec]:
        """The items of a case file's cases, in order."""

    @abstractmethod
    async def play(self, item: ItemSpec, ctx: PlayContext) -> Transcript:
        """Play one item into its transcript (outcome set; model failures as ``error``)."""

    def items_per_chain(self, options: Mapping[str, Any]) -> int:
        """How many items wait on one shared chain of model calls (1: every item makes its
        own calls). The runner keeps that many more items started per call slot, so items
        waiting on a chain do not leave the slots idle. A chain is shared by items of one
        case: above 1, xdist's load scheduling sends all items of a case to one worker."""
        del options
        return 1

    def header(self, item: ItemSpec) -> ItemHeader:
        """The item's header; also what an item that could not be played is recorded with."""
        from ..core.transcript import ItemHeader

        case = item.case
        return ItemHeader(protocol=self.name, case_id=case.id, dataset=case.dataset,
                          specialty=case.specialty, models=dict(item.models),
                          sample=item.sample, turn_budget=item.turn_budget)

    def expected(self, case: Case) -> str:
        """What the item is graded against, as its record and a failure show it (the case's
        diagnosis by default; a triage protocol's urgency from ``case.metadata``)."""
        return case.diagnosis

    def measures(self, case: Case, transcript: Transcript) -> EncounterMeasures | None:
        """The item's information-gathering measures (none by default: they assume a
        diagnostic interview; the built-in protocols return them)."""
        del case, transcript
        return None

    def tables(self, records: Sequence[ResultRecord], resamples: int) -> list[Table]:
        """The report tables this protocol adds for its records (none by default)."""
        del records, resamples
        return []

    def summary_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Settings of this protocol that ``summary.json`` records (its option values)."""
        return {opt.name: _plain(options.get(opt.name)) for opt in self.options}

    def role_models(self, run: RunOptions) -> dict[str, str]:
        """Each role's model(s), as the summary header shows them."""
        out = {}
        for role in self.roles:
            if role.option is None:
                models = run.doctors if role.name == "doctor" else run.patients
                out[role.name] = ", ".join(models)
            else:
                out[role.name] = str(run.options.get(role.option, OFFLINE))
        return out

    def models_of(self, run: RunOptions, doctor: str, patient: str) -> dict[str, str]:
        """The model of every role of one item."""
        return {role.name: (doctor if role.name == "doctor" else
                            patient if role.name == "patient" else
                            str(run.options.get(role.option or role.name, OFFLINE)))
                for role in self.roles}

    def agent(self, ctx: PlayContext, role: str, model: str, case: Case, bias: str,
              builtin: Callable[[], object]) -> Any:
        """The agent for ``role``: the user's (hook) or else the built-in, checked against
        the role's interface so a wrong return fails here, naming the role."""
        spec = next(r for r in self.roles if r.name == role)
        agent = ctx.make_agent(role, model, case, bias)
        if agent is None:
            agent = builtin()
        if not isinstance(agent, spec.interface):
            raise TypeError(f"the {role} agent {agent!r} does not implement "
                            f"{spec.interface.__name__} (protocol {self.name})")
        return agent


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def diagnostic_measures(case: Case, transcript: Transcript) -> EncounterMeasures | None:
    """The information-gathering measures of a diagnostic interview: what the built-in
    protocols' :meth:`Protocol.measures` return."""
    from ..metrics.gathering import for_encounter

    return for_encounter(case, transcript.utterances, outcome=transcript.outcome,
                         experiment=transcript.experiment)
