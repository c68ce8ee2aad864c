"""The AgentClinic protocol: a budgeted doctor, a patient, a measurement agent, a moderator.

Items: doctor model x patient model x bias x image mode (image cases only) x turn budget x
repeat. An axis appears in the item's id only when it has several values, so ids stay short.
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..agents.bias_behaviour import DEFAULT_BELIEF, Side
from ..agents.biases import bias_prompt, bias_prompt_version
from ..agents.distractors import pick_distractor
from ..agents.images import reference
from ..agents.llm_agents import LLMDoctor, LLMMeasurement, LLMPatient
from ..agents.offline_doctor import OfflineDoctor
from ..agents.offline_measurement import OfflineMeasurement
from ..agents.offline_patient import OfflinePatient
from ..agents.refusal import is_refusal
from ..agents.spend_budget import BudgetedMeasurement
from ..core.case import Case
from ..core.measures import EncounterMeasures
from ..core.options import Option
from ..core.roles import OFFLINE, Agent, Moderator, Reply, TurnView
from ..core.transcript import ItemHeader, Kind, Role, Transcript, Utterance
from ..llm.errors import FatalLLMError, LLMError
from . import perception
from .base import ItemSpec, PlayContext, Protocol, RoleSpec, RunOptions, diagnostic_measures
from .builtin_options import AGENTCLINIC_OPTIONS
from .runner import settled, stage, track

if TYPE_CHECKING:  # the report's tables (and numpy) load when a report asks for them
    from ..core.records import ResultRecord
    from ..llm.caller import ModelCaller
    from ..report.tables import Table

if TYPE_CHECKING:
    from ..grading.judging.rules import Policy

_TEST = re.compile(r"request\s+tests?\s*[:\-]\s*(.+)", re.I)
_IMAGES = re.compile(r"request\s+images?\b", re.I)


@dataclass(frozen=True)
class Cast:
    """The four agents of one encounter."""

    doctor: Agent
    patient: Agent
    measurement: Agent
    moderator: Moderator
    #: How broader answers are graded (``--agent-grading-policy``).
    policy: Policy = "strict"

    @property
    def models(self) -> dict[str, str]:
        """Each role's model name."""
        return {"doctor": self.doctor.model, "patient": self.patient.model,
                "measurement": self.measurement.model, "moderator": self.moderator.model}

    @property
    def prompt_versions(self) -> dict[str, str]:
        """Each role's prompt (or script) version."""
        return {"doctor": self.doctor.prompt_version, "patient": self.patient.prompt_version,
                "measurement": self.measurement.prompt_version,
                "moderator": self.moderator.prompt_version}


def _say(t: Transcript, turn: int, role: Role, kind: Kind, reply: Reply, model: str,
         detail: str = "") -> None:
    t.utterances.append(Utterance(turn=turn, role=role, kind=kind, text=reply.text, model=model,
                                  detail=detail, usage=reply.usage))


def _deliver_images(t: Transcript, case: Case, turn: int) -> str:
    """Answer REQUEST IMAGES: attach the case's images (request mode) and note the turn."""
    if t.image_requested_turn is None:
        t.image_requested_turn = turn
    refs: list[str]
    if not case.images:
        text, refs = "RESULTS: no images are available for this patient.", []
    elif t.image_mode == "initial":
        text, refs = "RESULTS: the images were given at the start of the consultation.", []
    else:
        text, refs = "RESULTS: the requested images are attached.", [reference(i) for i in
                                                                      case.images]
    t.utterances.append(Utterance(turn=turn, role="measurement", kind="image_result", text=text,
                                  model="harness", images=refs))
    return text


async def _dialogue(t: Transcript, case: Case, cast: Cast, budget: int, sample: int) -> None:
    # The grader is imported where it is used: collecting or reporting a run never does.
    from ..grading.reading.markers import after_ready

    incoming = ""
    for turn in range(1, budget + 1):
        view = TurnView(case, tuple(t.utterances), incoming, budget - turn + 1, budget, sample)
        stage(f"turn {turn}: doctor")
        reply = await cast.doctor.respond(view)
        final = after_ready(reply.text)
        if final is not None:
            stated = final.strip().splitlines()[0].strip(" .*\"'") if final.strip() else ""
            _say(t, turn, "doctor", "diagnosis", reply, cast.doctor.model, stated)
            return
        if _IMAGES.search(reply.text):
            _say(t, turn, "doctor", "image_request", reply, cast.doctor.model)
            incoming = _deliver_images(t, case, turn)
            continue
        test = _TEST.search(reply.text)
        kind: Kind = "test_request" if test else "question"
        detail = test.group(1).strip().splitlines()[0].strip(" .*") if test else ""
        _say(t, turn, "doctor", kind, reply, cast.doctor.model, detail)
        view = TurnView(case, tuple(t.utterances), reply.text, budget - turn, budget, sample)
        stage(f"turn {turn}: {'measurement' if test else 'patient'}")
        if test:
            answer = await cast.measurement.respond(view)
            _say(t, turn, "measurement", "test_result", answer, cast.measurement.model)
        else:
            answer = await cast.patient.respond(view)
            _say(t, turn, "patient", "answer", answer, cast.patient.model)
        incoming = answer.text


async def _judge(t: Transcript, case: Case, cast: Cast, answer: str, sample: int) -> None:
    """Grade the doctor's final answer through the pipeline both protocols share."""
    from ..grading.judging.pipeline import grade_answer

    stage("grading")
    grade = await grade_answer(answer, case, cast.moderator, sample, cast.policy)
    t.diagnosis, t.verdict, t.outcome = grade.extracted, grade.verdict, grade.outcome
    t.utterances.append(Utterance(
        turn=t.turns_used, role="moderator", kind="judgement", text=grade.verdict.reason,
        model=grade.verdict.decided_by, detail=grade.outcome, usage=grade.usage))


async def _perception(t: Transcript, case: Case, cast: Cast, stated: str,
                      sample: int) -> None:
    """Ask the patient its three ratings of the doctor once the diagnosis is given (as the
    doctor stated it: the patient heard the words, not the grader's reading of them)."""
    stage("perception")
    ask = perception.question(stated)
    t.utterances.append(Utterance(turn=t.turns_used, role="system", kind="perception_request",
                                  text=ask, model="harness"))
    view = TurnView(case, tuple(t.utterances), ask, 0, t.turn_budget, sample)
    try:
        reply = await cast.patient.respond(view)
    except FatalLLMError:
        raise
    except LLMError as exc:
        # The verdict is already decided: a failed rating call loses the ratings only.
        t.utterances.append(Utterance(turn=t.turns_used, role="system", kind="perception",
                                      text=f"no ratings: {type(exc).__name__}: {exc}",
                                      model="harness"))
        return
    _say(t, t.turns_used, "patient", "perception", reply, cast.patient.model)
    t.perception = perception.parse(reply.text)


async def run_encounter(case: Case, cast: Cast, *, budget: int, sample: int,
                        bias: str = "none", image_mode: str | None = None,
                        ask_perception: bool = True, protocol: str) -> Transcript:
    """Play one whole encounter, judge it, and ask the patient's perception.

    Model failures end the encounter with outcome ``error`` (never a wrong diagnosis);
    a :class:`FatalLLMError` is recorded and re-raised so the session can stop. ``protocol``
    labels the transcript: the playing protocol's name (a subclass's own).
    """
    t = Transcript(protocol=protocol, case_id=case.id, dataset=case.dataset,
                   specialty=case.specialty, models=cast.models, sample=sample,
                   turn_budget=budget, bias=bias,
                   image_mode=image_mode if case.images else None,
                   prompt_versions=cast.prompt_versions, started_at=time.time())
    track(t)  # a timeout keeps what the encounter had
    with settled(t):
        await _dialogue(t, case, cast, budget, sample)
        final = next((u for u in t.utterances if u.kind == "diagnosis"), None)
        if final is None:
            t.outcome = "no_diagnosis"
        else:
            await _judge(t, case, cast, final.text, sample)
            if ask_perception and t.outcome != "no_diagnosis":
                await _perception(t, case, cast, final.detail or t.diagnosis or "", sample)
    t.refusals = _refusals(t)
    return t


def _refusals(t: Transcript) -> list[str]:
    """The biased role, when its model visibly refused to play the bias."""
    if t.bias == "none":
        return []
    side = t.bias.split(":", 1)[0]
    said = [u.text for u in t.utterances if u.role == side and u.model not in ("offline", "")]
    return [side] if any(is_refusal(text) for text in said) else []


# --- the protocol: options, roles, items, cast -----------------------------------------------

#: Patient biases whose offline patient names a condition (the distractor) as its belief.
_NAMES_A_BELIEF = ("patient:self_diagnosis", "patient:false_consensus")


@dataclass(frozen=True)
class Variant:
    """The encounter conditions that shape the agents."""

    bias: str = "none"
    image_mode: str | None = None


def _builtin(role: str, model: str, caller: ModelCaller, candidates: Sequence[str],
             variant: Variant, case: Case, policy: Policy = "strict") -> Any:
    bias = variant.bias
    distractor = (pick_distractor(case.choices or candidates, case.accepted_diagnoses,
                                  key=case.id) if bias != "none" else "")
    side: Side | None = "doctor" if role == "doctor" else "patient" if role == "patient" else None
    biased = {"bias_text": bias_prompt(bias, distractor=distractor, side=side) if side else "",
              "bias_version": f"{bias}@{bias_prompt_version()}" if bias != "none" else ""}
    if not biased["bias_text"]:
        biased = {}
    if role == "doctor":
        if model == OFFLINE:
            return OfflineDoctor(candidates, image_mode=variant.image_mode, bias=bias,
                                 distractor=distractor)
        return LLMDoctor(model, caller, image_mode=variant.image_mode, **biased)
    if role == "patient":
        if model != OFFLINE:
            return LLMPatient(model, caller, **biased)
        belief = distractor.lower() if bias in _NAMES_A_BELIEF else DEFAULT_BELIEF
        return OfflinePatient(bias, belief)
    if role == "measurement":
        return OfflineMeasurement() if model == OFFLINE else LLMMeasurement(model, caller)
    from ..agents.llm_moderator import LLMModerator
    from ..grading.judging.moderator import OfflineModerator

    return OfflineModerator() if model == OFFLINE else LLMModerator(model, caller, policy)


class AgentClinic(Protocol):
    """The AgentClinic benchmark (the default protocol)."""

    name: ClassVar[str] = "agentclinic"
    options: ClassVar[tuple[Option, ...]] = AGENTCLINIC_OPTIONS
    roles: ClassVar[tuple[RoleSpec, ...]] = (
        RoleSpec("doctor", Agent, None, "asks, orders tests, names the diagnosis"),
        RoleSpec("patient", Agent, None, "answers from the case's patient sheet"),
        RoleSpec("measurement", Agent, "measurement", "reports test results"),
        RoleSpec("moderator", Moderator, "moderator", "judges the diagnosis"),
    )

    def expand(self, cases: Sequence[Case], run: RunOptions) -> Iterator[ItemSpec]:
        """Every case under every combination of the run's axes."""
        pool = tuple(dict.fromkeys(c.diagnosis for c in cases))
        biases: tuple[str, ...] = run.options.get("bias", ("none",))
        for case in cases:
            modes: tuple[str | None, ...] = (tuple(run.options.get("images", ("initial",)))
                                            if case.images else (None,))
            axes = itertools.product(run.doctors, run.patients, biases, modes, run.turns,
                                     range(run.repeat))
            for doctor, patient, bias, mode, budget, sample in axes:
                parts = [case.specialty_slug, _slug(doctor)]
                if len(run.patients) > 1:
                    parts.append(f"patient_{_slug(patient)}")
                if biases != ("none",):
                    parts.append(bias.replace(":", "_"))
                if len(modes) > 1:
                    parts.append(f"img_{mode}")
                if len(run.turns) > 1:
                    parts.append(f"t{budget}")
                if run.repeat > 1:
                    parts.append(f"r{sample}")
                yield ItemSpec(case, "-".join(parts), self.models_of(run, doctor, patient),
                               sample, budget, pool, Variant(bias, mode))

    def header(self, item: ItemSpec) -> ItemHeader:
        """The base header with the bias and image mode."""
        variant: Variant = item.variant
        image_mode = variant.image_mode if item.case.images else None
        return super().header(item).model_copy(
            update={"bias": variant.bias, "image_mode": image_mode})

    async def play(self, item: ItemSpec, ctx: PlayContext) -> Transcript:
        """Build the cast (the user's agents first) and play the encounter."""
        variant: Variant = item.variant
        agents = {role.name: self.agent(
            ctx, role.name, item.models[role.name], item.case, variant.bias,
            functools.partial(_builtin, role.name, item.models[role.name], ctx.caller,
                              item.candidates, variant, item.case, ctx.grading_policy))
            for role in self.roles}
        budget_usd = ctx.options.get("test_budget")
        if budget_usd is not None:
            agents["measurement"] = BudgetedMeasurement(agents["measurement"], budget_usd)
        return await run_encounter(item.case, Cast(**agents, policy=ctx.grading_policy),
                                   budget=item.turn_budget,
                                   sample=item.sample, bias=variant.bias,
                                   image_mode=variant.image_mode,
                                   ask_perception=ctx.options.get("perception") != "no",
                                   protocol=self.name)

    def measures(self, case: Case, transcript: Transcript) -> EncounterMeasures | None:
        """The information-gathering measures: this protocol is a diagnostic interview."""
        return diagnostic_measures(case, transcript)

    def tables(self, records: Sequence[ResultRecord], resamples: int) -> list[Table]:
        """Accuracy by bias (and by specialty and bias), by image mode, and the patient's
        perception of the doctor, as the records call for them."""
        from .agentclinic_tables import agentclinic_tables

        return agentclinic_tables(records, resamples)

    def summary_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The bias variants and image modes of the run."""
        return {"biases": list(options.get("bias", ("none",))),
                "image_modes": list(options.get("images", ("initial",)))}


def _slug(model: str) -> str:
    return model.replace("/", "_").replace(" ", "_")
