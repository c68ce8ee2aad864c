"""The session's state and its hooks: thin, each handing over to the part that does the work.

* :class:`~.executor.EncounterExecutor` plays the items' encounters and returns each
  item's outcome;
* :class:`~.recorder.Recorder` writes their transcripts and result records;
* :class:`~.reports.FinalReports` merges the records, judges the gate and writes the
  reports at the end.

The status line, the cost limit and the shards are plugins of their own (registered by
``plugin/__init__``), as xdist keeps its scheduling and its terminal reporting apart.
"""

from __future__ import annotations

import gc
import os
import re
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ..core.text import clear_caches
from ..llm.client import key_variable, needs_placeholder_key
from ..llm.served import redact_url
from ..protocols.base import Protocol, RunOptions
from .collect import ERROR_NODE, bad_records_in
from .events import WORKER_KEY as EVENTS_KEY
from .events import RunEvents
from .interrupts import say
from .item import EncounterItem
from .outcome import FATAL_PREFIX
from .scheduling import index_terminology, llm_models, parse_ahead, warm_grader
from .settings import Settings
from .shares import first_encounters, signal_started

if TYPE_CHECKING:
    from ..llm.cache import ResponseCache
    from ..llm.caller import ModelCaller
    from ..runs.lock import RunLock
    from .executor import EncounterExecutor
    from .recorder import Recorder
    from .reports import FinalReports

#: Whether the response cache was filled before the run, in a worker's ``workerinput``.
CACHE_FILLED_KEY = "agentclinic_cache_filled"


def default_run_name() -> str:
    """A sortable, unique run directory name."""
    return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"


class AgentClinicSession:
    """Registered as a plugin in ``pytest_configure`` and kept in ``config.stash``
    (implements :class:`~.state.ItemSession`)."""

    #: What plays the items and owns their records: built by a run that plays or reports
    #: encounters, not by one that only collects (``--collect-only``), whose collection
    #: imported them for nothing (~45 ms of a 4,000-case collection, 10% of plain pytest's).
    cache: ResponseCache
    caller: ModelCaller
    recorder: Recorder
    executor: EncounterExecutor

    def __init__(self, config: pytest.Config, settings: Settings, run_name: str) -> None:
        self.config = config
        self.settings = settings
        self.run_name = run_name
        self.run_dir = settings.report_dir / run_name
        self.is_worker = hasattr(config, "workerinput")
        self.bad_record_items = 0  # one item may stand for many bad records of a file
        self.protocol: Protocol = settings.make_protocol()
        self.run_options: RunOptions = settings.run_options
        worker = config.workerinput["workerid"] if self.is_worker else None  # type: ignore[attr-defined]
        #: Run-level events (a lost limits server), told at the run's end by its owner.
        self.events = RunEvents(worker or "main")
        #: Whether this process plays or reports encounters (not ``--collect-only``).
        self.plays = not config.option.collectonly
        #: Whether a previous run had filled the response cache (see :meth:`_open`).
        self.cache_filled = False
        #: The final reports, on the process that owns the run directory only: a worker
        #: imports none of the reports' modules (~10 ms and 1.2 MB in each of 8 workers).
        self.reports: FinalReports | None = None
        #: Fields features add to summary.json (the final reports', where there are any).
        self.summary_extra: dict[str, Any] = {}
        self.started = False
        #: Whether the previous run's workers' results files went before the workers started.
        self._workers_cleared = False
        self._fatal_shown = False
        #: Held by the process that owns the run directory (the controller under xdist).
        self.lock: RunLock | None = None
        if self.plays:
            self._open(worker)

    def _open(self, worker: str | None) -> None:
        """The cache, the caller, the recorder, the executor and (not on a worker) the final
        reports."""
        from ..llm.cache import ResponseCache
        from ..llm.caller import ModelCaller
        from ..runs.merging import RunningMerge
        from .executor import EncounterExecutor
        from .recorder import Recorder

        config, settings = self.config, self.settings
        self.cache = ResponseCache(settings.cache_dir, settings.cache)
        self.caller = ModelCaller(settings.call, self.cache)
        self.recorder = Recorder(self.run_dir, self.run_name, worker, self.protocol,
                                 self.caller.served_identities)
        self.executor = EncounterExecutor(config, settings, self.protocol, self.caller,
                                          self.recorder)
        if self.caller.pacing is not None:
            self.caller.pacing.server.notify = self.events.warn
        # The controller's answer, before it opens the cache and so creates its database: a
        # worker asking the directory always found it filled, and imported its HTTP client
        # at its first call, on the first request's path.
        told = getattr(config, "workerinput", {}).get(CACHE_FILLED_KEY)
        self.cache_filled = self.cache.filled() if told is None else bool(told)
        if not (getattr(config.option, "dist", "no") != "no" and not self.is_worker):
            self.caller.warm(llm_models(settings), self.cache_filled)
        if not self.is_worker:
            from .reports import FinalReports

            self.reports = FinalReports(config, settings, self.run_dir,
                                        RunningMerge(self.recorder.results))
            self.summary_extra = self.reports.summary_extra

    def pytest_report_header(self) -> list[str]:
        """The roles' models, the API base and the run's axes, under pytest's header."""
        roles = ", ".join(f"{role}={model}" for role, model in self.settings.roles.items())
        return [f"agentclinic: {roles}", *self._api_base_header(),
                f"agentclinic: turns={','.join(map(str, self.settings.turns))} "
                f"repeat={self.settings.repeat} cache={self.settings.cache.value} "
                f"concurrency={self.settings.concurrency}"]

    def _api_base_header(self) -> list[str]:
        base = redact_url(self.settings.call.api_base)
        if base is None:
            return []
        keyless = sorted({key_variable(m) for m in self.settings.llm_models
                          if needs_placeholder_key(m, self.settings.call.api_base)})
        if not keyless:
            return [f"agentclinic: api base {base}"]
        return [f"agentclinic: api base {base}; no {', '.join(keyless)} in the environment: "
                f"a placeholder key is sent (local servers need none)"]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self) -> None:
        """Lock the run directory before anything runs: a second session with the same run
        name, or a directory that cannot be written, is one usage-error line (exit 4)."""
        if self.is_worker or not self.plays:
            return  # a worker belongs to its controller, which holds the lock
        from ..runs.directory import clear_workers_results
        from ..runs.errors import RunDirError, RunInUse
        from ..runs.lock import lock_run

        try:
            self.lock = lock_run(self.run_dir)
        except (RunInUse, RunDirError) as exc:
            raise pytest.UsageError(f"agentclinic: {exc}") from None
        if getattr(self.config.option, "dist", "no") != "no":
            # Before the workers start: what they write from then on is this run's.
            clear_workers_results(self.run_dir)
            self._workers_cleared = True
            parse_ahead(self.config.args, self.settings.cache_dir)  # while workers start
        index_terminology(self.config.args)  # off the first encounter's path
        if llm_models(self.settings):
            unusable = self.cache.probe()  # workers fall back the same way, silently
            if unusable is not None:
                say(self.config, f"agentclinic: {unusable}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self) -> None:
        """Let go of the run directory and of the Ctrl-C handler of the reports; in a
        process that played or merged encounters, freeze the heap before pytest's own
        ``pytest_unconfigure`` collects garbage one last time."""
        if self.lock is not None:
            self.lock.release(started=self.started)
        if self.reports is not None:
            self.reports.restore()
        if self.plays and (self.started or self.recorder.results.lines):
            # That full collection walked everything made since collection (the grader's
            # terminology index, the run's records): 0.1-0.3 s in each of 8 workers and
            # in the controller after the last answer at 2,000 encounters. The run's
            # objects live to the process's end; a worker ends without teardown.
            gc.freeze()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """Count the bad case records (each error item may stand for many)."""
        if report.failed and re.search(ERROR_NODE, report.nodeid):
            self.bad_record_items += 1
            if self.reports is not None:
                self.reports.bad_records += bad_records_in(report.nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # A bad case record is a collection error, but it must not stop the file's other
        # cases from running: hide those errors from pytest's "errors during collection"
        # check, then count them again so the exit status still reports them.
        session.testsfailed -= self.bad_record_items
        ahead: list[pytest.Item] = []
        if self.plays and any(
                isinstance(i, EncounterItem) for i in session.items):
            warm_grader()
            # A split run's worker: its first encounters now, not once the slowest worker
            # has collected too (xdist's first item waits for every collection).
            ahead = first_encounters(self.config, session.items,
                                     lambda item: isinstance(item, EncounterItem))
            self.executor.start(ahead)
        # A lead: the controller sets up the workers it held once its first call is out.
        signal_started(self.config, self._first_call_out if ahead else None)
        try:
            return (yield)
        finally:
            session.testsfailed += self.bad_record_items

    def _first_call_out(self) -> bool:
        """Whether this process has sent a model call, or ended an encounter."""
        return self.caller.http_attempts > 0 or self.executor.runner.done > 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Start the run once the plan is known (one process; see :meth:`start_run`)."""
        if not self.is_worker:  # under xdist the controller hears of collection from a node
            self.start_run(sum(isinstance(i, EncounterItem) for i in session.items))

    def start_run(self, planned: int) -> None:
        """Write the run's manifest before the first item runs (once; not when no encounter
        is planned or only collecting)."""
        if self.started or planned == 0 or not self.plays:
            return
        from ..runs.directory import start_run

        self.started = True
        start_run(self.run_dir, self.run_name, planned, workers_cleared=self._workers_cleared)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # The records reach the disk from the process that played them (the recorder); the
        # copy each report carries is the live report's (JUnit, the controller's view).
        if self.is_worker:
            return
        assert self.reports is not None  # not a worker
        self.reports.received(report)
        if report.failed and FATAL_PREFIX in str(report.longrepr):
            # Under xdist every worker meets the fatal error once: show it once.
            if self._fatal_shown:
                report.longrepr = f"not run: the session stopped on the {FATAL_PREFIX} above"
            self._fatal_shown = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Close what played the items; on the run's owner, merge and judge the gate."""
        if not self.plays:
            return
        self.executor.close()
        self.cache.close()
        self.recorder.close()
        # No encounter runs now: the final reports reuse what the per-text caches held.
        clear_caches()
        if self.is_worker:  # xdist sends its workeroutput once every hook has run
            self.config.workeroutput[EVENTS_KEY] = self.events.to_json()  # type: ignore[attr-defined]
        else:
            assert self.reports is not None  # not a worker
            self.events.emit(self.summary_extra)
            self.reports.judge(session, self.started)

    @pytest.hookimpl(specname="pytest_sessionfinish", wrapper=True, trylast=True)
    def pytest_sessionfinish_reports(self, session: pytest.Session
                                     ) -> Generator[None, object, object]:
        """Write the final reports after every other plugin's ``pytest_sessionfinish``, and so
        after xdist's, which shuts the workers down: the workers, idle since their last item,
        were held until the reports were written (3.3 s more at 10,000 encounters; on a
        loaded machine xdist's 10 s timeout killed them). Still before pytest's summary,
        which shows the tables (a trylast wrapper is the innermost)."""
        try:
            return (yield)
        finally:
            if self.reports is not None:  # not a worker
                self.reports.write(session)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The run's tables and the gate's verdict."""
        if self.reports is not None:  # a worker's summary is never shown
            self.reports.print_summary(terminalreporter)
