"""The session's state: runs encounters, gathers results, writes and prints the reports."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import shlex
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any

import pytest

from ..core.case import Case
from ..core.records import ResultRecord
from ..core.redact import redact, redact_data
from ..core.transcript import Transcript
from ..llm.cache import ResponseCache
from ..llm.caller import ModelCaller
from ..llm.client import key_variable, needs_placeholder_key
from ..llm.encounter_limits import encounter_budget
from ..llm.errors import FatalLLMError
from ..llm.served import UNKNOWN, redact_url
from ..metrics.gathering import for_encounter
from ..protocols.base import PlayContext
from ..protocols.registry import report_tables
from ..protocols.runner import EncounterRunner, NotPlayed
from ..report import gate, rundir, summary
from ..report.summary_md import append_step_summary
from ..report.tables import Table
from .collect import ERROR_NODE, RECORD_PROPERTY, UNPLAYED_PROPERTY, EncounterError, EncounterItem
from .junit import write_gate_testcases
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


#: How many windows of items (see :func:`_window`) a process submits ahead of the item pytest
#: waits on. A finished encounter waits in the runner until its item takes it: with every
#: item submitted at once, the offline runner finished all 8,000 while pytest reported the
#: first 1,000, and held every transcript (~30 KB each). Four windows keep the slots full
#: unless one item takes as long as four windows' worth of its neighbours.
LEAD_WINDOWS = 4


def _read_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class _Ahead:
    """Without xdist a process runs its items in order: the items up to ``lead`` places
    after the current one are submitted, each once, half a lead at a time.

    The item is found from where the last one was: looking it up from the start for every
    item made scheduling O(n^2) (13 s at 8,000 items); this keeps it O(n).
    """

    def __init__(self, lead: int) -> None:
        self.lead = lead
        self._next = 0  # where the next item is expected
        self._end = 0  # the items before this index were handed out already

    def __call__(self, session: pytest.Session, item: EncounterItem) -> Sequence[pytest.Item]:
        items = session.items
        start = self._find(items, item)
        if start is None:
            return [item]  # not in the session's list (a plugin ran it): nothing to look at
        self._next = start + 1
        if self._end > start + self.lead // 2:
            return []  # enough are submitted ahead (the session submits the item itself)
        begin, self._end = max(start, self._end), start + 1 + self.lead
        return items[begin:self._end]

    def _find(self, items: Sequence[pytest.Item], item: pytest.Item) -> int | None:
        for guess in (self._next, self._next - 1):  # the next one, or the same one again
            if 0 <= guess < len(items) and items[guess] is item:
                return guess
        return next((i for i, it in enumerate(items) if it is item), None)


def _window(settings: Settings, chain: int) -> int:
    """Items kept started: one per call slot, or 4 chains' worth per slot when items wait on
    shared chains of calls (a CRAFT-MD conversation is ~8 calls in a row: a slot's worth of
    conversations left the slots 46% busy)."""
    return settings.concurrency * (1 if chain <= 1 else 4 * chain)


def _llm_models(settings: Settings) -> list[str]:
    models = (m.strip() for ms in settings.roles.values() for m in ms.split(","))
    return [m for m in models if m and m != "offline"]


def _warm_grader() -> concurrent.futures.Future[None]:
    """Open the offline grader's terminology in a thread now: the first use on a machine
    builds its index (~2 s of CPU; the in-memory fallback takes as long in every process),
    which, left to the first verdict, ran on the runner's event loop with every call in
    flight stalled behind it. Encounters wait for this future (without blocking the loop)."""
    from ..grading.concepts import default_terminology

    future: concurrent.futures.Future[None] = concurrent.futures.Future()

    def load() -> None:
        # A failure here resurfaces, with its item, when grading loads the data again.
        with contextlib.suppress(Exception):
            default_terminology()
        future.set_result(None)

    threading.Thread(target=load, name="agentclinic-grader-warm-up", daemon=True).start()
    return future


class AgentClinicSession:
    """Registered as a plugin in ``pytest_configure`` and kept in ``config.stash``."""

    def __init__(self, config: pytest.Config, settings: Settings, run_name: str) -> None:
        self.config = config
        self.settings = settings
        self.run_name = run_name
        self.run_dir = settings.report_dir / run_name
        self.is_worker = hasattr(config, "workerinput")
        self.bad_records = 0
        self.cache = ResponseCache(settings.cache_dir, settings.cache)
        self.caller = ModelCaller(settings.call, self.cache)
        self.fatal: str | None = None
        self.protocol = settings.make_protocol()
        # --agent-concurrency bounds model calls in flight (in the caller, earliest items
        # first); the runner keeps enough items started to fill those slots.
        window = _window(settings, self.protocol.items_per_chain(settings.options))
        self.runner = EncounterRunner(window)
        self.lookahead: Lookahead = _Ahead(LEAD_WINDOWS * window)
        if not (getattr(config.option, "dist", "no") != "no" and not self.is_worker):
            self.caller.warm(_llm_models(settings))
        self._grader_ready: concurrent.futures.Future[None] | None = None
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
        self.results = rundir.ResultsStream(self.run_dir)
        self.started = False
        self._fatal_shown = False

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

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and re.search(ERROR_NODE, report.nodeid):
            self.bad_records += 1

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # A bad case record is a collection error, but it must not stop the file's other
        # cases from running: hide those errors from pytest's "errors during collection"
        # check, then count them again so the exit status still reports them.
        session.testsfailed -= self.bad_records
        if not session.config.option.collectonly and any(
                isinstance(i, EncounterItem) for i in session.items):
            self._grader_ready = _warm_grader()
        try:
            return (yield)
        finally:
            session.testsfailed += self.bad_records

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
        if self.is_worker:
            return  # the controller writes results.jsonl
        if report.failed and FATAL_PREFIX in str(report.longrepr):
            # Under xdist every worker meets the fatal error once: show it once.
            if self._fatal_shown:
                report.longrepr = f"not run: the session stopped on the {FATAL_PREFIX} above"
            self._fatal_shown = True
        for name, value in report.user_properties:
            # Each of the item's reports (setup, call, teardown) carries the record: once.
            if (name == RECORD_PROPERTY and isinstance(value, str)
                    and report.nodeid not in self.results):
                self.results.append(ResultRecord.model_validate(json.loads(value)))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.runner.run(self.caller.aclose)
        self.runner.close()
        self.cache.close()
        if self.is_worker:
            return
        # Read back from results.jsonl, sorted: kept in memory through the run, the records
        # were the largest thing that grew with the items.
        records = self.results.finish()
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
            if self._grader_ready is not None:
                await asyncio.wrap_future(self._grader_ready)
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
        task = asyncio.ensure_future(encounter)
        task.add_done_callback(_read_error)
        try:
            return await asyncio.wait_for(task, limit)
        except asyncio.TimeoutError:
            return self._failed_transcript(
                item, f"encounter timeout: not finished within {limit:g} s "
                      f"(--agent-encounter-timeout)")

    def _make_agent(self, role: str, model: str, case: Case, bias: str) -> object | None:
        return self.config.hook.pytest_agentclinic_make_agent(  # type: ignore[no-any-return]
            role=role, model=model, case=case, bias=bias, config=self.config)

    def finish_item(self, item: EncounterItem) -> None:
        """Wait for ``item``'s encounter, save its transcript and attach its result record."""
        # Redacted once here, so the file, the record, the JUnit property and the terminal
        # message all carry the same clean text.
        transcript = Transcript.model_validate_json(redact(self._await(item).model_dump_json()))
        item.transcript = transcript
        item.transcript_path = rundir.write_transcript(self.run_dir, item.path, item.nodeid,
                                                       transcript)
        record = ResultRecord.from_transcript(
            transcript, run=self.run_name, nodeid=item.nodeid, expected=item.spec.case.diagnosis,
            transcript_path=item.transcript_path, case_file=str(item.path),
            difficulty=item.spec.case.difficulty,
            measures=for_encounter(item.spec.case, transcript.utterances,
                                   outcome=transcript.outcome, experiment=transcript.experiment))
        record.served = self.caller.served_identities(dict.fromkeys(record.models.values()))
        # JSON text, not a dict: JUnit XML writes a property's str(), and a dict's is a repr.
        item.user_properties.append(
            (RECORD_PROPERTY, json.dumps(redact_data(record.model_dump(mode="json")))))
        if self.fatal is not None:
            # The first item to meet a fatal error reports it once and stops the session;
            # nothing else will run, so the runner's thread is ended now.
            self.runner.close()
            item.session.shouldstop = f"agentclinic: fatal model error: {self.fatal}"
            raise EncounterError(f"{FATAL_PREFIX}, stopping the session: {self.fatal}")

    def _await(self, item: EncounterItem) -> Transcript:
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
                        self.fatal = (f"an encounter blocked the event loop past "
                                      f"--agent-encounter-timeout ({limit:g} s); a custom agent "
                                      f"calling blocking code?")
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
