"""The run directory's start under xdist: a previous run's workers' files go before this
run's workers start, and the manifest, written once the plan is known, keeps what this run's
workers wrote meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.runs.directory import clear_workers_results, read_manifest, start_run


def test_the_manifest_keeps_what_this_runs_workers_wrote_before_it(tmp_path: Path) -> None:
    # start_run removed every worker's results file when it wrote the manifest: a worker
    # that wrote records before the plan was known (every worker's collection) lost them.
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.gw3.jsonl").write_text('{"a previous run": 1}\n')
    clear_workers_results(run)  # the controller's session start, before its workers
    assert not (run / "results.gw3.jsonl").exists()
    (run / "results.gw0.jsonl").write_text('{"this run": 1}\n')  # a worker, early
    start_run(run, "run", 4, workers_cleared=True)
    assert (run / "results.gw0.jsonl").read_text() == '{"this run": 1}\n'
    manifest = read_manifest(run)
    assert manifest is not None and manifest.planned_items == 4


def test_without_workers_a_reused_run_starts_afresh_at_its_manifest(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.gw0.jsonl").write_text("{}\n")
    (run / "results.jsonl").write_text("{}\n")
    start_run(run, "run", 2)
    assert not (run / "results.gw0.jsonl").exists()
    assert (run / "results.jsonl").read_text() == ""


def test_a_reused_run_name_keeps_none_of_the_previous_runs_records(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    run = pytester.path / "reports" / "r"
    run.mkdir(parents=True)
    stale = json.dumps({"nodeid": "c.yaml::old[x]"})
    for name in ("results.jsonl", "results.gw0.jsonl", "results.gw5.jsonl"):
        (run / name).write_text(stale + "\n")
    pytester.runpytest("c.yaml", "-p", "no:randomly", "--agent-run-name=r",
                       *xdist).assert_outcomes(passed=4)
    lines = (run / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["nodeid"] for line in lines) == [
        f"c.yaml::t-{i:02d}[dermatology-offline]" for i in range(1, 5)]
    assert sorted(p.name for p in run.glob("results*.jsonl")) == ["results.jsonl"]
