"""The CI gate decides the exit status; both sides of each rule."""

from __future__ import annotations

import pytest
from helpers import make_case, write_yaml_cases

# A doctor that gives the right diagnosis except on the case numbers listed in $WRONG.
ORACLE = """
import os
from pytest_agentclinic.core.roles import Reply
from pytest_agentclinic.llm.errors import InfrastructureError

class Doctor:
    model = "release"
    prompt_version = "test-1"
    async def respond(self, view):
        if os.environ.get("OUTAGE") == view.case.id:
            raise InfrastructureError("simulated outage", attempts=3)
        wrong = os.environ.get("WRONG", "").split(",")
        answer = "Nothing at all" if view.case.id.split("-")[1] in wrong else view.case.diagnosis
        return Reply("DIAGNOSIS READY: " + answer)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 31)])
    pytester.makeconftest(ORACLE)
    return pytester


def run(p: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, wrong: list[int],
        *args: str) -> pytest.RunResult:
    monkeypatch.setenv("WRONG", ",".join(f"{i:02d}" for i in wrong))
    return p.runpytest("c.yaml", "-p", "no:cacheprovider", *args)



def test_without_a_gate_pytest_exit_status_stands(suite: pytest.Pytester,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   xdist: list[str]) -> None:
    result = run(suite, monkeypatch, [1], *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "agentclinic gate" not in result.stdout.str()


@pytest.mark.xdist_sample
@pytest.mark.parametrize(("minimum", "status"), [("0.9", 0), ("0.99", 1)])
def test_min_accuracy(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                      xdist: list[str], minimum: str, status: int) -> None:
    result = run(suite, monkeypatch, [1, 2], f"--agent-min-accuracy={minimum}", *xdist)
    result.assert_outcomes(passed=28, failed=2)  # misdiagnoses still show as failed items
    assert result.ret == status
    verdict = "pass" if status == 0 else "FAIL"
    result.stdout.fnmatch_lines([f"release: accuracy 0.933 (28/30) * minimum *: {verdict}",
                                 f"gate {'PASSED' if status == 0 else 'FAILED'}: *"])


@pytest.mark.parametrize(("wrong", "status", "why"), [
    (list(range(1, 16)), 1, "drop larger than allowed and significant"),  # 15 lost: p < 0.001
    ([1, 2], 0, "drop not significant at alpha=0.05"),  # drop 0.067 > 0.05, but 2 pairs only
    ([1], 0, "drop within the allowed margin"),  # drop 0.033 <= 0.05
])
def test_baseline_drop_must_be_larger_than_allowed_and_significant(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str],
        wrong: list[int], status: int, why: str) -> None:
    assert run(suite, monkeypatch, [], "--agent-run-name=base", *xdist).ret == 0
    result = run(suite, monkeypatch, wrong, "--agent-baseline=reports/base",
                 "--agent-max-drop=0.05", *xdist)
    assert result.ret == status
    result.stdout.fnmatch_lines([f"release: baseline 1.000 -> * (drop *; 30 paired items, "
                                 f"{len(wrong)} lost / 0 gained, exact McNemar p=*): *, {why}"])


def test_baseline_given_as_a_summary_uses_a_binomial_test(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]) -> None:
    run(suite, monkeypatch, [], "--agent-run-name=base", *xdist)
    result = run(suite, monkeypatch, list(range(1, 11)),
                 "--agent-baseline=reports/base/summary.json", "--agent-max-drop=0.1", *xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["release: baseline 1.000 -> 0.667 *one-sided binomial p=*FAIL*"])


@pytest.mark.xdist_sample
def test_errors_fail_the_gate(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                              xdist: list[str]) -> None:
    monkeypatch.setenv("OUTAGE", "t-03")
    result = run(suite, monkeypatch, [], "--agent-min-accuracy=0.5", *xdist)
    result.assert_outcomes(passed=29, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["1 item(s) ended in infrastructure errors: FAIL*",
                                 "release: accuracy 1.000 (29/29) >= minimum 0.500: pass",
                                 "gate FAILED*"])


@pytest.mark.parametrize(("args", "message"), [
    (["--agent-max-drop=0.1"], "*--agent-max-drop needs --agent-baseline RUN*"),
    (["--agent-baseline=nowhere"], "*--agent-baseline: */nowhere does not exist*"),
    (["--agent-min-accuracy=1.5"], "*--agent-min-accuracy: expected a fraction between 0 and 1*"),
])
def test_gate_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
