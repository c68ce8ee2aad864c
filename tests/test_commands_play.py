"""``agentclinic play``, driven through a real terminal (pexpect) as a person would use it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

pexpect = pytest.importorskip("pexpect")

from pytest_agentclinic.agents.offline_doctor import HISTORY  # noqa: E402

TIMEOUT = 20


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    """Two cases, so ``--case`` has something to choose from."""
    return write_yaml_cases(tmp_path / "clinic.yaml",
                            [make_case(1), make_case(2, specialty="Neurology")])


def play(cwd: Path, *args: str) -> Any:
    """Start ``agentclinic play`` in a pseudo-terminal, run from ``cwd`` (reports land there)."""
    return pexpect.spawn(sys.executable, ["-m", "pytest_agentclinic.cli", "play", *args],
                         cwd=str(cwd), encoding="utf-8", timeout=TIMEOUT,
                         dimensions=(40, 200))


def finish(child: Any) -> tuple[int, dict[str, Any]]:
    """Wait for the verdict; return the exit status and the saved transcript."""
    child.expect(r"transcript:\s+(\S+\.json)")
    path = Path(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    transcript = json.loads((Path(child.cwd) / path).read_text())
    assert path.parts[0] == "reports" and path.parts[1].startswith("play-")
    assert path.parts[2] == "transcripts"
    return child.exitstatus, transcript


def said(transcript: dict[str, Any], role: str) -> list[str]:
    """What ``role`` said, in order."""
    return [u["text"] for u in transcript["utterances"] if u["role"] == role]


def test_doctor_asks_tests_and_diagnoses_correctly(tmp_path: Path, case_file: Path) -> None:
    child = play(tmp_path, case_file.name, "--role", "doctor")
    child.expect("REQUEST TEST: <name>")  # the help line comes first
    child.expect("DIAGNOSIS READY: <diagnosis>")
    child.expect("Objective: Evaluate and diagnose the patient presenting with complaint 1.")
    child.expect(r"\[20 interactions left\]")
    child.expect("doctor> ")
    child.sendline("What brings you in today?")
    child.expect("patient: I have had problem number 1 for two weeks.")
    child.expect(r"\[19 interactions left\]")
    child.expect("doctor> ")
    child.sendline("request test skin biopsy")  # no colon: asked again, not sent
    child.expect(r"name the test after a colon")
    child.expect("doctor> ")
    child.sendline("REQUEST TEST: skin biopsy")
    child.expect("Findings typical of condition1 disease")
    child.expect("doctor> ")
    child.sendline("DIAGNOSIS READY:")  # no name: asked again, no interaction spent
    child.expect(r"name the diagnosis")
    child.expect("doctor> ")
    child.sendline("DIAGNOSIS READY: Condition1 disease")
    child.expect(r"expected:\s+Condition1 disease")
    child.expect(r"given:\s+Condition1 disease")
    child.expect(r"verdict:\s+CORRECT")
    child.expect(r"turns used:\s+3/20")
    status, transcript = finish(child)
    assert status == 0
    assert transcript["outcome"] == "correct"
    assert transcript["models"]["doctor"] == "human"
    assert said(transcript, "doctor") == ["What brings you in today?",
                                          "REQUEST TEST: skin biopsy",
                                          "DIAGNOSIS READY: Condition1 disease"]
    results = next((tmp_path / "reports").iterdir()) / "results.jsonl"
    record = json.loads(results.read_text())
    assert record["outcome"] == "correct"
    # The same record as a pytest run's: information-gathering measures included.
    assert record["measures"]["tests_ordered"] == 1 and record["measures"]["questions"] == 1


def test_doctor_wrong_diagnosis_of_a_chosen_case(tmp_path: Path, case_file: Path) -> None:
    child = play(tmp_path, case_file.name, "--role", "doctor", "--case", "t-02", "--turns", "5")
    child.expect("complaint 2")
    child.expect(r"\[5 interactions left\]")
    child.expect("doctor> ")
    child.sendline("DIAGNOSIS READY: Migraine")
    child.expect(r"expected:\s+Condition2 disease")
    child.expect(r"verdict:\s+INCORRECT")
    status, transcript = finish(child)
    assert status == 1
    assert transcript["case_id"] == "t-02"
    assert transcript["outcome"] == "incorrect"
    assert transcript["diagnosis"] == "Migraine"


def test_unknown_case_lists_the_ids(tmp_path: Path, case_file: Path) -> None:
    child = play(tmp_path, case_file.name, "--role", "doctor", "--case", "t-99")
    child.expect("no case 't-99'; its cases are: t-01, t-02")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert not (tmp_path / "reports").exists()


def test_patient_answers_the_offline_doctor(tmp_path: Path, case_file: Path) -> None:
    # Budget 6: the offline doctor asks 3 questions, requests 2 tests, then diagnoses.
    child = play(tmp_path, case_file.name, "--role", "patient", "--turns", "6")
    child.expect("your case sheet")
    child.expect("Main symptom: Itchy rash")
    answers = ["An itchy rash for two weeks; they said it looks like condition1.",
               "I am tired all the time.",
               "Nothing else, I am healthy."]
    for question, answer in zip(HISTORY[:3], answers, strict=True):
        child.expect(re.escape(f"doctor: {question}"))
        child.expect("patient> ")
        child.sendline(answer)
    child.expect(r"the doctor orders a test: Vital signs")
    child.expect("rate this doctor")  # asked after the diagnosis, answered by the person
    child.expect("patient> ")
    child.sendline("Confidence: 8 Compliance: 7 Consultation: 9, a careful doctor")
    # The offline doctor picks its diagnosis from what the person said.
    child.expect(r"given:\s+Condition1 disease")
    child.expect(r"verdict:\s+CORRECT")
    child.expect(r"turns used:\s+6/6")
    child.expect(r"ratings:\s+confidence 8/10, compliance 7/10, consultation 9/10")
    status, transcript = finish(child)
    assert status == 0
    assert transcript["models"]["patient"] == "human"
    assert said(transcript, "patient")[:3] == answers
    assert said(transcript, "doctor")[:3] == list(HISTORY[:3])


def test_doctor_eof_gives_up(tmp_path: Path, case_file: Path) -> None:
    child = play(tmp_path, case_file.name, "--role", "doctor")
    child.expect("doctor> ")
    child.sendline("What brings you in today?")
    child.expect("doctor> ")
    child.sendeof()
    child.expect(r"given:\s+\(none\)")
    child.expect(r"verdict:\s+NO DIAGNOSIS \(you gave up\)")
    child.expect(r"turns used:\s+1/20")
    status, transcript = finish(child)
    assert status == 1
    assert transcript["outcome"] == "no_diagnosis"
    assert said(transcript, "doctor") == ["What brings you in today?"]
    assert len(said(transcript, "patient")) == 1


def test_doctor_two_empty_lines_give_up(tmp_path: Path, case_file: Path) -> None:
    child = play(tmp_path, case_file.name, "--role", "doctor")
    child.expect("doctor> ")
    child.sendline("")
    child.expect("press Enter again to give up")
    child.expect("doctor> ")
    child.sendline("")
    child.expect(r"verdict:\s+NO DIAGNOSIS \(you gave up\)")
    status, transcript = finish(child)
    assert status == 1
    assert transcript["utterances"] == []


def test_patient_eof_leaves_and_is_not_the_doctors_fault(tmp_path: Path,
                                                         case_file: Path) -> None:
    child = play(tmp_path, case_file.name, "--role", "patient")
    child.expect("patient> ")
    child.sendline("A rash.")
    child.expect("patient> ")
    child.sendeof()
    child.expect(r"verdict:\s+ERROR: the patient \(human\) left the encounter at interaction 2")
    status, transcript = finish(child)
    assert status == 3
    assert transcript["outcome"] == "error"  # kept out of the doctor's accuracy
    assert said(transcript, "patient") == ["A rash."]

