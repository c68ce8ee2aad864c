"""The daemon thread behind the status line's redraws and a worker's counter files."""

from __future__ import annotations

import threading

from pytest_agentclinic.plugin.repeating import Repeating


def test_calls_the_action_until_stopped() -> None:
    calls: list[str] = []
    third = threading.Event()

    def action() -> None:
        calls.append(threading.current_thread().name)
        if len(calls) == 3:
            third.set()

    repeating = Repeating(action, "test-repeating")
    repeating.start(0.01)
    assert third.wait(5)
    repeating.stop()
    seen = len(calls)
    assert not any(t.name == "test-repeating" for t in threading.enumerate())
    assert len(calls) == seen
    assert set(calls) == {"test-repeating"}


def test_waits_one_interval_before_the_first_call() -> None:
    calls: list[int] = []
    repeating = Repeating(lambda: calls.append(1), "test-repeating-slow")
    repeating.start(60)
    repeating.stop()
    assert calls == []


def test_stop_without_start_does_nothing() -> None:
    Repeating(lambda: None, "never-started").stop()
