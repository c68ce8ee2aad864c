"""One typed, versioned run summary with one builder: the session, ``agentclinic report``,
``merge`` and ``import-craftmd`` write the same fields; a newer format is refused by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic import __version__, api
from pytest_agentclinic.core.transcript import Usage
from pytest_agentclinic.report import rundir
from pytest_agentclinic.runs.summary import SUMMARY_VERSION, RunSummary

COMPUTED = ("version", "plugin_version", "items", "model_calls", "cache_hits", "cache_misses",
            "served_models", "cost_usd", "uncached_cost_usd")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def records(run: str) -> list[api.ResultRecord]:
    return [api.ResultRecord(
        protocol="agentclinic", case_id=f"c-{i}", dataset="d", specialty="s",
        models={"doctor": "openai/m", "patient": "offline"}, sample=0, turn_budget=20,
        run=run, nodeid=f"c.yaml::c-{i}", outcome="correct", expected="e", given="e",
        turns_used=1, duration_s=0.1, served={"openai/m": "m-v1"},
        usage={"doctor": Usage(calls=3, cache_hits=1, cost_usd=0.02, saved_usd=0.01)})
        for i in range(3)]


def test_a_summary_rebuilt_from_the_records_keeps_what_the_builder_computes(
        tmp_path: Path) -> None:
    """`agentclinic report` of a run with no summary.json lost version, plugin_version,
    model_calls and served_models."""
    api.write_records(tmp_path / "r", records("r"))
    done = cli("report", "r", "--resamples=50", "--no-html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    RunSummary.model_validate(summary)
    assert summary["version"] == SUMMARY_VERSION and summary["plugin_version"] == __version__
    assert (summary["model_calls"], summary["cache_hits"], summary["cache_misses"]) == (9, 3, 6)
    assert summary["served_models"] == {"openai/m": ["m-v1"]}
    assert summary["cost_usd"] == pytest.approx(0.06)
    assert summary["uncached_cost_usd"] == pytest.approx(0.09)


def test_the_session_report_and_merge_write_the_same_fields(pytester: pytest.Pytester,
                                                            xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in (1, 2)])
    pytester.runpytest("c.yaml", "--agent-run-name=s", "-p", "no:cacheprovider", *xdist)
    run_dir = pytester.path / "reports" / "s"
    session = json.loads((run_dir / "summary.json").read_text())
    done = cli("report", str(run_dir), "--resamples=50", "--no-html", cwd=pytester.path)
    assert done.returncode == 0, done.stderr
    rebuilt = json.loads((run_dir / "summary.json").read_text())
    assert set(session) - {"tables", "by_doctor"} <= set(rebuilt)
    assert {k: rebuilt[k] for k in COMPUTED} == {k: session[k] for k in COMPUTED}
    # The shards are the merge's input, played in one process (test_cases_shard.py merges
    # shards played in each worker mode): the session's summary is what is under test here.
    for shard in (1, 2):
        pytester.runpytest("c.yaml", f"--agent-run-name=s{shard}", f"--agent-shard={shard}/2",
                           "-p", "no:cacheprovider")
    done = cli("merge", "reports/s1", "reports/s2", "--out", "merged", "--no-html",
               cwd=pytester.path)
    assert done.returncode == 0, done.stderr
    merged = json.loads((pytester.path / "merged" / "summary.json").read_text())
    RunSummary.model_validate(merged)
    assert {k: merged[k] for k in COMPUTED} == {k: session[k] for k in COMPUTED}


def test_a_summary_of_a_newer_format_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"version": SUMMARY_VERSION + 1}))
    with pytest.raises(ValueError, match=r"summary.json: summary format 2 is newer"):
        rundir.read_summary(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"version": "one"}))
    with pytest.raises(ValueError, match="not a summary format number"):
        rundir.read_summary(tmp_path)
