"""The run's progress counters: each process's file, summed for the status line and the cost
limit."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_agentclinic.llm.stats import CallStats
from pytest_agentclinic.plugin.counters import (
    PROGRESS_DIR_KEY,
    PUBLISH_EVERY,
    STATUS_EVERY,
    CounterFiles,
    RunStatus,
    SharedCounters,
    publish_every,
)
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


def test_counters_equal_to_the_last_written_are_not_written_again(tmp_path: Path) -> None:
    files = CounterFiles(tmp_path, "gw0")
    files.write(RunStatus(done=1))
    (tmp_path / "gw0.json").unlink()
    files.write(RunStatus(done=1))  # a worker waiting for replies: nothing changed
    assert not (tmp_path / "gw0.json").exists()
    files.write(RunStatus(done=2))
    assert CounterFiles(tmp_path, "controller").read().done == 2


def test_a_worker_publishes_as_often_as_a_reader_looks() -> None:
    # A cost limit: the other workers' limits read the files four times a second.
    assert publish_every(1.0, None) == PUBLISH_EVERY == 0.25
    assert publish_every(1.0, 0) == PUBLISH_EVERY
    # None: only the controller's status line, redrawn at most every second...
    assert publish_every(None, None) == STATUS_EVERY == 1.0
    assert publish_every(None, 30.0) == STATUS_EVERY
    assert publish_every(None, 0.5) == 0.5  # ... unless --agent-progress asks for less
    assert publish_every(None, 0) == 0.0  # no line: nothing reads them before the end


def test_a_worker_that_no_one_reads_writes_its_counters_once_at_the_end(
        tmp_path: Path) -> None:
    config = SimpleNamespace(workerinput={PROGRESS_DIR_KEY: str(tmp_path), "workerid": "gw3"})
    done = [0]

    def local() -> RunStatus:
        done[0] += 1
        return RunStatus(done=done[0])

    counters = SharedCounters(config, local, every=0.0)  # type: ignore[arg-type]
    loop = counters.pytest_runtestloop()
    next(loop)
    time.sleep(0.3)  # a publisher would have written by now
    assert not (tmp_path / "gw3.json").exists()
    with contextlib.suppress(StopIteration):
        loop.send(None)
    assert CounterFiles(tmp_path, "controller").read().done == 1
