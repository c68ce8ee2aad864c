"""Run-level events (plugin/events.py): kept by the process that met them, handed from an
xdist worker to its controller as JSON, told once by the run's owner."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

from pytest_agentclinic.llm.limits_server import SharedLimitsWarning
from pytest_agentclinic.plugin.events import RunEvents


def test_a_workers_events_reach_the_controller_counted_and_named() -> None:
    worker = RunEvents("gw1")
    threads = [threading.Thread(target=worker.warn, args=(SharedLimitsWarning("lost it"),))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    controller = RunEvents("main")
    controller.add_json(worker.to_json())
    controller.add_json("not json")  # a worker's damaged word is no event, and no error
    controller.add_json(None)
    extra: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        controller.emit(extra)
    assert [(w.category, str(w.message)) for w in caught] == [
        (SharedLimitsWarning, "lost it (xdist worker gw1, 3 times)")]
    assert extra["events"] == [{"process": "gw1", "message": "lost it", "count": 3,
                                "category": f"{SharedLimitsWarning.__module__}:"
                                            "SharedLimitsWarning"}]


def test_no_event_writes_nothing_and_warnings_as_errors_print(
        capsys: pytest.CaptureFixture[str]) -> None:
    extra: dict[str, Any] = {}
    RunEvents("main").emit(extra)
    assert extra == {}
    events = RunEvents("main")
    events.add({"process": "main", "category": "no.such:Module", "message": "told"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        events.emit(extra)  # -W error: printed, the run's end goes on
    assert capsys.readouterr().err == "told\n"
    assert extra["events"][0]["count"] == 1
