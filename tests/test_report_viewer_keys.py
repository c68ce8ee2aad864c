"""``agentclinic view`` and ``export`` key items by everything that makes one (doctor,
patient, repeat, conditions): a run of several doctors or patients loses no flip and no
sample, and every exported log is one Inspect lists and reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentclinic import api
from pytest_agentclinic.core.transcript import Outcome


def record(run: str, case: int, doctor: str, outcome: Outcome, patient: str = "offline",
           sample: int = 0) -> api.ResultRecord:
    return api.ResultRecord(
        protocol="agentclinic", case_id=f"c-{case:02d}", dataset="d", specialty="s",
        models={"doctor": doctor, "patient": patient}, sample=sample, turn_budget=20,
        run=run, nodeid=f"c.yaml::c-{case:02d}[{doctor}-{patient}-{sample}]",
        outcome=outcome, expected="e", given="e" if outcome == "correct" else "x",
        turns_used=1, duration_s=0.1, started_at=1_700_000_000.0 + case)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_view_finds_every_flip_of_a_run_of_two_doctors(tmp_path: Path) -> None:
    """Doctor A goes from 100% to 0% on 10 cases while doctor B stays right: 10 flips."""
    runs: tuple[tuple[str, Outcome], ...] = (("before", "correct"), ("after", "incorrect"))
    for run, a_outcome in runs:
        api.write_records(tmp_path / run, [
            record(run, case, doctor, a_outcome if doctor == "a" else "correct")
            for case in range(10) for doctor in ("a", "b")])
    done = cli("view", "before", "after", "-o", "view.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "20 flipped item(s)" in done.stdout  # 10 items, each in both runs


def test_export_of_two_patients_and_colliding_names_loses_no_sample(tmp_path: Path) -> None:
    log_module = pytest.importorskip("inspect_ai.log")
    records = [record("r", case, doctor, "correct", patient, sample)
               for doctor in ("team/model", "team:model")  # both sanitise to team_model
               for patient in ("openai/p1", "openai/p2")
               for case in range(4) for sample in (0, 1)]
    api.write_records(tmp_path / "r", records)
    for _ in range(2):  # exported again: each log rewrites its own file
        done = cli("export", "--format", "inspect", "r", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    listed = log_module.list_eval_logs(str(tmp_path / "r" / "inspect"))
    assert len(listed) == 4 == len(list((tmp_path / "r" / "inspect").iterdir()))
    samples = 0
    for info in listed:
        log = log_module.read_eval_log(info)
        assert log.samples is not None
        pairs = [(s.id, s.epoch) for s in log.samples]
        assert len(pairs) == len(set(pairs)) == 8
        samples += len(log.samples)
    assert samples == len(records)
