"""The run's progress counters, which the status line shows and the cost limit reads.

Under pytest-xdist every worker writes its counters to a small JSON file in a directory the
controller creates; the controller sums them for the status line, and each worker sums them
to apply the cost limit to the whole run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from ..core.summable import Summable
from ..llm.stats import CallStats
from ..protocols.runner import EncounterRunner
from .repeating import Repeating

PROGRESS_DIR_KEY = "agentclinic_progress_dir"
#: Seconds between a worker's counter files under a cost limit: the other workers' limits
#: read them.
PUBLISH_EVERY = 0.25
#: Seconds between them without one: the controller's status line alone reads them, and
#: redraws at most every second unless ``--agent-progress`` asks for less.
STATUS_EVERY = 1.0


def publish_every(max_cost_usd: float | None, progress_every: float | None) -> float:
    """Seconds between a worker's counter files (0: none while the items run): as often
    as a reader looks. Four files a second from every worker, each a JSON dump and a file
    replaced, were ~0.3 ms of the process tree's CPU per call at 3,000 RPM under ``-n 8``
    when no cost limit read them."""
    if max_cost_usd is not None:
        return PUBLISH_EVERY
    if progress_every == 0:  # no status line: nothing reads them before the end
        return 0.0
    return min(progress_every or STATUS_EVERY, STATUS_EVERY)


@dataclass
class RunStatus(Summable):
    """A process's (or, summed, the whole run's) progress counters: its encounters, and its
    model calls as the caller counts them."""

    done: int = 0
    in_flight: int = 0
    unplayed: int = 0
    llm: CallStats = field(default_factory=CallStats)

    @classmethod
    def of(cls, runner: EncounterRunner, stats: CallStats) -> RunStatus:
        """This process's counters: its runner's encounters and a copy of its caller's
        calls (the caller goes on counting)."""
        return cls(done=runner.done, in_flight=runner.in_flight, unplayed=runner.unplayed,
                   llm=replace(stats))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunStatus:
        """The counters a process wrote (:class:`CounterFiles`)."""
        return cls(**{**data, "llm": CallStats(**data["llm"])})

    def projected_usd(self) -> float:
        """Spent, plus what the running encounters may still cost, plus one more encounter
        at the mean cost per finished encounter: what starting one more could bring.

        The running encounters count at the mean cost per encounter (more are started than
        calls are in flight when items chain many calls, e.g. CRAFT-MD conversations), and
        at least at their calls in flight at the mean cost per call (before any finished).
        """
        spent = self.llm.spent_usd
        per_encounter = spent / self.done if self.done else 0.0
        running = max(self.llm.in_flight * self.llm.mean_call_usd,
                      self.in_flight * per_encounter)
        return spent + running + per_encounter


class CounterFiles:
    """One JSON file of counters per process in a shared directory (xdist)."""

    def __init__(self, directory: Path, me: str) -> None:
        self.directory = directory
        self.me = me
        # The publishing thread and the runner's admissions both write this process's file.
        self._lock = threading.Lock()
        self._written: str | None = None

    def write(self, status: RunStatus) -> None:
        """Replace this process's file atomically (readers never see half a file); counters
        equal to those last written are not written again (a worker waiting for replies)."""
        text = json.dumps(asdict(status))
        path = self.directory / f"{self.me}.json"
        tmp = path.with_suffix(".tmp")
        with self._lock:
            if text == self._written:
                return
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
            self._written = text

    def read(self, skip_me: bool = False) -> RunStatus:
        """The sum of every process's last counters."""
        total = RunStatus()
        for path in self.directory.glob("*.json"):
            if skip_me and path.stem == self.me:
                continue
            with contextlib.suppress(OSError, ValueError, TypeError):
                total += RunStatus.from_json(json.loads(path.read_text(encoding="utf-8")))
        return total


class SharedCounters:
    """The whole run's counters as this process knows them; under xdist, the counter files
    (the controller makes their directory, each worker publishes its own)."""

    def __init__(self, config: pytest.Config, local: Callable[[], RunStatus],
                 every: float = PUBLISH_EVERY) -> None:
        self.local = local
        #: Seconds between a worker's files while its items run (0: only at their end).
        self.every = every
        workerinput = getattr(config, "workerinput", None)
        directory = workerinput.get(PROGRESS_DIR_KEY) if workerinput else None
        #: A worker's files (None: not an xdist worker).
        self.files = (CounterFiles(Path(directory), str(workerinput.get("workerid", os.getpid())))
                      if directory and workerinput is not None else None)
        #: The xdist controller's directory of its workers' files (None: no workers).
        self.own_dir: Path | None = None
        self._publisher = Repeating(self.publish, "agentclinic-counters")

    def status(self) -> RunStatus:
        """The whole run's counters as this process knows them."""
        mine = self.local()
        if self.files is not None:
            return mine + self.files.read(skip_me=True)
        if self.own_dir is not None:  # the xdist controller: its workers' files
            return mine + CounterFiles(self.own_dir, "controller").read()
        return mine

    def publish(self, started: int = 0) -> None:
        """Under xdist, write this worker's counters now, counting the encounters it starts
        (``started``): other workers' cost limits read them."""
        if self.files is None:
            return
        mine = self.local()
        mine.in_flight += started
        with contextlib.suppress(OSError):
            self.files.write(mine)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """The xdist controller: give every worker the counters directory."""
        if self.own_dir is None:
            self.own_dir = Path(tempfile.mkdtemp(prefix="agentclinic-progress-"))
        node.workerinput[PROGRESS_DIR_KEY] = str(self.own_dir)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self) -> Generator[None, object, object]:
        """A worker publishes its counters from a thread while its items run, and once more
        at the end."""
        if self.files is not None and self.every > 0:
            self._publisher.start(self.every)
        try:
            return (yield)
        finally:
            self._publisher.stop()
            if self.files is not None:
                self.files.write(self.local())

    def pytest_sessionfinish(self) -> None:
        """Remove the counters directory (the controller made it)."""
        if self.own_dir is not None:
            shutil.rmtree(self.own_dir, ignore_errors=True)
