"""Smoke runs on a subset, reducers over K trials, and per-encounter budgets."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.llm.encounter_limits import EncounterBudget, EncounterLimitReached
from pytest_agentclinic.plugin.subset import stratified
from pytest_agentclinic.report.reducers import pass_at_k, reduce, reducer_table
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
SPECIALTIES = ("Dermatology", "Cardiology", "Neurology")


def _cases(pytester: pytest.Pytester, n: int = 12) -> None:
    write_yaml_cases(pytester.path / "c.yaml",
                     [make_case(i, SPECIALTIES[i % 3]) for i in range(1, n + 1)])


def _records(root: Path) -> list[dict[str, Any]]:
    (run,) = (root / "reports").iterdir()
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def _summary(root: Path) -> dict[str, Any]:
    (run,) = (root / "reports").iterdir()
    return dict(json.loads((run / "summary.json").read_text()))


# --- --agent-limit / --agent-sample ---------------------------------------------------------

def test_limit_runs_the_first_cases_after_k(pytester: pytest.Pytester,
                                            xdist: list[str]) -> None:
    _cases(pytester)
    result = pytester.runpytest("c.yaml", "-k", "not t-01", "--agent-limit=3",
                                "--agent-repeat=2", "-p", "no:cacheprovider", *xdist)
    records = _records(pytester.path)
    # The first three cases that -k kept, each with both of its repeats.
    assert Counter(r["case_id"] for r in records) == {"t-02": 2, "t-03": 2, "t-04": 2}
    assert "subset: this run covers the first 3 case(s)" in result.stdout.str()
    assert _summary(pytester.path)["subset"].startswith("the first 3 case(s)")
    (run,) = (pytester.path / "reports").iterdir()
    assert "- subset: the first 3 case(s)" in (run / "summary.md").read_text()


def test_sample_is_stratified_and_reproducible(pytester: pytest.Pytester,
                                               xdist: list[str]) -> None:
    _cases(pytester)
    chosen = []
    for run in ("a", "b"):
        pytester.runpytest("c.yaml", "--agent-sample=6", "--agent-seed=7",
                           f"--agent-run-name={run}", "-p", "no:cacheprovider", *xdist)
        lines = (pytester.path / "reports" / run / "results.jsonl").read_text().splitlines()
        chosen.append(sorted(json.loads(line)["case_id"] for line in lines))
    assert chosen[0] == chosen[1] and len(chosen[0]) == 6
    by_specialty = Counter(SPECIALTIES[int(c[2:]) % 3] for c in chosen[0])
    assert by_specialty == dict.fromkeys(SPECIALTIES, 2)


def test_stratified_sampling_follows_shares_and_seeds() -> None:
    cases = {("d", f"c{i}"): ("big" if i < 8 else "small") for i in range(10)}
    picked = stratified(cases, 5, seed=1)
    assert Counter(cases[k] for k in picked) == {"big": 4, "small": 1}
    assert stratified(cases, 5, seed=1) == picked
    assert any(stratified(cases, 5, seed=s) != picked for s in range(2, 10))
    assert stratified(cases, 50, seed=1) == set(cases)


def test_the_gate_refuses_a_subset_unless_told(pytester: pytest.Pytester,
                                               xdist: list[str]) -> None:
    _cases(pytester)
    refused = pytester.runpytest("c.yaml", "--agent-limit=2", "--agent-min-accuracy=0",
                                 "--agent-run-name=r1", "-p", "no:cacheprovider", *xdist)
    assert refused.ret == 1
    assert "a release is not gated on a subset" in refused.stdout.str()
    allowed = pytester.runpytest("c.yaml", "--agent-limit=2", "--agent-min-accuracy=0",
                                 "--agent-gate-allow-subset=yes", "--agent-run-name=r2",
                                 "-p", "no:cacheprovider", *xdist)
    assert allowed.ret == 0, allowed.stdout.str()


def test_limit_and_sample_together_are_a_usage_error(pytester: pytest.Pytester) -> None:
    _cases(pytester, 2)
    result = pytester.runpytest("c.yaml", "--agent-limit=1", "--agent-sample=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "give one of them" in result.stderr.str()


# --- reducers ------------------------------------------------------------------------------

def _record(case: str, sample: int, correct: bool, **over: Any) -> ResultRecord:
    fields: dict[str, Any] = {
        "protocol": "agentclinic", "case_id": case, "dataset": "d", "specialty": "s",
        "models": {"doctor": "m"},
        "sample": sample, "turn_budget": 20, "run": "r", "nodeid": f"{case}-{sample}",
        "outcome": "correct" if correct else "incorrect", "expected": "x", "given": "y",
        "turns_used": 1, "duration_s": 0.0}
    return ResultRecord(**{**fields, **over})


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    # 1 right of 4: P(at least one right among 2 drawn) = 1 - C(3,2)/C(4,2) = 1 - 3/6.
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(4, 0, 3) == 0.0
    assert pass_at_k(4, 2, 3) == 1.0  # only 2 wrong: every 3-draw holds a right one
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)  # pass@1 is the mean


def test_reducers_tell_consistency_apart_from_the_mean() -> None:
    # case a: 3/3 right, b: 2/3, c: 1/3, d: 0/3.
    pattern = {"a": (1, 1, 1), "b": (1, 1, 0), "c": (1, 0, 0), "d": (0, 0, 0)}
    records = [_record(c, i, bool(v)) for c, vs in pattern.items() for i, v in enumerate(vs)]
    figures = {name: reduce(records, name) for name in ("mean", "pass@k", "majority", "all")}
    assert {k: round(v.value, 4) for k, v in figures.items() if v} == {
        "mean": 0.5, "pass@k": 0.75, "majority": 0.5, "all": 0.25}
    for figure in figures.values():
        assert figure is not None and figure.cases == 4 and figure.k == 3
        assert figure.ci[0] < figure.value < figure.ci[1]
    # Errors are no verdict: a case's error trial leaves k at its judged trials.
    with_error = [*records, _record("a", 3, False, outcome="error")]
    assert reduce(with_error, "all") == figures["all"]


def test_a_tie_is_no_majority() -> None:
    records = [_record("a", 0, True), _record("a", 1, False)]
    majority = reduce(records, "majority")
    assert majority is not None and majority.value == 0.0


def test_the_reducer_table_needs_trials_and_names_k() -> None:
    assert reducer_table([_record("a", 0, True), _record("b", 0, False)]) is None
    table = reducer_table([_record("a", i, i == 0) for i in range(4)])
    assert table is not None
    _title, headers, rows, data, _note = table
    assert headers[3:] == ["mean", "pass@k", "majority", "all-k"]
    assert rows[0][2] == "4" and data[0]["pass@k"]["value"] == pytest.approx(1.0)


def test_gate_on_a_reducer(pytester: pytest.Pytester, fake_server: Start,
                           xdist: list[str]) -> None:
    """Each case right in one of its two trials: mean 0.5 passes a 0.5 minimum, all-k (0)
    fails it, pass@k (1) passes it, whatever order the trials ran in."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in (1, 2)])
    seen: Counter[str] = Counter()

    def doctor(req: FakeRequest) -> FakeReply:
        case = next(i for i in ("1", "2") if f"complaint {i}" in json.dumps(req.messages))
        seen[case] += 1
        right = seen[case] % 2 == 1
        return FakeReply(f"DIAGNOSIS READY: {'Condition' + case + ' disease' if right else 'gout'}")

    server = fake_server(doctor)
    base = ["c.yaml", "--agent-doctor=openai/fake-doctor", f"--agent-api-base={server.url}",
            "--agent-perception=no", "--agent-repeat=2", "--agent-min-accuracy=0.5",
            "-p", "no:cacheprovider"]
    verdicts = {}
    for reducer in ("mean", "all", "pass@k"):
        seen.clear()
        result = pytester.runpytest(*base, f"--agent-gate-reducer={reducer}",
                                    "--agent-cache=off", f"--agent-run-name={reducer}",
                                    *xdist)
        verdicts[reducer] = result.ret
        summary = json.loads((pytester.path / "reports" / reducer / "summary.json").read_text())
        (check,) = [c for c in summary["gate"]["checks"] if "min_accuracy_check" in c]
        assert check["min_accuracy_check"]["accuracy"] == {"mean": 0.5, "all": 0.0,
                                                           "pass@k": 1.0}[reducer]
    assert verdicts == {"mean": 0, "all": 1, "pass@k": 0}


# --- per-encounter budgets -----------------------------------------------------------------

def test_the_budget_refuses_the_call_after_the_one_that_crossed_it() -> None:
    budget = EncounterBudget(max_tokens=100)
    budget.check()
    budget.charge(90, 0.0)
    budget.check()  # 90 <= 100: the next call may go
    budget.charge(30, 0.0)
    with pytest.raises(EncounterLimitReached, match="120 tokens"):
        budget.check()
    cost = EncounterBudget(max_cost_usd=0.01)
    cost.charge(0, 0.02)
    with pytest.raises(EncounterLimitReached, match=r"\$0.0200"):
        cost.check()


def _chatty_doctor(req: FakeRequest) -> FakeReply:
    """Never decides; every reply is 500 + 500 tokens."""
    del req
    return FakeReply("Tell me more about it?", prompt_tokens=500, completion_tokens=500)


def test_a_runaway_encounter_ends_as_limit(pytester: pytest.Pytester, fake_server: Start,
                                           xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in (1, 2)])
    server = fake_server(_chatty_doctor)
    result = pytester.runpytest(
        "c.yaml", "--agent-doctor=openai/fake-doctor", f"--agent-api-base={server.url}",
        "--agent-cache=off", "--agent-perception=no", "--agent-turns=20",
        "--agent-max-tokens-per-encounter=2500", "-p", "no:cacheprovider", *xdist)
    records = _records(pytester.path)
    assert [r["outcome"] for r in records] == ["limit", "limit"]
    for r in records:
        # Three calls (1,000 tokens each) crossed 2,500; the fourth was never sent.
        assert r["turns_used"] == 3 and r["usage"]["doctor"]["calls"] == 3
        assert "2,500" in r["error"]
    assert len(server.requests) == 6
    # Neither an error nor a misdiagnosis: a failed item whose message says limit.
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "limit: the encounter used 3,000 tokens" in out and "misdiagnosis" not in out
