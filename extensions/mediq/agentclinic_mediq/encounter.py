"""One MediQ encounter, as upstream's benchmark loop plays it (src/mediQ_benchmark.py).

Baselines: one step with the setting's information, which must answer. Interactive: the
patient's first sentence, then while fewer questions than the budget have been asked the
expert asks (the patient answers from the facts) or answers; once the budget is spent the
expert is asked once more and must answer (the *forced* answer: "budget ran out").
"""

from __future__ import annotations

import functools
import time

from pytest_agentclinic import api

from .offline import ChecklistExpert, RetrievalPatient, fact_text, revealed
from .state import BASELINES, UNKNOWN, ExpertState, Step

#: Written by the harness when the budget forces the answer.
FORCED = "The question budget is spent: answer now."


def _info(case: api.Case, setting: str) -> str:
    context = [str(s) for s in case.metadata.get("context", []) or []]  # type: ignore[union-attr]
    if setting == "full":
        return " ".join(context)
    if setting == "none":
        return ""
    return context[0] if context else ""


def _agents(protocol: api.Protocol, item: api.ItemSpec,
            ctx: api.PlayContext) -> tuple[object, object]:
    from .llm import LLMExpert, LLMPatient

    o = ctx.options
    prob, scale = float(o.get("mediq_threshold", 0.8)), int(o.get("mediq_scale_threshold", 4))
    doctor, patient = item.doctor, item.patient
    expert = protocol.agent(
        ctx, "doctor", doctor, item.case, "none",
        functools.partial(ChecklistExpert, prob, scale) if doctor == api.OFFLINE else
        functools.partial(LLMExpert, doctor, ctx, samples=int(o.get("mediq_samples", 3)),
                          prob_threshold=prob, scale_threshold=scale))
    answerer = protocol.agent(ctx, "patient", patient, item.case, "none",
                              RetrievalPatient if patient == api.OFFLINE
                              else functools.partial(LLMPatient, patient, ctx))
    return expert, answerer


async def play(protocol: api.Protocol, item: api.ItemSpec,
               ctx: api.PlayContext) -> api.Transcript:
    """Play ``item`` into its transcript (a model failure is an *error*)."""
    t = api.Transcript(**protocol.header(item).header())
    t.started_at = time.time()
    expert, patient = _agents(protocol, item, ctx)
    setting, case = str(item.variant), item.case
    with api.settled(t):
        info = _info(case, setting)
        dialogue: list[tuple[str, str]] = []
        if setting not in BASELINES:
            t.utterances.append(api.Utterance(turn=0, role="patient", kind="answer", text=info,
                                              model=_model(patient)))
        else:
            t.utterances.append(api.Utterance(turn=0, role="system", kind="final_question",
                                              text=info or "(no patient information)",
                                              model="harness"))
        step: Step | None = None
        while True:
            left = item.turn_budget - len(dialogue)
            if setting not in BASELINES and left <= 0:
                t.utterances.append(api.Utterance(turn=len(dialogue) + 1, role="system",
                                                  kind="forced", text=FORCED, model="harness"))
            state = ExpertState(case, setting, info, tuple(dialogue), left, item.sample)
            step = await expert.step(state)  # type: ignore[attr-defined]
            turn = len(dialogue) + 1
            if step.kind == "question" and not state.must_answer:
                t.utterances.append(_said(turn, "question", step, expert))
                answer = await _answer(t, patient, item, step.text, left)
                dialogue.append((step.text, answer))
                continue
            t.utterances.append(_said(turn, "choice", step, expert))
            break
        _grade(t, step, protocol.expected(case))
    t.duration_s = time.time() - t.started_at
    return t


async def _answer(t: api.Transcript, patient: object, item: api.ItemSpec, question: str,
                  left: int) -> str:
    """The patient's answer, recorded with the numbers of the facts it recites."""
    case = item.case
    view = api.TurnView(case, tuple(t.utterances), question, left, item.turn_budget,
                        item.sample)
    reply: api.Reply = await patient.respond(view)  # type: ignore[attr-defined]
    facts = [str(f) for f in case.metadata.get("facts", []) or []]  # type: ignore[union-attr]
    shown = revealed(reply.text, facts)
    t.utterances.append(api.Utterance(turn=t.turns_used, role="patient", kind="answer",
                                      text=reply.text, model=_model(patient),
                                      usage=reply.usage,
                                      detail=",".join(str(i + 1) for i in shown)))
    return reply.text


def _model(agent: object) -> str:
    return str(getattr(agent, "model", "?"))


def _said(turn: int, kind: str, step: Step, expert: object) -> api.Utterance:
    if kind == "choice":
        detail = step.letter or ""
    else:  # a question: the confidence that made the expert ask
        detail = "" if step.confidence is None else f"confidence={step.confidence:.3g}"
    return api.Utterance(turn=turn, role="doctor", kind=kind, text=step.said or step.text,
                         model=_model(expert), usage=step.usage, detail=detail)


def _grade(t: api.Transcript, step: Step | None, expected: str) -> None:
    letter = step.letter if step is not None else None
    if not letter:
        t.outcome = "no_diagnosis"
        return
    t.diagnosis = letter
    t.verdict = api.Verdict(correct=letter == expected, decided_by="option-letter",
                            reason=f"{letter} for {expected}")
    t.outcome = "correct" if t.verdict.correct else "incorrect"


def measures(case: api.Case, t: api.Transcript) -> api.EncounterMeasures | None:
    """Questions asked (repeated ones, and those the patient could not answer: the
    ``redundant`` ones) and the facts the patient revealed, with the turn each was first
    revealed at; None for a baseline (no interview took place) and for an error."""
    if t.conditions.get("setting") in BASELINES or t.outcome == "error":
        return None
    facts = [str(f) for f in case.metadata.get("facts", []) or []]  # type: ignore[union-attr]
    questions = [u.text.strip().lower() for u in t.utterances if u.kind == "question"]
    at: dict[int, int] = {}
    for u in t.utterances:
        if u.role == "patient" and u.detail:
            for number in u.detail.split(","):
                at.setdefault(int(number) - 1, u.turn)
    unanswered = sum(1 for u in t.utterances
                     if u.role == "patient" and u.turn > 0 and u.text == UNKNOWN)
    choice = next((u.turn for u in t.utterances if u.kind == "choice"), None)
    return api.EncounterMeasures(
        method="mediq-facts-1", facts=len(facts), facts_elicited=len(at), key_facts=0,
        key_facts_elicited=0, questions=len(questions),
        repeated_questions=len(questions) - len(set(questions)),
        redundant_questions=unanswered, tests_ordered=0, test_spend_usd=0.0,
        turns_to_diagnosis=choice, elicited_at=at)


__all__ = ["FORCED", "fact_text", "measures", "play"]
