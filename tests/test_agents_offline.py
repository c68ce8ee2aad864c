from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers import make_case

from pytest_agentclinic.agents.offline_doctor import HISTORY, OfflineDoctor, choose, plan
from pytest_agentclinic.agents.offline_measurement import NORMAL, OfflineMeasurement
from pytest_agentclinic.agents.offline_patient import NO_INFO, OfflinePatient
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.core.roles import Reply, TurnView
from pytest_agentclinic.core.transcript import Utterance


def case(**over: Any) -> Case:
    return Case.model_validate({"dataset": "t", **make_case(1, **over)})


def ask(agent: object, c: Case, text: str, history: tuple[Utterance, ...] = (),
        left: int = 10, budget: int = 10) -> str:
    view = TurnView(c, history, text, left, budget, 0)
    reply: Reply = asyncio.run(agent.respond(view))  # type: ignore[attr-defined]
    return reply.text


@pytest.mark.parametrize(("question", "expected"), [
    ("What brings you in today?", "I have had problem number 1 for two weeks."),
    ("Any other symptoms?", "Fatigue"),
    ("Do you smoke or drink?", "Teacher, does not smoke."),
    ("Any past medical problems or surgeries?", "None."),
    ("Does anyone in your family have medical problems?", NO_INFO),
    ("Do you take any medications?", NO_INFO),
])
def test_patient_answers_from_the_matching_field(question: str, expected: str) -> None:
    assert ask(OfflinePatient(), case(), question) == expected


def test_patient_never_states_the_diagnosis() -> None:
    c = case(patient={"history": "My doctor said Condition1 disease runs in my family."})
    reply = ask(OfflinePatient(), c, "Tell me what happened.")
    assert "condition1" not in reply.lower() and "my condition" in reply


def test_patient_falls_back_to_sentences_sharing_words() -> None:
    c = case(patient={"history": "The rash burns at night. I sleep badly."})
    assert ask(OfflinePatient(), c, "Is the rash worse at night?") == "The rash burns at night."
    assert ask(OfflinePatient(), c, "Any fever?").startswith("No, I haven't")


@pytest.mark.parametrize(("request_text", "expected"), [
    ("REQUEST TEST: skin biopsy", "RESULTS: Skin Biopsy: Findings typical of condition1"),
    ("REQUEST TEST: vital signs", "RESULTS: Vital Signs:\n  Temperature: 37.0 C"),
    ("REQUEST TEST: MRI brain", NORMAL),
])
def test_measurement_forgiving_lookup(request_text: str, expected: str) -> None:
    assert ask(OfflineMeasurement(), case(), request_text).startswith(expected)


def test_measurement_expands_abbreviations_and_returns_the_whole_group() -> None:
    c = case(tests={"Complete Blood Count": {"WBC": "11", "Hemoglobin": "9"},
                    "ECG": "Sinus tachycardia"})
    cbc = ask(OfflineMeasurement(), c, "REQUEST TEST: CBC")
    assert "WBC: 11" in cbc and "Hemoglobin: 9" in cbc
    assert "Sinus tachycardia" in ask(OfflineMeasurement(), c, "REQUEST TEST: EKG")


def test_doctor_plan_fits_the_budget_and_keeps_the_last_turn_for_the_diagnosis() -> None:
    assert plan(20)[: len(HISTORY)] == list(HISTORY)
    for budget in (1, 2, 5, 10, 20, 40):
        assert len(plan(budget)) <= max(budget - 1, 0)


def test_doctor_chooses_the_candidate_the_evidence_supports() -> None:
    pool = ["Iron deficiency anemia", "Pernicious anemia", "Thalassemia minor"]
    evidence = "Low ferritin, microcytic red cells; iron studies show low serum iron."
    assert choose(pool, evidence) == "Iron deficiency anemia"
    assert choose(pool, "no information") == "Iron deficiency anemia"  # alphabetical tie-break


def test_doctor_diagnoses_on_its_last_interaction() -> None:
    c = case(choices=[])
    doctor = OfflineDoctor(["Condition1 disease", "Other disease"])
    heard = (Utterance(turn=1, role="measurement", kind="test_result", model="offline",
                       text="Findings typical of condition1"),)
    assert ask(doctor, c, "", left=10) == HISTORY[0]
    assert ask(doctor, c, "", heard, left=1) == "DIAGNOSIS READY: Condition1 disease"
