"""Runs that collide or run out (issue 22, items 5 and 8 to 12): long names on disk, two
sessions on one run directory, a full disk, unwritable directories, a damaged cache,
Ctrl-C during the final report, a killed xdist controller, an encounter timeout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import each_mode_once, llm_args, make_case, write_yaml_cases

from pytest_agentclinic.report import rundir
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest

NO_CACHE = ("-p", "no:cacheprovider")


def _records(run_dir: Path) -> list[dict[str, object]]:
    """Every record on disk: results.jsonl and any file a worker streamed beside it."""
    files = [run_dir / "results.jsonl", *sorted(run_dir.glob("results.*.jsonl"))]
    return [json.loads(line) for f in files if f.exists()
            for line in f.read_text().splitlines() if line.strip()]


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp")]


# --- 5: long ids and specialties -----------------------------------------------------------

def test_long_ids_and_specialties_keep_their_records(pytester: pytest.Pytester,
                                                     xdist: list[str]) -> None:
    long_id = "x" * 300
    cases = [make_case(1, id=long_id + "-a", specialty="S" * 300),
             make_case(2, id=long_id + "-b")]  # the same first 300 characters
    write_yaml_cases(pytester.path / "c.yaml", cases)
    result = pytester.runpytest("c.yaml", "--agent-run-name=long", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=2)
    records = _records(pytester.path / "reports" / "long")
    assert sorted(str(r["case_id"]) for r in records) == [long_id + "-a", long_id + "-b"]
    names = [Path(str(r["transcript"])).name for r in records]
    assert len(set(names)) == 2  # no collision
    assert all(len(name.encode()) < 160 for name in names)
    assert all(Path(str(r["transcript"])).is_file() for r in records)


# --- 8: two sessions, one run directory ----------------------------------------------------

HOLD = """
import asyncio, os
from pathlib import Path
from pytest_agentclinic.core.roles import Reply

class Doctor:
    model, prompt_version = "holding", "1"
    async def respond(self, view):
        if os.environ.get("HOLD_RUN"):
            Path("holding").write_text("yes")
            await asyncio.sleep(3600)
        return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


def _wait_for(condition: object, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():  # type: ignore[operator]
        assert proc.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within 60 s"
        time.sleep(0.05)


def _start(path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=path,
                            env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def test_a_second_session_on_a_run_in_use_is_refused_naming_the_other(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    pytester.makeconftest(HOLD)
    first = _start(pytester.path, "c.yaml", "--agent-run-name=same", *NO_CACHE,
                   env={"HOLD_RUN": "1"})
    try:
        _wait_for(lambda: (pytester.path / "holding").exists(), first, "the first encounter")
        second = pytester.runpytest("c.yaml", "--agent-run-name=same", *NO_CACHE, *xdist)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert second.ret == pytest.ExitCode.USAGE_ERROR
    second.stderr.fnmatch_lines([f"*run directory*same is in use by another session "
                                 f"(pid {first.pid})*"])
    assert "Traceback" not in second.stderr.str() + second.stdout.str()
    assert _records(pytester.path / "reports" / "same") == []  # nothing mixed in
    # The first session is gone (killed): its lock went with it.
    pytester.runpytest("c.yaml", "--agent-run-name=same", *NO_CACHE,
                       *xdist).assert_outcomes(passed=2)
    assert len(_records(pytester.path / "reports" / "same")) == 2


def test_a_run_without_encounters_leaves_no_directory(pytester: pytest.Pytester,
                                                      xdist: list[str]) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    pytester.runpytest("test_plain.py", *NO_CACHE, *xdist).assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()


# --- 9: a full disk ------------------------------------------------------------------------

# Every transcript after the second meets a full disk (simulated at io.open, under any
# writer); the doctor logs each call it gets.
DISK_FULL = """
import errno, io
from pathlib import Path
from pytest_agentclinic.core.roles import Reply

_real_open = io.open
written = [0]

class Full:
    def __init__(self, fh):
        self._fh = fh
    def write(self, data):
        self._fh.write(data[: len(data) // 2])  # half a file reaches the disk
        raise OSError(errno.ENOSPC, "No space left on device")
    def __getattr__(self, name):
        return getattr(self._fh, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self._fh.close()

def full_open(file, mode="r", *args, **kwargs):
    fh = _real_open(file, mode, *args, **kwargs)
    if "transcripts" in str(file) and "w" in mode:
        written[0] += 1
        if written[0] > 2:
            return Full(fh)
    return fh

def pytest_configure(config):
    io.open = full_open

def pytest_unconfigure(config):
    io.open = _real_open

class Doctor:
    model, prompt_version = "logging", "1"
    async def respond(self, view):
        with _real_open("calls.log", "a") as fh:
            fh.write(view.case.id + "\\n")
        return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


def test_a_full_disk_stops_the_calls_and_keeps_what_was_written(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    cases = 16
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, cases + 1)])
    pytester.makeconftest(DISK_FULL)
    result = pytester.runpytest("c.yaml", "--agent-run-name=full", "--agent-concurrency=1",
                                *NO_CACHE, *xdist)
    assert result.ret != 0
    out = result.stdout.str()
    assert "no space left to write the run" in out
    assert "Traceback" not in out and "OSError" not in out
    calls = (pytester.path / "calls.log").read_text().split()
    # Stopped: the items not yet started cost nothing (each process had at most its
    # lookahead in flight when the disk filled).
    assert len(calls) < cases
    run_dir = pytester.path / "reports" / "full"
    records = _records(run_dir)
    assert 2 <= len(records) < cases
    assert all(Path(str(r["transcript"])).is_file() for r in records)
    assert _leftovers(pytester.path) == []


# The disk fills while report.html is written, after every record reached the disk.
FULL_AT_REPORT = """
import errno
from pytest_agentclinic.report import rundir

_page = rundir._page

def full_page(write, *args):
    write("<html>")
    raise OSError(errno.ENOSPC, "No space left on device")

def pytest_configure(config):
    rundir._page = full_page

def pytest_unconfigure(config):
    rundir._page = _page  # in-process runs share the module with the tests that follow
"""


def test_a_full_disk_at_the_final_report_keeps_the_records(pytester: pytest.Pytester,
                                                           xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 4)])
    pytester.makeconftest(FULL_AT_REPORT)
    result = pytester.runpytest("c.yaml", "--agent-run-name=late", *NO_CACHE, *xdist)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["agentclinic: could not write the reports in */late: No space "
                                 "left on device; the records written so far are kept there"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    run_dir = pytester.path / "reports" / "late"
    assert len(rundir.load_records(run_dir)) == 3
    assert not (run_dir / "report.html").exists()
    assert _leftovers(pytester.path) == []


# --- 10: unwritable directories, a damaged cache -------------------------------------------

def test_an_unwritable_report_directory_is_one_usage_line(pytester: pytest.Pytester,
                                                         xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    # Root writes anywhere: a file where the directory should be stands for "read-only".
    (pytester.path / "reports").write_text("not a directory")
    result = pytester.runpytest("c.yaml", *NO_CACHE, *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: agentclinic: cannot write the run directory */reports/*: Not a directory"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert len(result.stderr.str().strip().splitlines()) == 1


def _right(req: FakeRequest) -> FakeReply:
    del req
    return FakeReply("DIAGNOSIS READY: Condition1 disease")


def test_an_unwritable_cache_runs_on_with_the_cache_off(
        pytester: pytest.Pytester, fake_server: object, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    (pytester.path / "cache").write_text("a file where the cache directory should be")
    server: FakeOpenAIServer = fake_server(_right)  # type: ignore[operator]
    result = pytester.runpytest("c.yaml", "--agent-cache-dir=cache", "--agent-perception=no",
                                *llm_args(server, ("doctor",)), *xdist)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agentclinic: the response cache *cache cannot be written "
                                 "(*): running with the cache off"])
    assert server.calls == 1


def test_merge_cache_on_a_damaged_database_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_agentclinic.cli import main

    (tmp_path / "shard").mkdir()
    (tmp_path / "shard" / "cache.db").write_bytes(b"SQLite format 3\0" + b"\xff" * 4000)
    assert main(["merge-cache", str(tmp_path / "shard"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"agentclinic merge-cache: {tmp_path / 'shard'}: not a readable response "
                   f"cache (file is not a database)"]


# --- 11: Ctrl-C during the final report; a killed xdist controller --------------------------

# Ctrl-C (SIGINT to itself) inside pytest's own summary, after this plugin's reports.
INTERRUPT_SUMMARY = """
import os, signal, time

def pytest_terminal_summary(terminalreporter):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)
    terminalreporter.write_line("summary went on")
"""

# Ctrl-C while report.html is being written.
INTERRUPT_HTML = """
import os, signal, time
from pytest_agentclinic.report import rundir

_page = rundir._page

def interrupted_page(write, *args):
    write("<html>")
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)
    _page(write, *args)

rundir._page = interrupted_page
"""


# Where the report is interrupted does not change with the worker mode (the controller
# writes the reports in each): each place is interrupted in one mode or two, each mode once.
@pytest.mark.parametrize(("xdist", "conftest"), each_mode_once(
    INTERRUPT_HTML, INTERRUPT_SUMMARY, ids=("in-report-html", "in-pytest-summary")),
    indirect=["xdist"])
def test_ctrl_c_during_the_final_report_exits_2_keeping_every_record(
        pytester: pytest.Pytester, xdist: list[str], conftest: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    pytester.makeconftest(conftest)
    result = pytester.runpytest_subprocess("c.yaml", "--agent-run-name=cc", *NO_CACHE, *xdist)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    assert "INTERNALERROR" not in out and "Traceback" not in out
    run_dir = pytester.path / "reports" / "cc"
    records = rundir.load_records(run_dir)
    assert sorted(r.case_id for r in records) == ["t-01", "t-02", "t-03", "t-04"]
    assert _leftovers(pytester.path) == []
    if conftest is INTERRUPT_HTML:
        assert "interrupted while writing the reports; every finished record is kept" in out
        assert not (run_dir / "report.html").exists()


# Each doctor call takes a moment; the first item each worker runs leaves a mark, so the
# test knows both workers hold items (xdist runs an item once the next is there). Not the
# first doctor call: a worker of a split run starts its share's first encounters as soon as
# it has collected, before the controller has sent it any item, and a controller stopped
# then leaves that worker nothing to record.
SLOW = """
import asyncio
import os
from pathlib import Path
from pytest_agentclinic.core.roles import Reply

class Doctor:
    model, prompt_version = "slow", "1"
    async def respond(self, view):
        await asyncio.sleep(0.3)
        return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None

def pytest_runtest_setup(item):
    Path("started-" + os.environ["PYTEST_XDIST_WORKER"]).touch()
"""


def test_workers_keep_their_records_when_the_controller_is_killed(tmp_path: Path) -> None:
    write_yaml_cases(tmp_path / "c.yaml", [make_case(i) for i in range(1, 9)])
    (tmp_path / "conftest.py").write_text(SLOW)
    run_dir = tmp_path / "reports" / "ctl"
    proc = _start(tmp_path, "c.yaml", "--agent-run-name=ctl", "--agent-concurrency=2",
                  "-n", "2", *NO_CACHE)
    try:
        _wait_for(lambda: len(list(tmp_path.glob("started-*"))) == 2, proc,
                  "an item running on each worker")
        # The controller hears nothing more (a busy or hung controller), then is killed;
        # the workers play on what they hold.
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 30
        while len(_records(run_dir)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the workers
    kept = rundir.load_records(run_dir)
    assert len(kept) >= 2
    assert len({r.nodeid for r in kept}) == len(kept)
    assert all(r.outcome == "correct" for r in kept)
    # The report rebuilt from the run directory finds the workers' records.
    report = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "report",
                             str(run_dir), "--no-html", "--resamples=100"],
                            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert report.returncode == 0, report.stderr
    assert json.loads((run_dir / "summary.json").read_text())["items"] == len(kept)


def test_the_controller_merges_the_workers_files(pytester: pytest.Pytester) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 7)])
    pytester.runpytest("c.yaml", "--agent-run-name=m", "-n", "2",
                       *NO_CACHE).assert_outcomes(passed=6)
    run_dir = pytester.path / "reports" / "m"
    assert list(run_dir.glob("results.*.jsonl")) == []
    nodeids = [json.loads(line)["nodeid"] for line in
               (run_dir / "results.jsonl").read_text().splitlines()]
    assert nodeids == sorted(nodeids) and len(nodeids) == 6


# --- 12: an encounter that times out -------------------------------------------------------

# The doctor asks one question (a billed call), then never answers again.
STALLS = """
import asyncio
from pytest_agentclinic.api import Reply
from pytest_agentclinic.core.transcript import Usage

class Doctor:
    model, prompt_version = "stalling", "1"
    async def respond(self, view):
        if view.history:
            await asyncio.Event().wait()
        return Reply("Any fever?", Usage(calls=1, prompt_tokens=50, completion_tokens=5,
                                         cost_usd=0.25))

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


def test_a_timed_out_encounter_keeps_its_partial_transcript(pytester: pytest.Pytester,
                                                            xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.makeconftest(STALLS)
    result = pytester.runpytest("c.yaml", "--agent-run-name=slow",
                                "--agent-encounter-timeout=1", *NO_CACHE, *xdist)
    result.assert_outcomes(errors=1)
    (record,) = _records(pytester.path / "reports" / "slow")
    assert record["outcome"] == "error"
    assert record["timed_out_in"] == "turn 2: doctor"
    assert record["turns_used"] == 1
    usage = record["usage"]
    assert isinstance(usage, dict) and usage["doctor"]["cost_usd"] == 0.25
    assert "in turn 2: doctor" in str(record["error"])
    transcript = json.loads(Path(str(record["transcript"])).read_text())
    assert [(u["role"], u["kind"]) for u in transcript["utterances"]] == [
        ("doctor", "question"), ("patient", "answer")]
    assert transcript["timed_out_in"] == "turn 2: doctor"
