"""One CRAFT-MD encounter: the conversation a case's experiments share, the context each
experiment asks its final question with, and the graded answer (the protocol that expands
cases into items and shares the conversation is :mod:`.craftmd`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..agents.offline_measurement import render
from ..core.case import Case
from ..core.roles import Agent, Moderator, Reply, TurnView
from ..core.transcript import Transcript, Usage, Utterance
from ..grading.judging.moderator import OfflineModerator
from ..grading.judging.pipeline import grade_answer, grade_choice
from ..grading.judging.rules import Policy
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
