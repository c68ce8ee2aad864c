"""results.jsonl is written as items finish: a killed run keeps its finished records, and
``agentclinic report`` on it says how much of the run it covers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import make_case, write_yaml_cases

# The doctor answers at once, except on one case, where it hangs until the run is killed.
HANGING = """
import asyncio
from pytest_agentclinic.core.roles import Reply

class Doctor:
    model = "quick"
    prompt_version = "test-1"
    async def respond(self, view):
        if view.case.id == "t-06":
            await asyncio.sleep(3600)
        return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


def _lines(path: Path) -> list[str]:
    """The lines of results.jsonl and of the files xdist workers stream beside it."""
    files = [path, *sorted(path.parent.glob("results.*.jsonl"))] if path.parent.is_dir() else []
    return [line for f in files if f.exists() for line in f.read_text().splitlines()]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["no-xdist", "n2"])
def test_a_killed_run_keeps_its_finished_records(tmp_path: Path, workers: list[str]) -> None:
    write_yaml_cases(tmp_path / "c.yaml", [make_case(i) for i in range(1, 9)])
    (tmp_path / "conftest.py").write_text(HANGING)
    run_dir = tmp_path / "reports" / "killed"
    results = run_dir / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "c.yaml", "-p", "no:cacheprovider",
         "--agent-run-name=killed", "--agent-concurrency=1", *workers],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)  # its own process group: the kill reaches xdist's workers too
    try:
        deadline = time.monotonic() + 600  # a bound for a broken run, not a timing
        # Under xdist the other worker finishes its share while one waits on the hung case.
        while len(_lines(results)) < (2 if workers else 5) and time.monotonic() < deadline:
            assert proc.poll() is None, "the run ended by itself"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    records = [json.loads(line) for line in _lines(results)]
    assert len(records) >= (2 if workers else 5)
    assert len(records) < 8
    assert all(r["outcome"] == "correct" for r in records)
    assert len({r["nodeid"] for r in records}) == len(records)  # one writer, no duplicates
    assert json.loads((run_dir / "run.json").read_text())["planned_items"] == 8

    report = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "report",
                             str(run_dir), "--no-html", "--resamples=100"],
                            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert report.returncode == 0, report.stderr
    assert f"partial: {len(records)} of 8 items" in report.stdout
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["partial"] == f"partial: {len(records)} of 8 items"


def test_a_finished_run_is_not_partial_and_its_records_are_sorted(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    pytester.runpytest("c.yaml", "-p", "no:cacheprovider", "--agent-run-name=done",
                       "-k", "not t-03", *xdist).assert_outcomes(passed=3)
    run_dir = pytester.path / "reports" / "done"
    # Deselected items are not planned: the run is complete.
    assert json.loads((run_dir / "run.json").read_text())["planned_items"] == 3
    nodeids = [json.loads(line)["nodeid"] for line in _lines(run_dir / "results.jsonl")]
    assert nodeids == sorted(nodeids) and len(nodeids) == 3
    from pytest_agentclinic.cli import main

    assert main(["report", str(run_dir), "--no-html", "--resamples=100"]) == 0
    assert "partial" not in json.loads((run_dir / "summary.json").read_text())


def test_collect_only_writes_no_run_directory(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.runpytest("c.yaml", "--collect-only", "-p", "no:cacheprovider", *xdist)
    assert not (pytester.path / "reports").exists()


def test_a_run_killed_before_its_first_item_says_so(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_agentclinic.cli import main
    from pytest_agentclinic.report.rundir import start_run

    start_run(tmp_path / "run", "run", planned_items=5)
    assert main(["report", str(tmp_path / "run")]) == 2
    assert "holds no results (partial: 0 of 5 items: the run stopped before its first item " \
           "finished)" in capsys.readouterr().err
