"""Smoke runs on a subset (plugin/subset.py): --agent-limit, --agent-sample and the gate."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.plugin.subset import stratified
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, Script

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
