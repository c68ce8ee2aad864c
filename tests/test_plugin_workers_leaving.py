"""When a split xdist run's controller warms its final reports: once half its workers have
finished (issue 37, peak memory). At the first, the finished worker was still exiting and
the others held their items, so the controller's growth (numpy, the parsed records) was the
process tree's peak."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_agentclinic.plugin.xdist_hooks import XdistHooks, leaving_point
from pytest_agentclinic.plugin.xdist_split import Shares


class Reports:
    def __init__(self) -> None:
        self.leaving = 0

    def workers_leaving(self) -> None:
        self.leaving += 1


def _hooks(workers: int) -> tuple[XdistHooks, Reports]:
    reports = Reports()
    config = SimpleNamespace(getvalue=lambda name: "load", option=SimpleNamespace())
    state: Any = SimpleNamespace(
        config=config, reports=reports, events=SimpleNamespace(add_json=lambda data: None),
        settings=SimpleNamespace(subset=SimpleNamespace(description=None)))
    hooks = XdistHooks(state)
    assert hooks.split
    hooks.shares = Shares(workers)
    return hooks, reports


@pytest.mark.parametrize(("workers", "warmed_at"), [(8, 4), (7, 4), (3, 2), (2, 2), (1, 2)])
def test_the_reports_are_warmed_once_half_the_workers_have_finished(
        workers: int, warmed_at: int) -> None:
    assert leaving_point(workers) == warmed_at
    hooks, reports = _hooks(workers)
    seen = []
    for _ in range(workers):
        hooks.pytest_testnodedown(SimpleNamespace(workeroutput={}), None)
        seen.append(reports.leaving)
    # Once, at that worker; a run of one worker warms them at its session's finish.
    assert seen == [int(i + 1 >= warmed_at) for i in range(workers)]
