"""A split run's staggered start: the controller sets up its first workers (the *leads*, one
per core) at once and holds the others' setup until the leads have started their first
encounters (their first model call is out: :func:`~.shares.signal_started`), or
:data:`HOLD_TIMEOUT_S` has passed.

Set up together, 8 workers' interpreters shared 2 cores from the start: each spent ~0.8 s of
CPU importing and collecting, so the first was ready only after ~4 s and the first request
came at ~4 s. A lead with a core to itself is ready after its own start, and plays its
share's first encounters before its controller sends them (:mod:`.shares`), while the held
workers start. The cores are busy all along, so the last collection reaches the controller no
later (measured earlier: the held workers no longer start against eight interpreters), nor
does xdist's first item, and the run's wall time against its RPM floor is not worse.

xdist calls ``pytest_configure_node`` in the controller for each node in turn, after starting
its bare interpreter and before sending it the code that imports pytest: a node held there
costs nothing meanwhile. A lead tells the controller by a file (its ``workerinput`` names it:
:data:`~.shares.LEAD_KEY`); a lead whose connection ended (it crashed) is not waited for,
nor is one on another machine (it cannot write the controller's file), and the wait ends at
the timeout whatever the leads do: a hung lead delays the others by that much at most. Only
the initial nodes take part (a crashed worker's replacement is set up at once), and only
when there are more workers than cores (``-n auto``, ``-n 1``: nothing is held).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from .settings import Settings
from .shares import LEAD_KEY

#: The longest the controller holds the other workers for its leads (seconds from the first
#: lead's setup). A lead's first call went out 1.4-1.8 s after the run's start at load 3.6,
#: 3-5 s at load 5-10 (2 cores shared with other work); past this the others start anyway
#: (the start of a run whose leads hang is this much later at worst).
HOLD_TIMEOUT_S = 4.0
#: How often the controller looks for its leads' files while it holds a node.
POLL_S = 0.01


def cores() -> int:
    """The cores this process may run on (its affinity, where the platform tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def lead_calls_per_s(settings: Settings, workers: int, leads: int) -> float | None:
    """The pace of one lead's calls, from the run's RPM (the largest given: ``--agent-rpm``
    or a deployment's): its even share of it over the ``workers`` (what each process paces
    on), or, with a limits server (``--agent-limits-url``), the ``leads``' share of it (the
    held workers take no slot of the shared schedule yet). None: no RPM is set."""
    call = settings.call
    rpms = [b.rpm for b in (call.budget, *call.budgets.values()) if b.rpm is not None]
    if not rpms or workers < 1 or leads < 1:
        return None
    return max(rpms) / 60 / (leads if call.limits_url else workers)


class Stagger:
    """The controller's staggered start of ``workers`` nodes with ``leads`` leads (none when
    ``leads`` is not below ``workers``). ``calls_per_s``: the pace of one lead's calls (its
    share of the run's RPM; None: no RPM is set), handed to the leads to size their start
    ahead (:func:`~.shares.lead_ahead`)."""

    def __init__(self, workers: int, leads: int, calls_per_s: float | None) -> None:
        self.leads = leads if 0 < leads < workers else 0
        self.held_per_lead = (workers - self.leads) / self.leads if self.leads else 0.0
        self.calls_per_s = calls_per_s
        self._folder: Path | None = None
        self._waiting: list[tuple[Any, Path]] = []  # (lead node, its signal file)
        self._deadline: float | None = None
        self._held = False  # the hold is over: every later node is set up at once
        #: How long the controller held its other workers (None: it held none).
        self.held_s: float | None = None

    def configure(self, node: Any, index: int) -> None:
        """A first node (share ``index``; not a replacement) is being set up: a lead is
        given its file; a later node waits for the leads (once: the hold ends for all)."""
        if not self.leads or self._held:
            return
        if index < self.leads:
            self._lead(node)
        else:
            self._hold()

    def _lead(self, node: Any) -> None:
        if self._deadline is None:
            self._deadline = time.monotonic() + HOLD_TIMEOUT_S
        if not getattr(node.gateway.spec, "popen", False):
            return  # another machine's: it cannot write our file, and is not waited for
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="agentclinic-leads-"))
        signal = self._folder / str(node.gateway.id)
        node.workerinput[LEAD_KEY] = [str(signal), self.calls_per_s, self.held_per_lead]
        self._waiting.append((node, signal))

    def _hold(self) -> None:
        """Wait until every lead has signalled or is down, or the timeout has passed."""
        started = time.monotonic()
        deadline = self._deadline if self._deadline is not None else started
        while self._waiting and time.monotonic() < deadline:
            self._waiting = [(node, signal) for node, signal in self._waiting
                             if not signal.exists() and not _down(node)]
            if self._waiting:
                time.sleep(POLL_S)
        self._held = True
        self.held_s = time.monotonic() - started
        self.close()

    def close(self) -> None:
        """Remove the leads' files (a lead that signals later writes into nothing)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _down(node: Any) -> bool:
    """Whether the node is gone (its process ended: it will never signal). xdist marks it
    when its connection ends (``shutting_down``, which its schedulers read too); execnet's
    channel stays open for sending then, and says nothing."""
    try:
        return bool(node.shutting_down)
    except Exception:  # a node we cannot ask: wait for the timeout
        return False
