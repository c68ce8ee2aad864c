"""The run's progress counters: each process's file, summed for the status line and the cost
limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentclinic.llm.stats import CallStats
from pytest_agentclinic.plugin.counters import CounterFiles, RunStatus
from pytest_agentclinic.plugin.status_line import status_text


def test_the_processes_files_are_summed_encounters_and_calls_alike(tmp_path: Path) -> None:
    a = RunStatus(done=2, in_flight=1,
                  llm=CallStats(calls=5, prompt_tokens=1_000, completion_tokens=500,
                                paid_calls=4, spent_usd=0.5, in_flight=1))
    b = RunStatus(done=1, unplayed=3, llm=CallStats(calls=2, cache_hits=2, retries=1))
    CounterFiles(tmp_path, "gw0").write(a)
    CounterFiles(tmp_path, "gw1").write(b)
    total = CounterFiles(tmp_path, "controller").read()
    assert (total.done, total.in_flight, total.unplayed) == (3, 1, 3)
    assert (total.llm.calls, total.llm.cache_hits, total.llm.retries) == (7, 2, 1)
    assert CounterFiles(tmp_path, "gw0").read(skip_me=True) == b
    # Spent, the running encounter at the mean per encounter (0.5 / 3, above one call in
    # flight at 0.5 / 4), and one more encounter.
    assert total.projected_usd() == pytest.approx(0.5 + 0.5 / 3 + 0.5 / 3)
    line = status_text(total, 10, 30.0)
    assert "3/10 done, 1 in flight | 7 calls (2 cached) | 1 retries" in line
    assert "1.5k tokens, $0.5000 | 3 not played" in line
