"""plugin.executor and the item: the item reports from the Outcome the executor returns."""

from __future__ import annotations

import concurrent.futures
import json
import threading
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.plugin.executor import WAIT_TICK, EncounterExecutor

#: Replaces the executor's play with one returning made-up outcomes: no encounter is played,
#: nothing is written, and the items must report exactly what the outcomes say.
FAKE_EXECUTOR = """
from pytest_agentclinic.core.transcript import Transcript
from pytest_agentclinic.plugin.outcome import Outcome
from pytest_agentclinic.plugin.state import session_of

def fake_play(item, spec):
    case = spec.case
    header = session_of(item.config).protocol.header(spec).header()
    if case.id == "t-01":
        return Outcome(transcript=Transcript(**header, diagnosis="Made-up disease",
                                             outcome="incorrect"))
    if case.id == "t-02":
        return Outcome(unplayed="not played: made up")
    return Outcome(transcript=Transcript(**header, outcome="error"), failure="made-up failure")

def pytest_sessionstart(session):
    session_of(session.config).executor.play = fake_play
"""


def test_the_item_reports_what_the_returned_outcome_says(pytester: pytest.Pytester,
                                                         xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2), make_case(3)])
    pytester.makeconftest(FAKE_EXECUTOR)
    result = pytester.runpytest("c.yaml", "-rA", "--agent-run-name=fake", *xdist)
    result.assert_outcomes(failed=1, skipped=1, errors=1)
    result.stdout.fnmatch_lines_random([
        "misdiagnosis: Made-up disease", "SKIPPED*not played: made up",
        "made-up failure",
        "agentclinic: 1 item(s) not played, not judged (not played: made up)"])
    # The outcomes were made up: nothing played, nothing recorded.
    assert not list(pytester.path.glob("reports/fake/results*.jsonl")) or all(
        not p.read_text() for p in pytester.path.glob("reports/fake/results*.jsonl"))


#: Records, while each encounter item's setup runs (it plays the encounter and writes its
#: record), every call into a module of the plugin made from another module while the called
#: module is still below on the stack: the item asking the session and the session calling
#: back into the item (``item.spec``, ``item.transcript = ...``) is such a bounce.
BOUNCES = """
import json, os, sys
import json

import pytest

PLUGIN = os.sep + os.path.join("pytest_agentclinic", "plugin") + os.sep
bounces, calls = [], []

def module(frame):
    name = frame.f_code.co_filename
    return name.split(PLUGIN, 1)[1] if PLUGIN in name else None

def profile(frame, event, arg):
    if event != "call" or module(frame) is None:
        return
    calls.append(module(frame))
    caller = frame.f_back
    if caller is None or module(caller) == module(frame):
        return
    below = caller.f_back
    while below is not None:
        if module(below) == module(frame):
            bounces.append(f"{module(caller)} -> {module(frame)}.{frame.f_code.co_name}")
            return
        below = below.f_back

@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    sys.setprofile(profile)
    try:
        return (yield)
    finally:
        sys.setprofile(None)
        name = getattr(item.config, "workerinput", {}).get("workerid", "main")
        with open(f"bounces-{name}.json", "w") as fh:
            json.dump({"bounces": bounces, "calls": calls}, fh)
"""


def test_a_case_reaches_its_record_without_bouncing_between_modules(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    pytester.makeconftest(BOUNCES)
    pytester.runpytest("c.yaml", "--agent-run-name=b", *xdist).assert_outcomes(passed=2)
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("bounces-*.json")]
    # The trace saw the path: the item, the session's accessor, the executor, the recorder.
    called = {m for s in seen for m in s["calls"]}
    assert {"item.py", "state.py", "executor.py", "recorder.py"} <= called
    assert [b for s in seen for b in s["bounces"]] == []


class _CountedFuture(concurrent.futures.Future):  # type: ignore[type-arg]
    """A future that counts how often it is waited for."""

    calls = 0

    def result(self, timeout: float | None = None) -> object:
        self.calls += 1
        return super().result(timeout)


def _waiting(on_wait: Callable[[], None] | None) -> tuple[object, int]:
    executor = object.__new__(EncounterExecutor)
    executor.settings = SimpleNamespace(encounter_timeout=900.0)  # type: ignore[assignment]
    executor.on_wait = on_wait
    future = _CountedFuture()
    timer = threading.Timer(4 * WAIT_TICK, future.set_result, args=("played",))
    timer.start()
    try:
        return executor._wait(None, future), future.calls  # type: ignore[arg-type]
    finally:
        timer.cancel()


def test_an_item_no_one_is_called_back_for_sleeps_until_its_encounter_ends() -> None:
    # An xdist worker (no status line): its main thread was woken every WAIT_TICK for
    # nothing while each item waited, taking the interpreter's lock from the encounters.
    assert _waiting(None) == ("played", 1)


def test_the_status_line_is_called_back_while_an_item_waits() -> None:
    ticks: list[int] = []
    played, calls = _waiting(lambda: ticks.append(1))
    assert played == "played"
    assert len(ticks) >= 2 and calls == len(ticks) + 1
