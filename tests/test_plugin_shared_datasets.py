"""The upstream AgentClinic files collect and run offline (read from ../shared, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import results


@pytest.mark.parametrize(("name", "count"), [("agentclinic_medqa.jsonl", 107),
                                             ("agentclinic_nejm.jsonl", 15),
                                             ("agentclinic_nejm_extended.jsonl", 120)])
def test_upstream_file_runs_offline(pytester: pytest.Pytester, shared: Path, name: str,
                                    count: int, xdist: list[str]) -> None:
    result = pytester.runpytest(str(shared / "agentclinic" / name), "-p", "no:cacheprovider",
                                *xdist)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == count
    assert "errors" not in outcomes
    records = results(pytester.path)
    assert len(records) == count
    assert all(r["outcome"] in ("correct", "incorrect") for r in records.values())
    # The baseline is honest but not empty: some right, most wrong.
    accuracy = outcomes.get("passed", 0) / count
    assert 0.05 < accuracy < 0.6


def test_medqa_sidecar_gives_specialties(pytester: pytest.Pytester, shared: Path,
                                         xdist: list[str]) -> None:
    path = shared / "agentclinic" / "agentclinic_medqa.jsonl"
    result = pytester.runpytest(str(path), "-k", "dermatology", "--collect-only", "-q", *xdist)
    result.stdout.fnmatch_lines(["*medqa-0*[[]dermatology-offline[]]", "10/107 tests collected*"])
