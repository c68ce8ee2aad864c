"""The upstream AgentClinic files collect and run offline (read from ../shared, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import results

#: The upstream files and their case counts.
UPSTREAM = {"agentclinic_medqa.jsonl": 107, "agentclinic_nejm.jsonl": 15,
            "agentclinic_nejm_extended.jsonl": 120}


def test_upstream_files_run_offline(pytester: pytest.Pytester, shared: Path,
                                    xdist: list[str]) -> None:
    # One run of the three files per worker mode (each file's cases are still counted and
    # scored on their own): a run each cost the suite six more runs, two of them -n 2.
    result = pytester.runpytest(*(str(shared / "agentclinic" / name) for name in UPSTREAM),
                                "-p", "no:cacheprovider", *xdist)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == sum(UPSTREAM.values())
    assert "errors" not in outcomes
    records = results(pytester.path)
    assert all(r["outcome"] in ("correct", "incorrect") for r in records.values())
    assert sum(r["outcome"] == "correct" for r in records.values()) == outcomes.get("passed", 0)
    for name, count in UPSTREAM.items():
        outcome = [r["outcome"] for nodeid, r in records.items()
                   if Path(nodeid.split("::")[0]).name == name]
        assert len(outcome) == count, name
        # The baseline is honest but not empty: some right, most wrong.
        accuracy = outcome.count("correct") / count
        assert 0.05 < accuracy < 0.6, (name, accuracy)


def test_medqa_sidecar_gives_specialties(pytester: pytest.Pytester, shared: Path,
                                         xdist: list[str]) -> None:
    path = shared / "agentclinic" / "agentclinic_medqa.jsonl"
    result = pytester.runpytest(str(path), "-k", "dermatology", "--collect-only", "-q", *xdist)
    result.stdout.fnmatch_lines(["*medqa-0*[[]dermatology-offline[]]", "10/107 tests collected*"])
