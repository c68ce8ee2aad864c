"""A daemon thread that does one thing every few seconds while a run's items run."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..core.threads import start_thread

#: Seconds ``stop`` waits for the thread: a tick stuck on a slow disk must not hold pytest.
JOIN_TIMEOUT = 5.0


class Repeating:
    """Calls ``action`` every ``every`` seconds from a daemon thread named ``name``, from
    :meth:`start` until :meth:`stop` (the status line's redraws, a worker's counter files)."""

    def __init__(self, action: Callable[[], None], name: str) -> None:
        self._action = action
        self._name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, every: float) -> None:
        """Start calling the action every ``every`` seconds (first after one interval)."""
        self._thread = start_thread(self._loop, every, name=self._name)

    def stop(self) -> None:
        """Stop the calls; wait (a little) for one under way to end. Safe when not started."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(JOIN_TIMEOUT)

    def _loop(self, every: float) -> None:
        while not self._stop.wait(every):
            self._action()
