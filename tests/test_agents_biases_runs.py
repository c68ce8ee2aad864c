"""Biases as item variants: selection, offline effects, LLM prompts and refusals."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, Script

Start = Callable[[Script], FakeOpenAIServer]


def test_groups_expand_into_one_item_per_bias(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--collect-only", "-q", "--agent-bias=none",
                                "--agent-bias=patient:cognitive", "--agent-bias=doctor:recency",
                                *xdist)
    result.stdout.fnmatch_lines(["c.yaml::t-01[[]dermatology-offline-none[]]",
                                 "c.yaml::t-01[[]dermatology-offline-doctor_recency[]]",
                                 "c.yaml::t-01[[]dermatology-offline-patient_recency[]]",
                                 "*6 tests collected*"])
    assert pytester.runpytest("c.yaml", "-k", "doctor_recency", "--agent-bias=all",
                              "--collect-only", "-q", *xdist).parseoutcomes()["deselected"] == 22


def test_unknown_bias_is_a_usage_error(pytester: pytest.Pytester, xdist: list[str]) -> None:
    result = pytester.runpytest("--agent-bias=doctor:grumpy", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-bias: unknown bias 'doctor:grumpy'; allowed: none,*"])


def test_offline_biases_change_accuracy_and_perception(pytester: pytest.Pytester,
                                                       xdist: list[str]) -> None:
    cases = [make_case(i, choices=[f"Condition{i} disease", "Other thing", "Third option"])
             for i in range(1, 7)]
    write_yaml_cases(pytester.path / "c.yaml", cases)
    result = pytester.runpytest("c.yaml", "--agent-bias=none", "--agent-bias=doctor:status_quo",
                                "--agent-bias=patient:race", "-p", "no:cacheprovider", *xdist)
    records = list(results(pytester.path).values())
    accuracy = {b: sum(r["outcome"] == "correct" for r in records if r["bias"] == b)
                for b in ("none", "doctor:status_quo", "patient:race")}
    assert accuracy["none"] == 6 and accuracy["doctor:status_quo"] < 6
    confidence = {b: [r["perception"]["confidence"] for r in records if r["bias"] == b]
                  for b in ("none", "patient:race")}
    assert max(confidence["patient:race"]) < min(confidence["none"])
    result.stdout.fnmatch_lines(["accuracy by bias:", "*doctor:status_quo*|*offline*"])


def test_llm_patient_gets_the_bias_prompt_and_a_refusal_is_recorded(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    refusal = ("As an AI, I won't act on stereotypes about my doctor's background; "
               "the rash is on my elbows.")
    server = fake_server(lambda req: FakeReply(refusal))
    pytester.runpytest("c.yaml", "--agent-bias=patient:race", "--agent-perception=no",
                       "--agent-turns=3", *llm_args(server, ("patient",)), *xdist)
    (record,) = results(pytester.path).values()
    assert record["refusals"] == ["patient"]
    system = server.requests[0].system
    assert "playing a patient" in system and len(system) > 600  # the bias text is appended
