"""The AgentClinic protocol: a budgeted doctor, a patient, a measurement agent, a moderator."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..agents.base import Agent, Moderator, Reply, TurnView
from ..agents.images import reference
from ..agents.refusal import is_refusal
from ..cases.models import Case
from ..grading.matcher import extract_ready_diagnosis
from ..llm.errors import FatalLLMError, LLMError
from . import perception
from .transcript import Kind, Role, Transcript, Utterance

_TEST = re.compile(r"request\s+tests?\s*[:\-]\s*(.+)", re.I)
_IMAGES = re.compile(r"request\s+images?\b", re.I)


@dataclass(frozen=True)
class Cast:
    """The four agents of one encounter."""

    doctor: Agent
    patient: Agent
    measurement: Agent
    moderator: Moderator

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
    incoming = ""
    for turn in range(1, budget + 1):
        view = TurnView(case, tuple(t.utterances), incoming, budget - turn + 1, budget, sample)
        reply = await cast.doctor.respond(view)
        diagnosis = extract_ready_diagnosis(reply.text)
        if diagnosis is not None:
            _say(t, turn, "doctor", "diagnosis", reply, cast.doctor.model, diagnosis)
            t.diagnosis = diagnosis
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
        if test:
            answer = await cast.measurement.respond(view)
            _say(t, turn, "measurement", "test_result", answer, cast.measurement.model)
        else:
            answer = await cast.patient.respond(view)
            _say(t, turn, "patient", "answer", answer, cast.patient.model)
        incoming = answer.text


async def _perception(t: Transcript, case: Case, cast: Cast, sample: int) -> None:
    """Ask the patient its three ratings of the doctor once the diagnosis is given."""
    assert t.diagnosis is not None
    ask = perception.question(t.diagnosis)
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
                        ask_perception: bool = True) -> Transcript:
    """Play one whole encounter, judge it, and ask the patient's perception.

    Model failures end the encounter with outcome ``error`` (never a wrong diagnosis);
    a :class:`FatalLLMError` is recorded and re-raised so the session can stop.
    """
    t = Transcript(case_id=case.id, dataset=case.dataset, specialty=case.specialty,
                   models=cast.models, sample=sample, turn_budget=budget, bias=bias,
                   image_mode=image_mode if case.images else None,
                   prompt_versions=cast.prompt_versions, started_at=time.time())
    with settled(t):
        await _dialogue(t, case, cast, budget, sample)
        if t.diagnosis is None:
            t.outcome = "no_diagnosis"
        else:
            judgement = await cast.moderator.judge(case, t.diagnosis, sample)
            t.verdict = judgement.verdict
            t.utterances.append(Utterance(
                turn=t.turns_used, role="moderator", kind="judgement",
                text=judgement.verdict.reason, model=cast.moderator.model,
                detail="correct" if judgement.verdict.correct else "incorrect",
                usage=judgement.usage))
            t.outcome = "correct" if judgement.verdict.correct else "incorrect"
            if ask_perception:
                await _perception(t, case, cast, sample)
    t.refusals = _refusals(t)
    return t


@contextlib.contextmanager
def settled(t: Transcript) -> Iterator[None]:
    """Time an encounter; a model failure ends it as outcome *error* (never a wrong
    diagnosis), and a :class:`FatalLLMError` is recorded, then re-raised to stop the session."""
    started = time.perf_counter()
    try:
        yield
    except FatalLLMError as exc:
        t.outcome, t.error = "error", str(exc)
        raise
    except LLMError as exc:
        t.outcome, t.error = "error", f"{type(exc).__name__}: {exc}"
    finally:
        t.duration_s = time.perf_counter() - started


def _refusals(t: Transcript) -> list[str]:
    """The biased role, when its model visibly refused to play the bias."""
    if t.bias == "none":
        return []
    side = t.bias.split(":", 1)[0]
    said = [u.text for u in t.utterances if u.role == side and u.model not in ("offline", "")]
    return [side] if any(is_refusal(text) for text in said) else []
