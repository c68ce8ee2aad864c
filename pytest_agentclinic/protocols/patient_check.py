"""Ask a patient agent the doctor questions of recorded conversations, for fidelity checks.

The questions come from CRAFT-MD's recorded conversations: each is put to the patient with
the same conversation so far as the recorded doctor saw it, except that the patient under
test sees its own earlier answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

from ..core.case import Case
from ..core.roles import Agent, TurnView
from ..core.transcript import Utterance
from ..llm.errors import FatalLLMError, LLMError
from ..metrics.conversations import Conversation
from ..metrics.facts import case_facts
from ..metrics.fidelity import FidelitySummary, PatientFidelity, conversation_fidelity


async def answer_questions(patient: Agent, case: Case, questions: Sequence[str],
                           sample: int = 0) -> list[str]:
    """``patient``'s answers to ``questions``, asked in order in one conversation."""
    history: list[Utterance] = []
    answers: list[str] = []
    cap = len(questions)
    for turn, question in enumerate(questions, 1):
        history.append(Utterance(turn=turn, role="doctor", kind="question", text=question,
                                 model="recorded"))
        reply = await patient.respond(TurnView(case, tuple(history), question, cap - turn + 1,
                                               cap, sample))
        history.append(Utterance(turn=turn, role="patient", kind="answer", text=reply.text,
                                 model=patient.model))
        answers.append(reply.text)
    return answers


RECORDED = "recorded"


async def check_conversation(patient: Agent, case: Case, questions: Sequence[str],
                             recorded: Sequence[str]) -> tuple[PatientFidelity, PatientFidelity]:
    """The recorded patient's and ``patient``'s fidelity over one conversation's questions."""
    answers = await answer_questions(patient, case, questions)
    facts = case_facts(case)
    text = case.vignette or " ".join(f.text for f in facts)
    return (conversation_fidelity(case.id, RECORDED, recorded, facts, text,
                                  case.accepted_diagnoses),
            conversation_fidelity(case.id, patient.model, answers, facts, text,
                                  case.accepted_diagnoses))


async def check_patient(patient_for: Callable[[Case], Agent],
                        conversations: Sequence[Conversation], cases: Mapping[str, Case],
                        concurrency: int = 8) -> tuple[FidelitySummary, list[PatientFidelity]]:
    """Put every conversation's doctor questions to a fresh patient of ``patient_for`` and
    compare it with the recorded patient; conversations of unknown cases are skipped, and a
    conversation whose model calls failed is listed in ``summary.errors``, not scored. A
    :class:`FatalLLMError` (bad key, unreachable server) propagates."""
    gate = asyncio.Semaphore(concurrency)

    async def one(convo: Conversation) -> tuple[PatientFidelity, PatientFidelity]:
        case = cases[convo.case_id]
        questions = convo.questions
        recorded = [a.text if (a := convo.answer_to(q)) else "" for q in questions]
        async with gate:
            return await check_conversation(patient_for(case), case,
                                            [q.text for q in questions], recorded)

    async def guarded(convo: Conversation) -> tuple[PatientFidelity, PatientFidelity] | str:
        try:
            return await one(convo)
        except FatalLLMError:
            raise
        except LLMError as exc:  # an infrastructure failure: reported apart, never scored
            return f"{convo.case_id}: {type(exc).__name__}: {exc}"

    outcomes = await asyncio.gather(*(guarded(c) for c in conversations if c.case_id in cases))
    summary = FidelitySummary()
    checked: list[PatientFidelity] = []
    for outcome in outcomes:
        if isinstance(outcome, str):
            summary.errors.append(outcome)
        else:
            summary.add(outcome)
            checked.extend(outcome)
    return summary, checked
