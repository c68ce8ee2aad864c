"""The CRAFT-MD protocol: one conversation per case, several ways of asking for the diagnosis.

The patient-AI opens with its complaint; the clinical LLM asks one question at a time until it
writes "Final Diagnosis" or a turn with no question; a turn cap ends runaway dialogues (the
multi-turn answer is then "no diagnosis"). Every experiment of a case reuses that one
conversation, as the paper did, and asks the clinical LLM a final question with its own
context: the vignette, the whole conversation, the first patient statement only, a summary of
the patient's statements, or the physical examination only; as a 4-choice MCQ, a many-choice
MCQ, or free response.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import re
import time
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..agents.craftmd_agents import (
    LLMClinician,
    LLMSummarizer,
    LLMVignettePatient,
    OfflineClinician,
    OfflineSummarizer,
    OfflineVignettePatient,
)
from ..agents.llm_moderator import LLMModerator
from ..agents.offline_measurement import render
from ..core.case import Case
from ..core.measures import EncounterMeasures
from ..core.options import Option
from ..core.records import ResultRecord
from ..core.roles import OFFLINE, Agent, Moderator, Reply, TurnView
from ..core.transcript import ItemHeader, Transcript, Usage, Utterance
from ..grading.judging.moderator import OfflineModerator
from ..grading.judging.pipeline import grade_answer, grade_choice
from ..grading.judging.rules import Policy
from ..llm.limiter import CALL_PRIORITY
from ..report.tables import Table
from . import base
from .builtin_options import CRAFTMD_OPTIONS
from .craftmd_options import item_options, specialty_pools
from .craftmd_tables import craftmd_table
from .runner import settled, stage, track

_FINAL = re.compile(r"final\s+diagnosis", re.I)


@runtime_checkable
class Clinician(Agent, Protocol):
    """A CRAFT-MD clinical agent: converses, then answers a final question."""

    async def final(self, case: Case, context: str, options: Sequence[str] | None,
                    sample: int) -> Reply:
        """Answer the final question asked with ``context`` (MCQ when ``options``)."""
        ...


@runtime_checkable
class Summarizer(Protocol):
    """Rewrites the patient's statements as a vignette."""

    model: str
    prompt_version: str

    async def summarize(self, case: Case, statements: Sequence[str], sample: int) -> Reply:
        """The vignette."""
        ...


@dataclass(frozen=True)
class CraftCast:
    """The agents of a CRAFT-MD case."""

    doctor: Clinician
    patient: Agent
    summarizer: Summarizer
    #: Asked about the free-response verdicts the rules are unsure of (see
    #: :mod:`..grading.judging.pipeline`); the offline one lets the rules' guess stand.
    moderator: Moderator = field(default_factory=OfflineModerator)
    #: How broader answers are graded (``--agent-grading-policy``).
    policy: Policy = "strict"

    @property
    def models(self) -> dict[str, str]:
        """Each role's model name."""
        return {"doctor": self.doctor.model, "patient": self.patient.model,
                "summarizer": self.summarizer.model, "moderator": self.moderator.model}


@dataclass
class Conversation:
    """The one multi-turn conversation of a case (shared by its experiments)."""

    utterances: list[Utterance] = field(default_factory=list)
    capped: bool = False
    #: Whether an item's transcript already carries the conversation's (and its summary's)
    #: usage: its calls were made once, so they are charged once, to the first item that
    #: takes them; the other items show the utterances with no usage.
    charged: bool = False
    summary_charged: bool = False

    def take(self) -> list[Utterance]:
        """The utterances for one item's transcript, with their usage the first time only."""
        if self.charged:
            return [_uncharged(u) for u in self.utterances]
        self.charged = True
        return list(self.utterances)

    @property
    def statements(self) -> list[str]:
        """What the patient said, in order."""
        return [u.text for u in self.utterances if u.role == "patient"]


def _uncharged(u: Utterance) -> Utterance:
    return u.model_copy(update={"usage": Usage()}) if u.usage.calls else u


def _utter(turn: int, role: Any, kind: Any, reply: Reply, model: str) -> Utterance:
    return Utterance(turn=turn, role=role, kind=kind, text=reply.text, model=model,
                     usage=reply.usage)


async def converse(case: Case, cast: CraftCast, cap: int, sample: int) -> Conversation:
    """Play the conversation until "Final Diagnosis", a turn without a question, or the cap."""
    convo = Conversation()
    opening = await cast.patient.respond(TurnView(case, (), "", cap, cap, sample))
    convo.utterances.append(_utter(0, "patient", "answer", opening, cast.patient.model))
    for turn in range(1, cap + 1):
        view = TurnView(case, tuple(convo.utterances), convo.utterances[-1].text,
                        cap - turn + 1, cap, sample)
        reply = await cast.doctor.respond(view)
        done = bool(_FINAL.search(reply.text)) or "?" not in reply.text
        convo.utterances.append(_utter(turn, "doctor", "diagnosis" if done else "question",
                                       reply, cast.doctor.model))
        if done:
            return convo
        view = TurnView(case, tuple(convo.utterances), reply.text, cap - turn, cap, sample)
        answer = await cast.patient.respond(view)
        convo.utterances.append(_utter(turn, "patient", "answer", answer, cast.patient.model))
    convo.capped = True
    return convo


def conversation_text(convo: Conversation) -> str:
    """The dialogue as ``Doctor:`` / ``Patient:`` lines."""
    return "\n".join(f"{u.role.capitalize()}: {u.text}" for u in convo.utterances)


@dataclass(frozen=True)
class CraftItem:
    """One experiment x answer mode of a case."""

    case: Case
    experiment: str
    answer: str
    sample: int
    cap: int
    #: The options of an MCQ item (4 choices, or the pooled many-choice list).
    options: tuple[str, ...] = ()


Shared = Callable[[], Awaitable[Any]]


async def _context(item: CraftItem, conversation: Shared, summary: Shared) -> str:
    case = item.case
    if item.experiment == "vignette":
        return f"Case vignette:\n{case.vignette}"
    if item.experiment == "examonly":
        return "Physical examination findings:\n" + render("Examination", case.physical_exam)
    convo: Conversation = await conversation()
    if item.experiment == "multiturn":
        return "Your conversation with the patient:\n" + conversation_text(convo)
    if item.experiment == "singleturn":
        return "The patient says:\n" + (convo.statements[0] if convo.statements else "")
    reply: Reply = await summary()
    return f"Summary of the patient's history:\n{reply.text}"


#: How far ahead of the items' own calls a shared chain's calls queue for a call slot.
CHAIN_FIRST = 1 << 30


async def _chain_first(factory: Callable[[], Awaitable[Any]]) -> Any:
    """Run a shared chain (a case's conversation, its summary) with its calls ahead of every
    item's own final question: the chain is the run's critical path (~8 calls in a row that
    8 items wait on), a final question a leaf. Queued by item order alone, the last cases'
    chains started late and ran nearly alone at the end: slots 79% busy at 16, 64% at 64."""
    CALL_PRIORITY.set(CALL_PRIORITY.get() - CHAIN_FIRST)  # this task's own context
    return await factory()


async def run_craftmd(item: CraftItem, cast: CraftCast, conversation: Shared,
                      summary: Shared, protocol: str) -> Transcript:
    """Answer and grade one item; ``conversation``/``summary`` return the shared results;
    ``protocol`` labels the transcript (the playing protocol's name, a subclass's own)."""
    case = item.case
    t = Transcript(protocol=protocol, case_id=case.id, dataset=case.dataset,
                   specialty=case.specialty, models=cast.models, sample=item.sample,
                   turn_budget=item.cap, experiment=item.experiment,
                   answer_format=item.answer, started_at=time.time())
    track(t)  # a timeout keeps what the encounter had
    with settled(t):
        await _play(t, item, cast, conversation, summary)
    return t


async def _play(t: Transcript, item: CraftItem, cast: CraftCast, conversation: Shared,
                summary: Shared) -> None:
    if item.experiment in ("multiturn", "singleturn", "summarized"):
        stage("conversation")
        convo: Conversation = await conversation()
        t.utterances.extend(convo.take())
        if item.experiment == "summarized":
            reply: Reply = await summary()
            said = _utter(0, "summarizer", "summary", reply, cast.summarizer.model)
            t.utterances.append(_uncharged(said) if convo.summary_charged else said)
            convo.summary_charged = True
        if item.experiment == "multiturn" and convo.capped:
            t.outcome = "no_diagnosis"  # the turn cap ended a runaway dialogue
            return
    context = await _context(item, conversation, summary)
    t.utterances.append(Utterance(turn=t.turns_used, role="system", kind="final_question",
                                  text=context, model="harness"))
    stage("final answer")
    reply = await cast.doctor.final(item.case, context, item.options or None, item.sample)
    t.utterances.append(_utter(t.turns_used + 1, "doctor", "final_answer", reply,
                               cast.doctor.model))
    stage("grading")
    grade = (grade_choice(reply.text, item.options, item.case.diagnosis) if item.options
             else await grade_answer(reply.text, item.case, cast.moderator, item.sample,
                                    cast.policy, diagnosis_asked=True))
    t.diagnosis, t.verdict, t.outcome = grade.extracted, grade.verdict, grade.outcome
    t.utterances.append(Utterance(turn=t.turns_used, role="moderator", kind="judgement",
                                  text=grade.verdict.reason, model=grade.verdict.decided_by,
                                  detail=t.outcome, usage=grade.usage))


# --- the protocol: roles, items, the shared conversation (options: .craftmd_options) -------

def _has_context(case: Case, experiment: str) -> bool:
    return bool(case.physical_exam) if experiment == "examonly" else bool(case.vignette)


def _slug(model: str) -> str:
    return model.replace("/", "_").replace(" ", "_")


@dataclass(frozen=True)
class Variant:
    """One experiment x answer mode (and an MCQ's options)."""

    experiment: str
    answer: str
    options: tuple[str, ...] = ()


class CraftMD(base.Protocol):
    """The CRAFT-MD benchmark: every experiment of a case shares one conversation."""

    name: ClassVar[str] = "craftmd"
    options: ClassVar[tuple[Option, ...]] = CRAFTMD_OPTIONS
    roles: ClassVar[tuple[base.RoleSpec, ...]] = (
        base.RoleSpec("doctor", Clinician, None, "converses, then answers a final question"),
        base.RoleSpec("patient", Agent, None, "answers from the case vignette"),
        base.RoleSpec("summarizer", Summarizer, "summarizer", "rewrites the patient's words"),
        base.RoleSpec("moderator", Moderator, "moderator",
                      "grades a free response the offline grader is unsure of"),
    )

    def __init__(self) -> None:
        self._tasks: dict[Hashable, asyncio.Future[Any]] = {}
        #: Items still to play per conversation: its tasks are released after the last one.
        self._pending: dict[tuple[object, ...], int] = {}

    def expand(self, cases: Sequence[Case], run: base.RunOptions) -> Iterator[base.ItemSpec]:
        """Every case under every experiment x answer mode it can be asked in."""
        pool = tuple(dict.fromkeys(c.diagnosis for c in cases))
        by_specialty = specialty_pools(cases)
        o = run.options
        for case in cases:
            axes = itertools.product(run.doctors, run.patients, o["experiment"], o["answer"],
                                     range(run.repeat))
            for doctor, patient, experiment, answer, sample in axes:
                options = item_options(case, answer, by_specialty, o["many_choices"])
                if options is None or not _has_context(case, experiment):
                    continue  # e.g. an MCQ without choices, exam-only without an examination
                parts = [case.specialty_slug, _slug(doctor)]
                if len(run.patients) > 1:
                    parts.append(f"patient_{_slug(patient)}")
                parts += [experiment, answer]
                if run.repeat > 1:
                    parts.append(f"r{sample}")
                # The case object itself, not its id or dataset: two files (a/derm.yaml,
                # b/derm.yaml) may hold cases with equal ids and file stems.
                key = (id(case), case.id, doctor, patient, sample)
                self._pending[key] = self._pending.get(key, 0) + 1
                yield base.ItemSpec(case, "-".join(parts), self.models_of(run, doctor, patient),
                                    sample, run.turns[0], pool,
                                    Variant(experiment, answer, options))

    def items_per_chain(self, options: Mapping[str, Any]) -> int:
        """Every experiment x answer mode of a case waits on its one conversation."""
        return max(1, len(options["experiment"]) * len(options["answer"]))

    def header(self, item: base.ItemSpec) -> ItemHeader:
        """The base header with the experiment and answer mode."""
        variant: Variant = item.variant
        return super().header(item).model_copy(
            update={"experiment": variant.experiment, "answer_format": variant.answer})

    def _shared(self, key: Hashable, factory: Callable[[], Awaitable[Any]]) -> Awaitable[Any]:
        """One task per key, awaited by every item that needs it (on the runner's loop)."""
        if key not in self._tasks:
            self._tasks[key] = asyncio.ensure_future(_chain_first(factory))
        return self._tasks[key]

    async def play(self, item: base.ItemSpec, ctx: base.PlayContext) -> Transcript:
        """Answer one experiment x answer mode; the conversation and its summary are played
        once per case, doctor, patient and sample, whichever item needs them first."""
        variant: Variant = item.variant
        cast = self._cast(item, ctx)
        craft = CraftItem(item.case, variant.experiment, variant.answer, item.sample,
                          item.turn_budget, variant.options)
        key = (id(item.case), item.case.id, item.doctor, item.patient, item.sample)

        def conversation() -> Awaitable[Any]:
            return self._shared(("conversation", *key), lambda: converse(
                item.case, cast, item.turn_budget, item.sample))

        async def summarize() -> Any:
            convo = await conversation()
            return await cast.summarizer.summarize(item.case, convo.statements, item.sample)

        def summary() -> Awaitable[Any]:
            return self._shared(("summary", *key), summarize)

        try:
            return await run_craftmd(craft, cast, conversation, summary, self.name)
        finally:
            self._release(key)

    def _release(self, key: tuple[object, ...]) -> None:
        """Forget a conversation once its last item has played (under a ``--dist`` mode
        that splits a case over workers, a worker playing only some keeps it to the end, as
        it cannot tell; the default load scheduling keeps a case on one worker)."""
        left = self._pending.get(key, 0) - 1
        self._pending[key] = left
        if left <= 0:
            self._pending.pop(key, None)
            self._tasks.pop(("conversation", *key), None)
            self._tasks.pop(("summary", *key), None)

    def _cast(self, item: base.ItemSpec, ctx: base.PlayContext) -> CraftCast:
        """The clinician, vignette patient and summarizer (the user's first), and the
        moderator asked what the grading rules cannot decide: the user's, or the configured
        model, or the offline one (the rules' guess stands)."""
        m, case, caller = item.models, item.case, ctx.caller
        offline: dict[str, Callable[[], object]] = {
            "doctor": lambda: OfflineClinician(item.candidates),
            "patient": OfflineVignettePatient, "summarizer": OfflineSummarizer}
        online = {"doctor": LLMClinician, "patient": LLMVignettePatient,
                  "summarizer": LLMSummarizer}
        agents = {role: self.agent(ctx, role, m[role], case, "none",
                                   offline[role] if m[role] == OFFLINE
                                   else functools.partial(online[role], m[role], caller))
                  for role in ("doctor", "patient", "summarizer")}
        grader = m.get("moderator", OFFLINE)
        custom = ctx.make_agent("moderator", grader, case, "none")
        if custom is not None and not isinstance(custom, Moderator):
            raise TypeError(f"the moderator agent {custom!r} does not implement Moderator "
                            f"(protocol {self.name})")
        judge = custom if custom is not None else (
            OfflineModerator() if grader == OFFLINE
            else LLMModerator(grader, caller, ctx.grading_policy))
        return CraftCast(**agents, moderator=judge, policy=ctx.grading_policy)

    def measures(self, case: Case, transcript: Transcript) -> EncounterMeasures | None:
        """The information-gathering measures: this protocol is a diagnostic interview."""
        return base.diagnostic_measures(case, transcript)

    def tables(self, records: Sequence[ResultRecord], resamples: int) -> list[Table]:
        """The paper's shape: experiments as rows, answer modes as columns, per model."""
        return [craftmd_table(records, resamples)]

    def summary_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The experiments and answer modes of the run."""
        return {"experiments": list(options["experiment"]),
                "answer_modes": list(options["answer"])}

    def role_models(self, run: base.RunOptions) -> dict[str, str]:
        """Roles as the paper names them (the moderator is its grader)."""
        roles = super().role_models(run)
        roles["grader"] = roles.pop("moderator")
        return roles
