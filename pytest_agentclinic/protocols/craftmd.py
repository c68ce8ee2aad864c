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
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..agents.craftmd_agents import (
    LLMClinician,
    LLMSummarizer,
    LLMVignettePatient,
    OfflineClinician,
    OfflineSummarizer,
    OfflineVignettePatient,
)
from ..agents.llm_moderator import LLMModerator
from ..core.case import Case
from ..core.measures import EncounterMeasures
from ..core.options import Option
from ..core.records import ResultRecord
from ..core.roles import OFFLINE, Agent, Moderator
from ..core.transcript import ItemHeader, Transcript
from ..grading.judging.moderator import OfflineModerator
from ..llm.limiter import CALL_PRIORITY
from ..report.tables import Table
from . import base
from .builtin_options import CRAFTMD_OPTIONS
from .craftmd_encounter import (
    Clinician,
    CraftCast,
    CraftItem,
    Summarizer,
    converse,
    run_craftmd,
)
from .craftmd_options import item_options, specialty_pools
from .craftmd_tables import craftmd_table

#: How far ahead of the items' own calls a shared chain's calls queue for a call slot.
CHAIN_FIRST = 1 << 30


async def _chain_first(factory: Callable[[], Awaitable[Any]]) -> Any:
    """Run a shared chain (a case's conversation, its summary) with its calls ahead of every
    item's own final question: the chain is the run's critical path (~8 calls in a row that
    8 items wait on), a final question a leaf. Queued by item order alone, the last cases'
    chains started late and ran nearly alone at the end: slots 79% busy at 16, 64% at 64."""
    CALL_PRIORITY.set(CALL_PRIORITY.get() - CHAIN_FIRST)  # this task's own context
    return await factory()


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
