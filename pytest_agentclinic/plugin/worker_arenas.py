"""xdist's workers start with one glibc malloc arena (issue 37).

A worker's first thread besides its main one is execnet's, and it starts before any plugin
is configured: by the time :class:`.item_memory.ReturnFreedMemory` limits the arenas
(``mallopt``), that thread already has an arena of its own, whose free pages the worker
keeps (~3 MB a worker at 2,000 encounters with ``-n 8``). glibc reads ``MALLOC_ARENA_MAX``
once, when a process first allocates, so the limit must be in a worker's environment when
it starts. The controller of a run that plays cases puts it there just before xdist starts
its workers and takes it out again as soon as the last one is started; each worker takes it
out of its own environment as it configures (it has been read by then). So no subprocess
of anyone's tests inherits it, and a ``MALLOC_ARENA_MAX`` the user set is left alone.
Nothing is done where the C library is not glibc.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest

from .item_memory import ARENA_ENV, ARENAS, ARENAS_SET_KEY, is_glibc


class WorkerArenas:
    """Registered on the controller of a run that plays cases, under xdist."""

    def __init__(self, glibc: bool | None = None) -> None:
        self._glibc = is_glibc() if glibc is None else glibc
        #: Workers still to start while the variable is set by this plugin.
        self._pending = 0
        #: The gateways started with it.
        self._started: set[str] = set()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_setupnodes(self, config: pytest.Config, specs: Sequence[Any]) -> None:
        """Before the workers start: set the variable, unless the user has."""
        del config
        if self._glibc and specs and ARENA_ENV not in os.environ:
            os.environ[ARENA_ENV] = str(ARENAS)
            self._pending = len(specs)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_newgateway(self, gateway: Any) -> None:
        """A worker has started (with the environment as it was): after the last, the
        variable goes. A worker xdist starts later (one replacing a crashed one) starts
        without it."""
        if self._pending:
            self._started.add(str(gateway.id))
            self._pending -= 1
            if not self._pending:
                os.environ.pop(ARENA_ENV, None)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[ARENAS_SET_KEY] = str(node.gateway.id) in self._started

    def pytest_sessionfinish(self) -> None:
        """Were the workers' start cut short, the variable goes all the same."""
        if self._pending:
            self._pending = 0
            os.environ.pop(ARENA_ENV, None)

