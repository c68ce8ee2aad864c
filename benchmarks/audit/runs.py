"""Runs that collide or run out, each played for real in a temporary directory: a long id,
two sessions on one run name, a full disk (simulated ENOSPC), unwritable report and cache
directories, a damaged cache database, Ctrl-C during the final report, a killed xdist
controller, an encounter timeout. One row each (see ``benchmarks/bench_hostile.py``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

NO_CACHE = ("-p", "no:cacheprovider")

DOCTOR = """
import asyncio, errno, io, os, signal, time
from pathlib import Path
from pytest_agentclinic.core.roles import Reply
from pytest_agentclinic.core.transcript import Usage

MODE = os.environ.get("AUDIT_MODE", "")
_real_open = io.open
written = [0]

class Full:
    def __init__(self, fh):
        self._fh = fh
    def write(self, data):
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
    if MODE == "disk-full":
        io.open = full_open

def pytest_unconfigure(config):
    io.open = _real_open

def pytest_terminal_summary(terminalreporter):
    if MODE == "ctrl-c":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)

class Doctor:
    model, prompt_version = "audit", "1"
    async def respond(self, view):
        with _real_open("calls.log", "a") as fh:
            fh.write(view.case.id + "\\n")
        Path("started").touch()
        if MODE == "hold":
            await asyncio.sleep(3600)
        if MODE == "slow":
            await asyncio.sleep(0.3)
        if MODE == "stall":
            if view.history:
                await asyncio.Event().wait()
            return Reply("Any fever?", Usage(calls=1, cost_usd=0.25))
        return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


def _case(i: int, **over: Any) -> dict[str, Any]:
    case = {"id": f"t-{i:02d}", "specialty": "Dermatology",
            "objective": f"Diagnose complaint {i}.",
            "patient": {"demographics": "40-year-old woman", "history": f"Problem {i}.",
                        "symptoms": {"primary": "Itchy rash", "secondary": ["Fatigue"]}},
            "physical_exam": {"Skin": "Scaly plaques."},
            "tests": {"Skin Biopsy": f"Findings typical of condition{i} disease."},
            "diagnosis": f"Condition{i} disease"}
    case.update(over)
    return case


def _setup(root: Path, cases: list[dict[str, Any]]) -> None:
    (root / "c.yaml").write_text(yaml.safe_dump({"dataset": "audit", "cases": cases}))
    (root / "conftest.py").write_text(DOCTOR)


def _records(run_dir: Path) -> int:
    files = [run_dir / "results.jsonl", *run_dir.glob("results.*.jsonl")]
    return sum(1 for f in files if f.is_file() for line in f.read_text().splitlines()
               if line.strip())


def _pytest(root: Path, *args: str, mode: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "c.yaml", *NO_CACHE, *args],
                          cwd=root, capture_output=True, text=True, check=False,
                          env={**os.environ, "AUDIT_MODE": mode}, timeout=120)


def _start(root: Path, *args: str, mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "pytest", "c.yaml", *NO_CACHE, *args],
                            cwd=root, env={**os.environ, "AUDIT_MODE": mode},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _wait(condition: Callable[[], bool], limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def long_id(root: Path) -> tuple[str, str]:
    _setup(root, [_case(1, id="x" * 300, specialty="S" * 300)])
    result = _pytest(root, "--agent-run-name=r")
    names = [len(p.name) for p in (root / "reports/r/transcripts").glob("*.json")]
    return (f"exit {result.returncode}, transcript name {max(names, default=0)} characters",
            f"{_records(root / 'reports/r')} of 1")


def same_run_name(root: Path) -> tuple[str, str]:
    _setup(root, [_case(1), _case(2)])
    first = _start(root, "--agent-run-name=r", mode="hold")
    try:
        _wait(lambda: (root / "started").exists())
        second = _pytest(root, "--agent-run-name=r")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    named = f"pid {first.pid}" in second.stderr
    return (f"second session: exit {second.returncode}, "
            f"{'names the other pid' if named else 'other pid not named'}",
            f"{_records(root / 'reports/r')} mixed in")


def disk_full(root: Path) -> tuple[str, str]:
    _setup(root, [_case(i) for i in range(1, 17)])
    result = _pytest(root, "--agent-run-name=r", "--agent-concurrency=1", mode="disk-full")
    calls = len((root / "calls.log").read_text().split())
    leftovers = len(list(root.rglob("*.tmp")))
    return (f"exit {result.returncode}, {calls} of 16 called, {leftovers} .tmp left",
            f"{_records(root / 'reports/r')} of 2 written")


def unwritable_reports(root: Path) -> tuple[str, str]:
    _setup(root, [_case(1)])
    (root / "reports").write_text("a file where the directory should be")
    result = _pytest(root)
    lines = len(result.stderr.strip().splitlines())
    named = "cannot write the run directory" in result.stderr
    return (f"exit {result.returncode}, {lines} line{'s' if lines > 1 else ''}"
            f"{', names the directory' if named else ''}", "- (nothing run)")


def unwritable_cache(root: Path) -> tuple[str, str]:
    from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply

    _setup(root, [_case(1)])
    (root / "conftest.py").write_text("")
    (root / "cache").write_text("a file where the cache directory should be")
    with FakeOpenAIServer(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease")) as srv:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "c.yaml", "--agent-run-name=r",
             "--agent-cache-dir=cache", "--agent-doctor=openai/fake", "--agent-perception=no",
             f"--agent-api-base={srv.url}", *NO_CACHE], cwd=root, capture_output=True,
            text=True, check=False, timeout=120,
            env={**os.environ, "OPENAI_API_KEY": "sk-audit-key"})
    off = "running with the cache off" in result.stdout
    return (f"exit {result.returncode}, {'ran on, cache off (said once)' if off else 'no notice'}",
            f"{_records(root / 'reports/r')} of 1")


def damaged_cache_db(root: Path) -> tuple[str, str]:
    (root / "shard").mkdir()
    (root / "shard" / "cache.db").write_bytes(b"SQLite format 3\0" + b"\xff" * 4000)
    result = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "merge-cache",
                             "shard", "--out", "out"], cwd=root, capture_output=True,
                            text=True, check=False, timeout=60)
    lines = len(result.stderr.strip().splitlines())
    return f"exit {result.returncode}, {lines} line, no traceback", "-"


def ctrl_c_in_report(root: Path) -> tuple[str, str]:
    _setup(root, [_case(i) for i in range(1, 5)])
    result = _pytest(root, "--agent-run-name=r", mode="ctrl-c")
    broken = "INTERNALERROR" in result.stdout + result.stderr
    return (f"exit {result.returncode}{', INTERNALERROR' if broken else ''}",
            f"{_records(root / 'reports/r')} of 4")


def killed_controller(root: Path) -> tuple[str, str]:
    _setup(root, [_case(i) for i in range(1, 9)])
    proc = _start(root, "--agent-run-name=r", "--agent-concurrency=2", "-n", "2", mode="slow")
    try:
        _wait(lambda: (root / "started").exists())
        os.kill(proc.pid, signal.SIGSTOP)  # a controller that hears nothing more...
        _wait(lambda: _records(root / "reports/r") >= 2, 20)
        os.kill(proc.pid, signal.SIGKILL)  # ...then is killed
        proc.wait()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    calls = len((root / "calls.log").read_text().split())
    return f"kill -9 under -n 2 after {calls} calls", f"{_records(root / 'reports/r')} of 8"


def encounter_timeout(root: Path) -> tuple[str, str]:
    _setup(root, [_case(1)])
    _pytest(root, "--agent-run-name=r", "--agent-encounter-timeout=1", mode="stall")
    lines = (root / "reports/r/results.jsonl").read_text().splitlines()
    record = json.loads(lines[0]) if lines else {}
    usage = record.get("usage", {}).get("doctor", {})
    return (f"error in {record.get('timed_out_in')}, {record.get('turns_used')} turn, "
            f"${usage.get('cost_usd', 0)} kept", f"{len(lines)} of 1")


SCENARIOS: list[tuple[str, Callable[[Path], tuple[str, str]]]] = [
    ("id and specialty of 300 characters", long_id),
    ("two sessions, one --agent-run-name", same_run_name),
    ("disk full after 2 transcripts (ENOSPC)", disk_full),
    ("report directory not writable", unwritable_reports),
    ("cache directory not writable", unwritable_cache),
    ("merge-cache on a damaged cache.db", damaged_cache_db),
    ("Ctrl-C in pytest's final summary", ctrl_c_in_report),
    ("xdist controller stopped, then kill -9", killed_controller),
    ("encounter timeout after 1 answered call", encounter_timeout),
]


def rows() -> list[dict[str, Any]]:
    """One row per scenario, each run in its own temporary directory."""
    out = []
    for name, scenario in SCENARIOS:
        with tempfile.TemporaryDirectory(prefix="audit-runs-") as tmp:
            try:
                outcome, kept = scenario(Path(tmp))
            except Exception as exc:  # the row says so; the other scenarios still run
                outcome, kept = f"audit error: {type(exc).__name__}: {exc}"[:90], "?"
        out.append({"case": name, "outcome": outcome, "records_kept": kept,
                    "secrets_found": 0})
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)
