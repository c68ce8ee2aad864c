"""The infrastructure audit kept as tests: a scripted server injects faults of every kind into
more than a thousand model calls; nothing may be lost, nothing scored as a wrong diagnosis,
and a rerun makes again only the calls that failed. Then kill -9 and resume, which re-bills
nothing. The server never sleeps but where a deadline is the point (hang, trickle)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import llm_args, make_case, write_yaml_cases

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]

#: Fault kinds a retry can fix: (status or transport fault, extra headers).
TRANSIENT: dict[str, FakeReply] = {
    "429": FakeReply("slow down", status=429),
    "429-retry-after": FakeReply("slow down", status=429, headers={"Retry-After": "0"}),
    "500": FakeReply("boom", status=500),
    "502": FakeReply("bad gateway", status=502),
    "503": FakeReply("unavailable", status=503),
    "504": FakeReply("gateway timeout", status=504),
    "reset": FakeReply(fault="reset"),
    "truncated": FakeReply(fault="truncated"),
    "malformed": FakeReply(fault="malformed"),
    "html": FakeReply(fault="html"),
    "no_choices": FakeReply(fault="no_choices"),
    "null_content": FakeReply(fault="null_content"),
    "bad_usage": FakeReply(fault="bad_usage"),
    "hang": FakeReply(fault="hang"),
    "trickle": FakeReply(fault="trickle", trickle=0.05),
}
#: Fault kinds no retry fixes: the item is an error at once.
FINAL: dict[str, FakeReply] = {
    "length": FakeReply("DIAGNOSIS READY: Cond", finish_reason="length"),
    "context-400": FakeReply("maximum context length exceeded", status=400),
}
KINDS = [*TRANSIENT, *FINAL]
#: Hang and trickle hold a call until its deadline: drawn rarely, to keep the suite fast.
_SLOW = ("hang", "trickle")
_DRAW = [k for k in TRANSIENT if k not in _SLOW] * 4 + list(_SLOW)


def _key(req: FakeRequest) -> str:
    body = json.dumps([req.body.get("model"), req.messages], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def _answer(req: FakeRequest) -> FakeReply:
    """What a healthy clinic says: the doctor asks, orders a test, then names the case's
    diagnosis (so every scored item must be correct)."""
    if req.role == "doctor":
        number = re.search(r"complaint (\d+)\.", req.system)
        steps = ["Where does it itch?", "REQUEST TEST: Skin biopsy",
                 f"DIAGNOSIS READY: Condition{number.group(1) if number else '?'} disease"]
        return FakeReply(steps[min(req.doctor_turn, 2)])
    if req.role == "patient" and "Now rate this doctor" in req.last_user:
        return FakeReply("Confidence: 8\nCompliance: 9\nConsultation: 7")
    if req.role == "patient":
        return FakeReply("On my elbows, doctor.")
    return FakeReply("RESULTS: Skin biopsy: typical findings")


class FaultyClinic:
    """Each distinct call gets a fault plan from its hash: none, 1-2 transient faults then
    success, a transient fault on every attempt, or a fault no retry fixes."""

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.answered: set[str] = set()  # keys that got a 200 completion
        self.lock = threading.Lock()
        self.healthy = False

    def plan(self, key: str) -> tuple[str | None, int]:
        h = int(key[:8], 16)
        roll = h % 100
        if self.healthy or roll < 50:
            return None, 0
        if roll < 95:
            return _DRAW[h // 100 % len(_DRAW)], 1 + h // 7 % 2
        if roll < 97:
            return _DRAW[h // 100 % len(_DRAW)], 99  # outlives the retries
        return list(FINAL)[h // 100 % len(FINAL)], 99

    def __call__(self, req: FakeRequest) -> FakeReply:
        key = _key(req)
        with self.lock:
            self.attempts[key] += 1
            kind, times = self.plan(key)
            if kind is not None and self.attempts[key] <= times:
                self.faults[kind] += 1
                return TRANSIENT.get(kind) or FINAL[kind]
            self.answered.add(key)
        return _answer(req)


def test_fault_suite_loses_nothing_and_scores_no_fault(pytester: pytest.Pytester,
                                                       fake_server: Start) -> None:
    n_cases = 120
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(n_cases)])
    clinic = FaultyClinic()
    server = fake_server(clinic)
    # The deadline is far above a healthy call's latency here, so only hang and trickle
    # faults meet it (a healthy call timed out would be answered, yet failed).
    # No backoff: placed after llm_args' own (the last value wins), or a call that meets a
    # 429 on every attempt would sleep its exponential backoff, 0.01 s doubling 15 times.
    common = ("c.yaml", *llm_args(server, ("doctor", "patient", "measurement")),
              "--agent-timeout=1", "--agent-backoff=0", "--agent-concurrency=16",
              "--agent-cache-dir=cache")
    first = pytester.runpytest(*common, "--agent-run-name=faulty")
    outcomes = first.parseoutcomes()
    records = _records(pytester.path / "reports" / "faulty")

    print(f"fault suite: {server.calls} calls, faults {dict(clinic.faults)}, {outcomes}")
    assert server.calls >= 1000, server.calls
    assert len([k for k in KINDS if clinic.faults[k]]) >= 14, clinic.faults
    # 0 lost: every item has exactly one record, and pytest saw every item end.
    assert len(records) == n_cases
    assert outcomes.get("passed", 0) + outcomes.get("errors", 0) == n_cases
    # 0 wrongly scored: a fault is an error, never a misdiagnosis or a missing diagnosis.
    by_outcome = Counter(r["outcome"] for r in records.values())
    assert set(by_outcome) <= {"correct", "error"}, by_outcome
    assert by_outcome["error"] == outcomes.get("errors", 0) > 0
    assert all(r["error"] for r in records.values() if r["outcome"] == "error")
    # Every error is one the client classified (given up after retries, or a request no
    # retry fixes), never a bare exception from reading a damaged reply.
    kinds = Counter(r["error"].split(":")[0] for r in records.values() if r["error"])
    assert set(kinds) <= {"InfrastructureError", "RequestError"}, kinds

    # The rerun, faults gone, makes again only the calls that never got an answer.
    answered_before = set(clinic.answered)
    clinic.healthy = True
    calls_before = server.calls
    second = pytester.runpytest(*common, "--agent-run-name=healthy")
    second.assert_outcomes(passed=n_cases)
    rerun = server.requests[calls_before:]
    assert rerun and not {_key(r) for r in rerun} & answered_before
    assert all(r["outcome"] == "correct"
               for r in _records(pytester.path / "reports" / "healthy").values())


def _cached_replies(directory: Path) -> int:
    """Replies (not served-model identities) in a response cache another process writes."""
    import diskcache

    if not (directory / "cache.db").exists():
        return 0
    with diskcache.Cache(str(directory)) as cache:
        return sum(1 for key in cache if "text" in (cache.get(key) or {}))


def _records(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return {r["nodeid"]: r for r in map(json.loads, lines)}


def test_kill_9_then_resume_rebills_nothing(pytester: pytest.Pytester,
                                            monkeypatch: pytest.MonkeyPatch,
                                            warm_litellm: None) -> None:
    tmp_path = pytester.path
    write_yaml_cases(tmp_path / "c.yaml", [make_case(i) for i in range(6)])
    answered: set[str] = set()
    stall, resuming = threading.Event(), threading.Event()

    def script(req: FakeRequest) -> FakeReply:
        # After 15 answers every request hangs: the run is killed mid-flight with calls
        # outstanding, and everything answered before has had time to reach the cache.
        if not resuming.is_set() and (stall.is_set() or len(answered) >= 15):
            stall.set()
            return FakeReply(fault="hang")
        answered.add(_key(req))
        return _answer(req)

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    env = dict(os.environ)
    with FakeOpenAIServer(script) as server:
        args = [sys.executable, "-m", "pytest", "c.yaml", "--agent-cache-dir=cache",
                "--agent-concurrency=4", *llm_args(server)]
        proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 600  # a bound for a hung run, never reached
            while not stall.is_set() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert stall.is_set(), "the run never reached the stall"
            # Wait for the answers to reach the cache, however slow the machine (a fixed
            # 0.5 s sleep rebilled a reply under load: issue 23).
            while _cached_replies(tmp_path / "cache") < 15 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        before = set(answered)
        resuming.set()
        first_new = server.calls
        # The resumed run in this process (litellm is imported here already).
        pytester.runpytest(*args[3:]).assert_outcomes(passed=6)
        rebilled = {_key(r) for r in server.requests[first_new:]} & before
        assert len(before) == 15 and not rebilled
