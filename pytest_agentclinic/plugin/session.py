"""The session's state: runs encounters, gathers results, writes and prints the reports."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import shlex
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any

import pytest

from ..core.case import Case
from ..core.records import ResultRecord
from ..core.redact import redact, redact_data
from ..core.text import clear_caches
from ..core.transcript import Transcript
from ..llm.cache import ResponseCache
from ..llm.caller import ModelCaller
from ..llm.client import key_variable, needs_placeholder_key
from ..llm.encounter_limits import encounter_budget
from ..llm.errors import FatalLLMError
from ..llm.served import UNKNOWN, redact_url
from ..protocols.base import PlayContext
from ..protocols.registry import report_tables
from ..protocols.runner import EncounterRunner, NotPlayed, Progress, watch
from ..report import gate, rundir, summary
from ..report.summary_md import append_step_summary
from ..report.tables import Table
from .blocked import blocked_in
from .collect import (
    ERROR_NODE,
    RECORD_PROPERTY,
    UNPLAYED_PROPERTY,
    EncounterError,
    EncounterItem,
    bad_records_in,
)
from .interrupts import defer_interrupts, restore_interrupts, say
from .junit import write_gate_testcases
from .scheduling import (
    LEAD_WINDOWS,
    Ahead,
    index_terminology,
    llm_models,
    parse_ahead,
    warm_grader,
)
from .scheduling import window as window_of
from .settings import Settings

#: How the error of the item that met a fatal model error begins.
FATAL_PREFIX = "fatal model error"

#: Returns the items this process will run next (xdist workers only know their queue).
Lookahead = Callable[[pytest.Session, EncounterItem], Sequence[pytest.Item]]
#: Seconds between :attr:`AgentClinicSession.on_wait` calls.
WAIT_TICK = 0.25


def default_run_name() -> str:
    """A sortable, unique run directory name."""
    return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"


def _read_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class AgentClinicSession:
    """Registered as a plugin in ``pytest_configure`` and kept in ``config.stash``."""

    def __init__(self, config: pytest.Config, settings: Settings, run_name: str) -> None:
        self.config = config
        self.settings = settings
        self.run_name = run_name
        self.run_dir = settings.report_dir / run_name
        self.is_worker = hasattr(config, "workerinput")
        self.bad_records = 0
        self.bad_record_items = 0  # one item may stand for many bad records of a file
        self.cache = ResponseCache(settings.cache_dir, settings.cache)
        self.caller = ModelCaller(settings.call, self.cache)
        self.fatal: str | None = None
        self.protocol = settings.make_protocol()
        # --agent-concurrency bounds model calls in flight (in the caller, earliest items
        # first); the runner keeps enough items started to fill those slots.
        started = window_of(settings, self.protocol.items_per_chain(settings.options))
        self.runner = EncounterRunner(started)
        self.lookahead: Lookahead = Ahead(LEAD_WINDOWS * started)
        if not (getattr(config.option, "dist", "no") != "no" and not self.is_worker):
            self.caller.warm(llm_models(settings))
        self.run_options = settings.run_options
        self.play_context = PlayContext(self.caller, self._make_agent, settings.options,
                                        settings.grading_policy)
        self.gate: gate.GateResult | None = None
        self.started_at = time.time()
        self.tables: list[Table] = []
        #: Models whose server did not say which model it serves (one line at the end).
        self.unknown_served: list[str] = []
        #: Fields the operations plugin adds to summary.json (e.g. the run stopped on cost).
        self.summary_extra: dict[str, Any] = {}
        #: Called every :data:`WAIT_TICK` seconds while an item waits for its encounter.
        self.on_wait: Callable[[], None] = lambda: None
        # Each process that plays items streams its own records to disk (an xdist worker
        # too: its controller, killed with -9, once kept none of them).
        worker = config.workerinput["workerid"] if self.is_worker else None  # type: ignore[attr-defined]
        self.results = rundir.ResultsStream(
            self.run_dir, rundir.worker_results_name(worker) if worker else rundir.RESULTS)
        self.started = False
        self._fatal_shown = False
        #: Held by the process that owns the run directory (the controller under xdist).
        self.lock: rundir.RunLock | None = None
        #: Why nothing more can be written (a full disk): no more calls are made.
        self.disk_full: str | None = None
        self._writing_reports = False
        self._sigint: Any = None
        #: The merged records, from the gate's step to the reports' (controller only).
        self._records: list[ResultRecord] | None = None

    # ----------------------------------------------------------------- hooks

    def pytest_report_header(self) -> list[str]:
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
        if self.is_worker or self.config.option.collectonly:
            return  # a worker belongs to its controller, which holds the lock
        try:
            self.lock = rundir.lock_run(self.run_dir)
        except (rundir.RunInUse, rundir.RunDirError) as exc:
            raise pytest.UsageError(f"agentclinic: {exc}") from None
        if getattr(self.config.option, "dist", "no") != "no":
            parse_ahead(self.config.args, self.settings.cache_dir)  # while workers start
        index_terminology(self.config.args)  # off the first encounter's path
        if llm_models(self.settings):
            unusable = self.cache.probe()  # workers fall back the same way, silently
            if unusable is not None:
                say(self.config, f"agentclinic: {unusable}")

    def pytest_unconfigure(self) -> None:
        if self.lock is not None:
            self.lock.release(started=self.started)
        restore_interrupts(self._sigint)
        self._sigint = None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and re.search(ERROR_NODE, report.nodeid):
            self.bad_record_items += 1
            self.bad_records += bad_records_in(report.nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # A bad case record is a collection error, but it must not stop the file's other
        # cases from running: hide those errors from pytest's "errors during collection"
        # check, then count them again so the exit status still reports them.
        session.testsfailed -= self.bad_record_items
        if not session.config.option.collectonly and any(
                isinstance(i, EncounterItem) for i in session.items):
            warm_grader()
        try:
            return (yield)
        finally:
            session.testsfailed += self.bad_record_items

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.is_worker:  # under xdist the controller hears of collection from a node
            self.start_run(sum(isinstance(i, EncounterItem) for i in session.items))

    def start_run(self, planned: int) -> None:
        """Write the run's manifest before the first item runs (once; not when no encounter
        is planned or only collecting)."""
        if self.started or planned == 0 or self.config.option.collectonly:
            return
        self.started = True
        rundir.start_run(self.run_dir, self.run_name, planned)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # The records reach the disk from the process that played them (finish_item); the
        # copy each report carries is the live report's (JUnit, the controller's view).
        if self.is_worker:
            return
        if report.failed and FATAL_PREFIX in str(report.longrepr):
            # Under xdist every worker meets the fatal error once: show it once.
            if self._fatal_shown:
                report.longrepr = f"not run: the session stopped on the {FATAL_PREFIX} above"
            self._fatal_shown = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.runner.run(self.caller.aclose)
        self.runner.close()
        self.cache.close()
        self.results.close()
        # No encounter runs now: the final reports reuse what the per-text caches held.
        clear_caches()
        if self.is_worker:
            return
        self._sigint = defer_interrupts(session, lambda: self._writing_reports)
        # The gate now: its exit status and JUnit testcase must be in before pytest's junitxml
        # writes its file (in this hook); the reports once the workers are gone (below).
        self._reporting(session, self._finish)

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
            if not self.is_worker and self._records is not None:
                self._reporting(session, self._write_reports)

    def _reporting(self, session: pytest.Session, step: Callable[[pytest.Session], None]) -> None:
        """Run a step of the final reports; Ctrl-C or a full disk stops it with one line."""
        try:
            self._writing_reports = True
            step(session)
        except KeyboardInterrupt:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
            say(self.config, f"agentclinic: interrupted while writing the reports; every "
                             f"finished record is kept in {self.run_dir} (`agentclinic report "
                             f"{self.run_dir}` writes the reports)")
        except OSError as exc:
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            say(self.config, f"agentclinic: could not write the reports in {self.run_dir}: "
                             f"{exc.strerror or exc}; the records written so far are kept there")
        finally:
            self._writing_reports = False

    def _finish(self, session: pytest.Session) -> None:
        """Merge the records streamed to disk and judge the gate (the reports follow:
        :meth:`_write_reports`)."""
        # Read back from the results files, sorted: kept in memory through the run, the
        # records were the largest thing that grew with the items.
        records = rundir.merge_results(self.run_dir) if self.started else []
        if self.settings.gate.active:
            self.gate = self._evaluate_gate(records)
            write_gate_testcases(self.config, self.gate)
            # With a gate, the gate decides the exit status; interruptions, usage and
            # internal errors keep theirs.
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                passed = self.gate.passed
                session.exitstatus = pytest.ExitCode.OK if passed else pytest.ExitCode.TESTS_FAILED
        self.unknown_served = sorted({m for r in records for m, identity in r.served.items()
                                      if identity.startswith(UNKNOWN)})
        self._records = records

    def _write_reports(self, session: pytest.Session) -> None:
        """The tables, summary.json, summary.md and report.html of the merged records."""
        del session
        records, self._records = self._records or [], None
        if records:
            self.tables = report_tables(records)
            summary = rundir.run_summary({**self._run_info(), **self.settings.summary_header()},
                                         records, self.bad_records)
            summary.update(self.summary_extra)
            if self.gate is not None:
                summary["gate"] = self.gate.to_dict()
            rundir.write_reports(self.run_dir, summary, records, self.tables)
            append_step_summary(self.run_dir / "summary.md")

    def _evaluate_gate(self, records: Sequence[ResultRecord]) -> gate.GateResult:
        result = rundir.judge_gate(self.settings.gate, records)
        return result.with_bad_records(self.bad_records) if self.bad_records else result

    def _run_info(self) -> dict[str, Any]:
        args = self.config.invocation_params.args
        return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started_at)),
                "duration_s": round(time.time() - self.started_at, 3),
                "command": shlex.join(["pytest", *map(str, args)]),
                "api_base": redact_url(self.settings.call.api_base)}

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.tables:
            summary.print_summary(terminalreporter, self.settings.roles, self.tables,
                                  self.run_dir, self.bad_records)
            if self.settings.subset.description is not None:
                terminalreporter.write_line(
                    f"subset: this run covers {self.settings.subset.description}, not every "
                    "selected case")
        if self.gate is not None:
            summary.print_gate(terminalreporter, self.gate)
            if not self.gate.passed:
                _say_gate_failed(terminalreporter)
        if self.unknown_served:
            terminalreporter.write_line(
                f"agentclinic: the model behind {', '.join(self.unknown_served)} at "
                f"{redact_url(self.settings.call.api_base)} is unknown (neither /v1/models nor "
                f"/props answered): its replies are cached under its name alone, so a model "
                f"swapped behind that name would be replayed")

    # ------------------------------------------------------------ encounters

    def _schedule(self, item: EncounterItem) -> concurrent.futures.Future[Transcript]:
        """Submit ``item`` and the items this process runs next, so they run concurrently."""
        self.runner.submit_many([
            (upcoming.nodeid, self._encounter_factory(upcoming))
            for upcoming in self.lookahead(item.session, item)
            if isinstance(upcoming, EncounterItem) and not self.runner.submitted(upcoming.nodeid)])
        return self.runner.submit(item.nodeid, self._encounter_factory(item))

    def _encounter_factory(self, item: EncounterItem) -> Callable[[], Any]:
        async def play() -> Transcript:
            # Not waiting for the grader's warm-up (warm_grader): the encounter's
            # model calls do not need it, and grading waits for it without blocking the loop
            # (grading.concepts.terminology_loaded); on a machine with no index yet, the
            # first request would wait ~2 s for it.
            settings = self.settings
            try:
                with encounter_budget(settings.encounter_tokens, settings.encounter_cost):
                    return await self._deadline(item, self.protocol.play(item.spec,
                                                                         self.play_context))
            except FatalLLMError as exc:
                # Stop the other encounters in flight now: they would only fail the same way.
                self.fatal = self.fatal or redact(str(exc))
                self.runner.cancel_pending()
                raise

        return play

    async def _deadline(self, item: EncounterItem,
                        encounter: Awaitable[Transcript]) -> Transcript:
        """The encounter, or an *error* transcript once ``--agent-encounter-timeout`` passes
        (e.g. a custom agent that never returns)."""
        limit = self.settings.encounter_timeout
        # The task wait_for would make, made here to read its error: a fatal error cancels
        # every encounter, this one's waiter too, and wait_for then leaves the error (the
        # session's fatal error, reported already) unread. asyncio logged it, traceback and
        # all, whenever the task was collected: once inside pytest's own traceback
        # formatting, which CPython 3.11 cannot re-enter (an internal error).
        progress = watch()  # the task below copies this context: the protocol reports to it
        task = asyncio.ensure_future(encounter)
        task.add_done_callback(_read_error)
        try:
            return await asyncio.wait_for(task, limit)
        except asyncio.TimeoutError:
            return self._timed_out(item, progress, limit)

    def _timed_out(self, item: EncounterItem, progress: Progress, limit: float) -> Transcript:
        """The encounter's transcript as far as it got (its answered calls, their usage and
        cost), an *error* naming the stage that did not finish."""
        error = (f"encounter timeout: not finished within {limit:g} s "
                 f"(--agent-encounter-timeout), in {progress.stage}")
        partial = progress.transcript
        if partial is None:  # a protocol that does not report its progress
            return self._failed_transcript(item, error).model_copy(
                update={"timed_out_in": progress.stage})
        return partial.model_copy(update={
            "outcome": "error", "error": error, "timed_out_in": progress.stage,
            "utterances": list(partial.utterances),
            "duration_s": time.time() - partial.started_at})

    def _make_agent(self, role: str, model: str, case: Case, bias: str) -> object | None:
        return self.config.hook.pytest_agentclinic_make_agent(  # type: ignore[no-any-return]
            role=role, model=model, case=case, bias=bias, config=self.config)

    def finish_item(self, item: EncounterItem) -> None:
        """Wait for ``item``'s encounter, save its transcript and record, and attach the
        record."""
        # Redacted once here, so the file, the record, the JUnit property and the terminal
        # message all carry the same clean text.
        transcript = Transcript.model_validate_json(redact(self._await(item).model_dump_json()))
        item.transcript = transcript
        try:
            item.transcript_path = rundir.write_transcript(self.run_dir, item.path,
                                                           item.nodeid, transcript)
        except OSError as exc:
            self._write_failed(item, exc)
        case = item.spec.case
        # What is graded and what is measured are the protocol's: the core assumes neither.
        record = ResultRecord.from_transcript(
            transcript, run=self.run_name, nodeid=item.nodeid,
            expected=self.protocol.expected(case), transcript_path=item.transcript_path,
            case_file=str(item.path), difficulty=case.difficulty,
            measures=self.protocol.measures(case, transcript))
        record.served = self.caller.served_identities(dict.fromkeys(record.models.values()))
        try:
            self.results.append(record)
        except OSError as exc:
            self._write_failed(item, exc)
        # JSON text, not a dict: JUnit XML writes a property's str(), and a dict's is a repr.
        item.user_properties.append(
            (RECORD_PROPERTY, json.dumps(redact_data(record.model_dump(mode="json")))))
        if self.fatal is not None:
            # The first item to meet a fatal error reports it once and stops the session;
            # nothing else will run, so the runner's thread is ended now.
            self.runner.close()
            item.session.shouldstop = f"agentclinic: fatal model error: {self.fatal}"
            raise EncounterError(f"{FATAL_PREFIX}, stopping the session: {self.fatal}")

    def _write_failed(self, item: EncounterItem, exc: OSError) -> None:
        """A record or transcript could not be written. A full disk stops the session: every
        later write would fail too, and the replies paid for would be lost."""
        reason = exc.strerror or type(exc).__name__
        if not rundir.is_disk_full(exc):
            raise EncounterError(f"cannot write to the run directory {self.run_dir}: "
                                 f"{reason}") from None
        self.disk_full = (f"no space left to write the run ({reason}): stopped calling the "
                          f"provider; the records written so far are kept in {self.run_dir}")
        self.runner.refused = self.disk_full  # start no other encounter
        self.runner.close()
        item.session.shouldstop = f"agentclinic: {self.disk_full}"
        raise EncounterError(f"agentclinic: {self.disk_full}") from None

    def _await(self, item: EncounterItem) -> Transcript:
        if self.disk_full is not None:
            return self._failed_transcript(item, f"not run: {self.disk_full}")
        if self.fatal is not None:
            return self._failed_transcript(item, f"not run after a fatal error: {self.fatal}")
        limit = self.settings.encounter_timeout
        try:
            future = self._schedule(item)
            # The encounter's own deadline fires on the runner's loop; this one guards against
            # an agent that blocks the loop itself (synchronous code that never returns).
            deadline = time.monotonic() + limit + min(60.0, limit)
            while True:
                # Not concurrent.futures.wait(): it never sees a future cancelled before it
                # ran (the runner's futures are plain ones, cancelled on a fatal error).
                try:
                    return future.result(timeout=WAIT_TICK)
                except concurrent.futures.TimeoutError:
                    if future.done():
                        raise  # the encounter's own timeout error
                    if time.monotonic() > deadline:
                        # Whose code holds the loop is read from its stack, not guessed.
                        self.fatal = (f"an encounter blocked the event loop past "
                                      f"--agent-encounter-timeout ({limit:g} s), "
                                      f"{blocked_in(self.runner.thread)}")
                        return self._failed_transcript(item, self.fatal)
                    self.on_wait()  # the status line, written from this (the main) thread
        except NotPlayed as exc:
            item.user_properties.append((UNPLAYED_PROPERTY, str(exc)))
            pytest.skip(str(exc))
        except (FatalLLMError, concurrent.futures.CancelledError):
            # ``play`` recorded a fatal error in ``self.fatal``; otherwise the session is ending.
            return self._failed_transcript(item, self.fatal or "cancelled: the session ended")
        except Exception as exc:  # a bug in a custom agent must not lose the other results
            return self._failed_transcript(item, redact(f"{type(exc).__name__}: {exc}"))
        finally:
            # The transcript is saved next; the runner need not keep it for the session.
            self.runner.forget(item.nodeid)

    def _failed_transcript(self, item: EncounterItem, error: str) -> Transcript:
        # The protocol's own header: an item that could not be played still carries its
        # conditions (a CRAFT-MD error keeps its experiment, so tables and pairing see it).
        header = self.protocol.header(item.spec)
        return Transcript(**{**header.header(), "outcome": "error", "error": error})


class _GateVerdict:
    """Counted in pytest's final line as "1 gate failed"."""

    count_towards_summary = True


def _say_gate_failed(terminalreporter: Any) -> None:
    """Make pytest's final line say the gate's verdict: "1 gate failed", in red. pytest
    colours the line red when its stats hold a "failed" key; an empty one adds no count
    (a gated run's misses are xfailed, so the line was green on exit status 1)."""
    terminalreporter.stats.setdefault("failed", [])
    terminalreporter.stats.setdefault("gate failed", []).append(_GateVerdict())
