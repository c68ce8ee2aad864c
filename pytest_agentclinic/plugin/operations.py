"""Running at scale: shards, the live status line, and the cost limit.

* ``--agent-shard K/N`` keeps the items of the cases that hash to shard K (see
  :func:`~.cases.shard.shard_of`); ``agentclinic merge`` joins the shards' runs.
* The status line: encounters done / in flight / total, calls, cache hits, retries, 429s,
  tokens, cost so far and an ETA. On a terminal it is drawn below pytest's progress line and
  redrawn in place (every second, or every ``--agent-progress S``); it is erased before pytest
  writes, so its progress lines stay whole, and at the end, so no copy of it is left in the
  scrollback. Otherwise (CI logs) it is a line every 30 s (or S), and a run that showed it
  ends with it once more, with the run's totals.
* ``--agent-max-cost USD``: no new encounter starts once the spent cost, plus the running
  encounters at the running mean cost per encounter (at least their calls in flight at the
  mean cost per call), plus one more encounter, would pass the limit. Finished encounters
  are kept; unplayed items are skipped, not judged, and the summary says the run stopped on
  cost.

Under pytest-xdist every worker writes its counters to a small JSON file in a directory the
controller creates; the controller sums them for the line, and each worker sums them to
apply the cost limit to the whole run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Generator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pytest

from ..cases import formats
from ..cases.shard import shard_of
from .collect import UNPLAYED_PROPERTY, EncounterItem
from .session import AgentClinicSession

PROGRESS_DIR_KEY = "agentclinic_progress_dir"
#: Seconds between status lines when the output is not a terminal.
LOG_EVERY = 30.0
#: Seconds between live refreshes on a terminal.
LIVE_EVERY = 1.0
#: Seconds between a worker's counter files: the other workers' cost limit reads them.
PUBLISH_EVERY = 0.25


@dataclass
class RunStatus:
    """A process's (or, summed, the whole run's) progress counters."""

    done: int = 0
    in_flight: int = 0
    unplayed: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    rate_limited: int = 0
    tokens: int = 0
    paid_calls: int = 0
    spent_usd: float = 0.0
    calls_in_flight: int = 0

    def __add__(self, other: RunStatus) -> RunStatus:
        return RunStatus(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                            for f in fields(self)})

    @classmethod
    def of(cls, state: AgentClinicSession) -> RunStatus:
        """This process's counters."""
        runner, stats = state.runner, state.caller.stats
        return cls(done=runner.done, in_flight=runner.in_flight, unplayed=runner.unplayed,
                   calls=stats.calls, cache_hits=stats.cache_hits, retries=stats.retries,
                   rate_limited=stats.rate_limited,
                   tokens=stats.prompt_tokens + stats.completion_tokens,
                   paid_calls=stats.paid_calls, spent_usd=stats.spent_usd,
                   calls_in_flight=stats.in_flight)

    def projected_usd(self) -> float:
        """Spent, plus what the running encounters may still cost, plus one more encounter
        at the mean cost per finished encounter: what starting one more could bring.

        The running encounters count at the mean cost per encounter (more are started than
        calls are in flight when items chain many calls, e.g. CRAFT-MD conversations), and
        at least at their calls in flight at the mean cost per call (before any finished).
        """
        per_call = self.spent_usd / self.paid_calls if self.paid_calls else 0.0
        per_encounter = self.spent_usd / self.done if self.done else 0.0
        running = max(self.calls_in_flight * per_call, self.in_flight * per_encounter)
        return self.spent_usd + running + per_encounter

    def line(self, total: int | None, elapsed: float) -> str:
        """The status line."""
        of = f"/{total}" if total else ""
        parts = [f"agentclinic: {self.done}{of} done, {self.in_flight} in flight",
                 f"{self.calls} calls ({self.cache_hits} cached)",
                 f"{self.retries} retries, {self.rate_limited} x 429",
                 f"{_thousands(self.tokens)} tokens, ${self.spent_usd:.4f}"]
        if self.unplayed:
            parts.append(f"{self.unplayed} not played (cost limit)")
        remaining = (total or 0) - self.done - self.unplayed
        if self.done and remaining > 0:
            parts.append(f"ETA {_duration(elapsed / self.done * remaining)}")
        parts.append(f"elapsed {_duration(elapsed)}")
        return " | ".join(parts)


def _thousands(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class CounterFiles:
    """One JSON file of counters per process in a shared directory (xdist)."""

    def __init__(self, directory: Path, me: str) -> None:
        self.directory = directory
        self.me = me
        # The publishing thread and the runner's admissions both write this process's file.
        self._lock = threading.Lock()

    def write(self, status: RunStatus) -> None:
        """Replace this process's file atomically (readers never see half a file)."""
        path = self.directory / f"{self.me}.json"
        tmp = path.with_suffix(".tmp")
        with self._lock:
            tmp.write_text(json.dumps(asdict(status)), encoding="utf-8")
            os.replace(tmp, path)

    def read(self, skip_me: bool = False) -> RunStatus:
        """The sum of every process's last counters."""
        total = RunStatus()
        for path in self.directory.glob("*.json"):
            if skip_me and path.stem == self.me:
                continue
            with contextlib.suppress(OSError, ValueError, TypeError):
                total += RunStatus(**json.loads(path.read_text(encoding="utf-8")))
        return total


class OperationsPlugin:
    """Shards the collection, shows the status line, and applies the cost limit."""

    def __init__(self, state: AgentClinicSession) -> None:
        self.state = state
        self.ops = state.settings.operations
        self.total: int | None = None
        self.unplayed_reports = 0
        self.started = time.monotonic()
        self._write_lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._line_is_last = False
        #: On a terminal: the column pytest's line was at when the line was drawn below it
        #: (None: not drawn; -1: drawn on pytest's empty line, nothing to go back up to).
        self._drawn_at: int | None = None
        #: Whether a status line was printed: then the run ends with one more, of its totals.
        self._shown = False
        self._every, self._live, self._last = 0.0, False, 0.0
        self._own_dir: Path | None = None
        workerinput = getattr(state.config, "workerinput", None)
        directory = workerinput.get(PROGRESS_DIR_KEY) if workerinput else None
        self.files = (CounterFiles(Path(directory), str(workerinput.get("workerid", os.getpid())))
                      if directory and workerinput is not None else None)
        state.runner.admit = self.admit

    # ------------------------------------------------------------------ shards

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """Keep this shard's cases (after ``-k``/``-m``, so every machine selects alike)."""
        shard = self.ops.shard
        if shard is not None:
            keep: list[pytest.Item] = []
            drop: list[pytest.Item] = []
            for item in items:
                mine = not isinstance(item, EncounterItem) or shard_of(
                    *item.case_key, shard[1]) == shard[0]
                (keep if mine else drop).append(item)
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = keep
        self.total = sum(isinstance(i, EncounterItem) for i in items)

    # -------------------------------------------------------------- cost limit

    def status(self) -> RunStatus:
        """The whole run's counters as this process knows them."""
        mine = RunStatus.of(self.state)
        if self.files is not None:
            return mine + self.files.read(skip_me=True)
        if self._own_dir is not None:  # the xdist controller: its workers' files
            return mine + CounterFiles(self._own_dir, "controller").read()
        return mine

    def admit(self) -> str | None:
        """Whether one more encounter may start (runs on the runner's loop)."""
        limit = self.ops.max_cost_usd
        if limit is None:
            return None
        status = self.status()
        projected = status.projected_usd()
        if projected <= limit:
            self._publish(started=1)
            return None
        self._publish()
        return (f"not played: --agent-max-cost ${limit:g} reached (spent "
                f"${status.spent_usd:.4f}, ${projected:.4f} with the encounters in flight)")

    def _publish(self, started: int = 0) -> None:
        """Under xdist, write this worker's counters now, counting the encounter it starts:
        the timer alone let every worker start what fits the limit by itself before the
        others' spending showed, when encounters take less than its period."""
        if self.files is None:
            return
        mine = RunStatus.of(self.state)
        mine.in_flight += started
        with contextlib.suppress(OSError):
            self.files.write(mine)

    # ------------------------------------------------------------ status line

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """The xdist controller: give every worker the counters directory."""
        if self._own_dir is None:
            self._own_dir = Path(tempfile.mkdtemp(prefix="agentclinic-progress-"))
        node.workerinput[PROGRESS_DIR_KEY] = str(self._own_dir)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The xdist controller learns the total from the first worker's collection."""
        del node
        if self.total is None:
            self.total = sum(i.split("::", 1)[0].endswith(formats.suffixes()) for i in ids)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Start the status line: from the main thread while items wait (one process), from a
        thread on the xdist controller, and counter files from a thread on each worker."""
        del session
        self.started = self._last = time.monotonic()
        self._every, self._live = self._cadence()
        if self.files is not None or (self._own_dir is not None and self._every > 0):
            self._thread = threading.Thread(target=self._loop, name="agentclinic-progress",
                                            daemon=True)
            self._thread.start()
        elif self._every > 0:
            self.state.on_wait = self._tick
        try:
            return (yield)
        finally:
            self._stop.set()
            if self._thread is not None:
                self._thread.join(5)
            if self.files is not None:
                self.files.write(RunStatus.of(self.state))
            elif self._live:
                with self._write_lock:
                    self._erase()
            elif self._shown:
                # The last tick may predate the last encounters (or the cost-limit skips that
                # end a run quickly): a log that showed progress ends on the run's totals.
                self._show()

    def _cadence(self) -> tuple[float, bool]:
        """Seconds between lines and whether to rewrite one line in place (0: no line)."""
        every = self.ops.progress_every
        tr = self.state.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None:
            return 0.0, False
        if every == 0:
            return 0.0, False
        if tr.isatty():
            return every or LIVE_EVERY, True
        return every or LOG_EVERY, False

    def _loop(self) -> None:
        if self.files is not None:  # a worker: publish counters, the controller prints
            while not self._stop.wait(PUBLISH_EVERY):
                self._publish()
            return
        while not self._stop.wait(self._every):
            # None: xdist has not finished its own startup lines; 0: a run of no encounters
            # (e.g. a project's own test suite with the plugin installed) has no status.
            if self.total:
                self._show()

    def _tick(self) -> None:
        """One process: called from the main thread while an item waits for its encounter,
        inside the item's output capture, which is lifted for the line."""
        now = time.monotonic()
        if now - self._last < self._every:
            return
        self._last = now
        capman = self.state.config.pluginmanager.get_plugin("capturemanager")
        with capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
            self._show()

    def _show(self) -> None:
        tr: Any = self.state.config.pluginmanager.get_plugin("terminalreporter")
        line = self.status().line(self.total, time.monotonic() - self.started)
        with self._write_lock:
            if self._live:
                self._draw(tr, line)
                return
            if self._line_is_last or tr._tw.width_of_current_line:
                tr._tw.line()
            tr._tw.write(line, flush=True)
            # pytest starts its next result on a new line (see the logreport wrapper).
            tr.currentfspath = None
            self._line_is_last = self._shown = True

    def _draw(self, tr: Any, line: str) -> None:
        """On a terminal: the line below pytest's (its own if pytest's is empty), one row at
        most, written past pytest's writer so pytest's idea of its line is untouched."""
        width = max(int(getattr(tr._tw, "fullwidth", 80)) - 1, 20)
        if self._drawn_at is None:
            column = int(tr._tw.width_of_current_line)
            self._drawn_at = column if column else -1
            prefix = "\n" if column else "\r"
        else:
            prefix = "\r"
        self._raw(tr, prefix + line[:width] + "\x1b[K")
        self._shown = True

    def _erase(self) -> None:
        """Clear the drawn line and put the cursor back where pytest left it."""
        if self._drawn_at is None:
            return
        tr: Any = self.state.config.pluginmanager.get_plugin("terminalreporter")
        back = f"\x1b[1A\x1b[{self._drawn_at + 1}G" if self._drawn_at > 0 else ""
        self._drawn_at = None
        if tr is not None:
            self._raw(tr, "\r\x1b[K" + back)

    @staticmethod
    def _raw(tr: Any, text: str) -> None:
        out = tr._tw._file
        out.write(text)
        out.flush()

    def _end_line(self, nodeid: str) -> None:
        """Before pytest writes a result: erase a live line; under a logged one, put the
        result on a line of its own."""
        if self._live:
            self._erase()
            return
        tr = self.state.config.pluginmanager.get_plugin("terminalreporter")
        if self._line_is_last and tr is not None and tr.verbosity <= 0:
            if tr.showfspath:  # the file's path again, then the result letters
                tr.write_fspath_result(nodeid, "")
            else:
                tr._tw.line()
        # (verbose output rewrites the item's id on a new line by itself)
        self._line_is_last = False

    # The terminal reporter writes in these hooks; holding the lock keeps the status
    # thread's line from landing in the middle of theirs.
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        """Count unplayed items; serialise the terminal's writes with the status line's."""
        if report.when == "setup" and report.skipped and any(
                name == UNPLAYED_PROPERTY for name, _ in report.user_properties):
            self.unplayed_reports += 1
            reason = next(str(v) for n, v in report.user_properties if n == UNPLAYED_PROPERTY)
            self.state.summary_extra["stopped_on_cost"] = {
                "max_cost_usd": self.ops.max_cost_usd, "unplayed_items": self.unplayed_reports,
                "reason": reason}
        with self._write_lock:
            self._end_line(report.nodeid)
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self) -> Generator[None, None, None]:
        """pytest writes the progress percentage here."""
        with self._write_lock:
            if self._live:
                self._erase()
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self) -> Generator[None, None, None]:
        """pytest writes the file's path (or, verbose, the item's id) here."""
        with self._write_lock:
            if self._live:
                self._erase()
            return (yield)

    def pytest_sessionfinish(self) -> None:
        """Remove the counters directory (the controller made it)."""
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say when the run stopped on cost, and what it spent."""
        if self.unplayed_reports:
            terminalreporter.write_line(
                f"agentclinic: the run stopped on cost: {self.unplayed_reports} item(s) not "
                f"played, not judged (--agent-max-cost ${self.ops.max_cost_usd:g})")
