"""The live status line: encounters done / in flight / total, calls, cache hits, retries,
429s, tokens, cost so far and an ETA.

On a terminal it is drawn below pytest's progress line and redrawn in place (every second,
or every ``--agent-progress S``); it is erased before pytest writes, so its progress lines
stay whole, and at the end, so no copy of it is left in the scrollback. Otherwise (CI logs)
it is a line every 30 s (or S), and a run that showed it ends with it once more, with the
run's totals. Under xdist the controller draws it, from the workers' counter files.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import pytest

from ..cases import formats
from .counters import RunStatus, SharedCounters
from .item import EncounterItem
from .repeating import Repeating
from .shares import SHARE_KEY

#: Seconds between status lines when the output is not a terminal.
LOG_EVERY = 30.0
#: Seconds between live refreshes on a terminal.
LIVE_EVERY = 1.0


def status_text(status: RunStatus, total: int | None, elapsed: float) -> str:
    """The status line of ``status`` out of ``total`` encounters, ``elapsed`` seconds in."""
    of = f"/{total}" if total else ""
    llm = status.llm
    parts = [f"agentclinic: {status.done}{of} done, {status.in_flight} in flight",
             f"{llm.calls} calls ({llm.cache_hits} cached)",
             f"{llm.retries} retries, {llm.rate_limited} x 429",
             f"{_thousands(llm.prompt_tokens + llm.completion_tokens)} tokens, "
             f"${llm.spent_usd:.4f}"]
    if status.unplayed:
        parts.append(f"{status.unplayed} not played (cost limit)")
    remaining = (total or 0) - status.done - status.unplayed
    if status.done and remaining > 0:
        parts.append(f"ETA {_duration(elapsed / status.done * remaining)}")
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


class StatusLine:
    """Shows the status line (the process that owns the terminal: not an xdist worker).

    ``every`` is ``--agent-progress`` (None: the default cadence; 0: no line);
    ``on_wait`` installs a callback the executor calls while an item waits.
    """

    def __init__(self, config: pytest.Config, every: float | None, counters: SharedCounters,
                 on_wait: Callable[[Callable[[], None]], None]) -> None:
        self.config = config
        self.every_option = every
        self.counters = counters
        self.on_wait = on_wait
        self.total: int | None = None
        self.started = time.monotonic()
        self._write_lock = threading.RLock()
        self._redraws = Repeating(self._redraw, "agentclinic-progress")
        self._line_is_last = False
        #: On a terminal: the column pytest's line was at when the line was drawn below it
        #: (None: not drawn; -1: drawn on pytest's empty line, nothing to go back up to).
        self._drawn_at: int | None = None
        #: Whether a status line was printed: then the run ends with one more, of its totals.
        self._shown = False
        self._every, self._live, self._last = 0.0, False, 0.0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The total, once every plugin has selected (``-k``, the shard, the subset)."""
        self.total = sum(isinstance(i, EncounterItem) for i in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The xdist controller learns the total from the first worker's collection (a split
        run's from :mod:`.xdist_split`, once every worker has collected)."""
        # A split run's workers hold their shares: the union comes once all have collected.
        if self.total is None and SHARE_KEY not in getattr(node, "workerinput", {}):
            self.total = sum(i.split("::", 1)[0].endswith(formats.suffixes()) for i in ids)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Start the line: from the main thread while items wait (one process), from a
        thread on the xdist controller."""
        del session
        self.started = self._last = time.monotonic()
        self._every, self._live = self._cadence()
        if self.counters.own_dir is not None and self._every > 0:
            self._redraws.start(self._every)
        elif self._every > 0:
            self.on_wait(self._tick)
        try:
            return (yield)
        finally:
            self._redraws.stop()
            if self._live:
                with self._write_lock:
                    self._erase()
            elif self._shown:
                # The last tick may predate the last encounters (or the cost-limit skips that
                # end a run quickly): a log that showed progress ends on the run's totals.
                self._show()

    def _cadence(self) -> tuple[float, bool]:
        """Seconds between lines and whether to rewrite one line in place (0: no line)."""
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None or self.every_option == 0:
            return 0.0, False
        if tr.isatty():
            return self.every_option or LIVE_EVERY, True
        return self.every_option or LOG_EVERY, False

    def _redraw(self) -> None:
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
        capman = self.config.pluginmanager.get_plugin("capturemanager")
        with capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
            self._show()

    def _show(self) -> None:
        tr: Any = self.config.pluginmanager.get_plugin("terminalreporter")
        line = status_text(self.counters.status(), self.total, time.monotonic() - self.started)
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
        _raw(tr, prefix + line[:width] + "\x1b[K")
        self._shown = True

    def _erase(self) -> None:
        """Clear the drawn line and put the cursor back where pytest left it."""
        if self._drawn_at is None:
            return
        tr: Any = self.config.pluginmanager.get_plugin("terminalreporter")
        back = f"\x1b[1A\x1b[{self._drawn_at + 1}G" if self._drawn_at > 0 else ""
        self._drawn_at = None
        if tr is not None:
            _raw(tr, "\r\x1b[K" + back)

    def _end_line(self, nodeid: str) -> None:
        """Before pytest writes a result: erase a live line; under a logged one, put the
        result on a line of its own."""
        if self._live:
            self._erase()
            return
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
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
        """Serialise the terminal's writes with the status line's."""
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


def _raw(tr: Any, text: str) -> None:
    out = tr._tw._file
    out.write(text)
    out.flush()
