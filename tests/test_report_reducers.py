"""Reducers over K trials (report/reducers.py): pass@k, majority, all-k, and the gate on one."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from helpers import each_mode_once, make_case, write_yaml_cases

from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.report.reducers import pass_at_k, reduce, reducer_table
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]


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


# The reducer does not change with the worker mode: each reducer runs in one mode, each mode
# with one reducer (three runs, not nine; the failing all-k under -n 2).
@pytest.mark.parametrize(("xdist", "reducer", "accuracy", "status"), each_mode_once(
    ("all", 0.0, 1), ("mean", 0.5, 0), ("pass@k", 1.0, 0)), indirect=["xdist"])
def test_gate_on_a_reducer(pytester: pytest.Pytester, fake_server: Start, xdist: list[str],
                           reducer: str, accuracy: float, status: int) -> None:
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
    result = pytester.runpytest(*base, f"--agent-gate-reducer={reducer}",
                                "--agent-cache=off", f"--agent-run-name={reducer}", *xdist)
    summary = json.loads((pytester.path / "reports" / reducer / "summary.json").read_text())
    (check,) = [c for c in summary["gate"]["checks"] if "min_accuracy_check" in c]
    assert check["min_accuracy_check"]["accuracy"] == accuracy
    assert result.ret == status
