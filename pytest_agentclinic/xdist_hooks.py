"""Hooks that exist only under pytest-xdist; registered only when xdist is installed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from .session import AgentClinicSession

WORKER_KEY = "agentclinic_run_name"


class XdistHooks:
    """Hands the controller's run name to every worker so all write one run directory."""

    def __init__(self, state: AgentClinicSession) -> None:
        self.state = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_KEY] = self.state.run_name


def worker_lookahead(config: pytest.Config) -> Any:
    """A lookahead over the worker's pending queue, so a worker runs its items concurrently.

    xdist gives a worker its items in batches; the queue is internal to xdist, so any change
    there degrades to running the current item only (still correct, just less concurrent).
    """
    interactor = next((p for p in config.pluginmanager.get_plugins()
                       if type(p).__name__ == "WorkerInteractor"), None)

    def lookahead(session: pytest.Session, item: pytest.Item) -> Sequence[pytest.Item]:
        try:
            with interactor.torun.lock() as queue:  # type: ignore[union-attr]
                pending = [i for i in queue if isinstance(i, int)]
            following = interactor.nextitem_index  # type: ignore[union-attr]
        except AttributeError:
            return [item]
        indices = ([following] if isinstance(following, int) else []) + pending
        return [item, *(session.items[i] for i in indices)]

    return lookahead
