"""The session's state: runs encounters, gathers results, writes and prints the reports."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any

import pytest

from .agents.factory import Variant, build_cast, build_craft_cast
from .collect import ERROR_NODE, RECORD_PROPERTY, EncounterError, EncounterItem
from .encounter.craftmd import CraftItem, converse, run_craftmd
from .encounter.engine import run_encounter
from .encounter.runner import EncounterRunner
from .encounter.transcript import Transcript
from .llm.cache import ResponseCache
from .llm.caller import ModelCaller
from .llm.errors import FatalLLMError
from .redact import redact, redact_data
from .report import gate, summary, writer
from .report.records import ResultRecord
from .report.tables import Table, build_tables
from .settings import Settings

#: Returns the items this process will run next (xdist workers only know their queue).
Lookahead = Callable[[pytest.Session, EncounterItem], Sequence[pytest.Item]]


#: How the error of the item that met a fatal model error begins.
FATAL_PREFIX = "fatal model error"


def default_run_name() -> str:
    """A sortable, unique run directory name."""
    return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"


def _all_after(session: pytest.Session, item: EncounterItem) -> Sequence[pytest.Item]:
    items = session.items
    return items[items.index(item):]


class AgentClinicSession:
    """Registered as a plugin in ``pytest_configure`` and kept in ``config.stash``."""

    def __init__(self, config: pytest.Config, settings: Settings, run_name: str) -> None:
        self.config = config
        self.settings = settings
        self.run_name = run_name
        self.run_dir = settings.report_dir / run_name
        self.is_worker = hasattr(config, "workerinput")
        self.lookahead: Lookahead = _all_after
        self.records: dict[str, dict[str, Any]] = {}
        self.bad_records = 0
        self.cache = ResponseCache(settings.cache_dir, settings.cache)
        self.caller = ModelCaller(settings.call, self.cache)
        self.runner = EncounterRunner(settings.concurrency)
        self.fatal: str | None = None
        self._tasks: dict[tuple[object, ...], Awaitable[Any]] = {}
        self.gate: gate.GateResult | None = None
        self.tables: list[Table] = []
        self._fatal_shown = False

    # ----------------------------------------------------------------- hooks

    def pytest_report_header(self) -> list[str]:
        roles = ", ".join(f"{role}={model}" for role, model in self.settings.roles.items())
        return [f"agentclinic: {roles}",
                f"agentclinic: turns={','.join(map(str, self.settings.turns))} "
                f"repeat={self.settings.repeat} cache={self.settings.cache.value} "
                f"concurrency={self.settings.concurrency}"]

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and re.search(ERROR_NODE, report.nodeid):
            self.bad_records += 1

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # A bad case record is a collection error, but it must not stop the file's other
        # cases from running: hide those errors from pytest's "errors during collection"
        # check, then count them again so the exit status still reports them.
        session.testsfailed -= self.bad_records
        try:
            return (yield)
        finally:
            session.testsfailed += self.bad_records

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and FATAL_PREFIX in str(report.longrepr):
            # Under xdist every worker meets the fatal error once: show it once.
            if self._fatal_shown:
                report.longrepr = f"not run: the session stopped on the {FATAL_PREFIX} above"
            self._fatal_shown = True
        for name, value in report.user_properties:
            if name == RECORD_PROPERTY and isinstance(value, dict):
                self.records[report.nodeid] = value

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.runner.close()
        self.cache.close()
        if self.is_worker:
            return
        records = self._records()
        if records:
            writer.write_results(self.run_dir, records)
            self.tables = build_tables(records)
            summary = writer.run_summary(self.settings, records, self.bad_records)
            writer.write_reports(self.run_dir, summary, records, self.tables)
        if self.settings.gate.active:
            self.gate = gate.evaluate(self.settings.gate, records)
            # With a gate, the gate decides the exit status; interruptions, usage and
            # internal errors keep theirs.
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                passed = self.gate.passed and self.bad_records == 0
                session.exitstatus = pytest.ExitCode.OK if passed else pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.tables:
            summary.print_summary(terminalreporter, self.settings.roles, self.tables,
                                  self.run_dir, self.bad_records)
        if self.gate is not None:
            summary.print_gate(terminalreporter, self.gate, self.bad_records)

    # ------------------------------------------------------------ encounters

    def _records(self) -> list[ResultRecord]:
        return [ResultRecord.model_validate(v) for _, v in sorted(self.records.items())]

    def _schedule(self, item: EncounterItem) -> concurrent.futures.Future[Transcript]:
        """Submit ``item`` and the items this process runs next, so they run concurrently."""
        for upcoming in self.lookahead(item.session, item):
            if isinstance(upcoming, EncounterItem) and not self.runner.submitted(upcoming.nodeid):
                self.runner.submit(upcoming.nodeid, self._encounter_factory(upcoming))
        return self.runner.submit(item.nodeid, self._encounter_factory(item))

    def _shared(self, key: tuple[object, ...],
                 factory: Callable[[], Awaitable[Any]]) -> Awaitable[Any]:
        """One task per key, awaited by every item that needs it (runs on the runner's loop)."""
        if key not in self._tasks:
            self._tasks[key] = asyncio.ensure_future(factory())
        return self._tasks[key]

    def _craftmd_factory(self, item: EncounterItem) -> Callable[[], Any]:
        spec, s = item.spec, self.settings
        assert spec.experiment is not None and spec.answer is not None
        models = {"doctor": spec.doctor, "patient": spec.patient, "summarizer": s.summarizer,
                  "moderator": s.moderator}
        cast = build_craft_cast(self.config, spec.case, models, self.caller, spec.candidates,
                                spec.sample)
        craft = CraftItem(spec.case, spec.experiment, spec.answer, spec.sample,
                          spec.turn_budget, spec.options)
        # Every experiment of a case reuses one conversation (and one summary of it).
        key = (str(item.path), spec.case.dataset, spec.case.id, spec.doctor, spec.patient,
               spec.sample)

        def conversation() -> Awaitable[Any]:
            return self._shared(("conversation", *key), lambda: converse(
                spec.case, cast, spec.turn_budget, spec.sample))

        async def summarize() -> Any:
            convo = await conversation()
            return await cast.summarizer.summarize(spec.case, convo.statements, spec.sample)

        async def play() -> Transcript:
            summary = lambda: self._shared(("summary", *key), summarize)  # noqa: E731
            try:
                return await self._deadline(item, run_craftmd(craft, cast, conversation,
                                                              summary))
            except FatalLLMError as exc:
                self._stop(exc)
                raise

        return play

    def _encounter_factory(self, item: EncounterItem) -> Callable[[], Any]:
        if item.spec.experiment is not None:
            return self._craftmd_factory(item)
        spec, settings = item.spec, self.settings
        models = {"doctor": spec.doctor, "patient": spec.patient,
                  "measurement": settings.measurement, "moderator": settings.moderator}

        variant = Variant(bias=spec.bias, image_mode=spec.image_mode)

        async def play() -> Transcript:
            cast = build_cast(self.config, spec.case, models, self.caller, spec.candidates,
                              variant)
            try:
                return await self._deadline(item, run_encounter(
                    spec.case, cast, budget=spec.turn_budget, sample=spec.sample,
                    bias=spec.bias, image_mode=spec.image_mode,
                    ask_perception=settings.perception))
            except FatalLLMError as exc:
                self._stop(exc)
                raise

        return play

    def _stop(self, exc: FatalLLMError) -> None:
        # Stop the other encounters in flight now: they would only fail the same way.
        self.fatal = self.fatal or redact(str(exc))
        self.runner.cancel_pending()

    async def _deadline(self, item: EncounterItem,
                        encounter: Awaitable[Transcript]) -> Transcript:
        """The encounter, or an *error* transcript once ``--agent-encounter-timeout`` passes
        (e.g. a custom agent that never returns)."""
        limit = self.settings.encounter_timeout
        try:
            return await asyncio.wait_for(encounter, limit)
        except asyncio.TimeoutError:
            return self._failed_transcript(
                item, f"encounter timeout: not finished within {limit:g} s "
                      f"(--agent-encounter-timeout)")

    def finish_item(self, item: EncounterItem) -> None:
        """Wait for ``item``'s encounter, save its transcript and attach its result record."""
        # Redacted once here, so the file, the record, the JUnit property and the terminal
        # message all carry the same clean text.
        transcript = Transcript.model_validate_json(redact(self._await(item).model_dump_json()))
        item.transcript = transcript
        item.transcript_path = writer.write_transcript(self.run_dir, item.path, item.nodeid,
                                                       transcript)
        record = ResultRecord.from_transcript(
            transcript, run=self.run_name, nodeid=item.nodeid, expected=item.spec.case.diagnosis,
            transcript_path=item.transcript_path, case_file=str(item.path),
            difficulty=item.spec.case.difficulty)
        item.user_properties.append((RECORD_PROPERTY,
                                     redact_data(record.model_dump(mode="json"))))
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
            # The encounter's own deadline fires on the runner's loop; this one guards against
            # an agent that blocks the loop itself (synchronous code that never returns).
            return self._schedule(item).result(timeout=limit + min(60.0, limit))
        except concurrent.futures.TimeoutError:
            self.fatal = (f"an encounter blocked the event loop past --agent-encounter-timeout "
                          f"({limit:g} s); a custom agent calling blocking code?")
            return self._failed_transcript(item, self.fatal)
        except (FatalLLMError, concurrent.futures.CancelledError):
            # ``play`` recorded a fatal error in ``self.fatal``; otherwise the session is ending.
            return self._failed_transcript(item, self.fatal or "cancelled: the session ended")
        except Exception as exc:  # a bug in a custom agent must not lose the other results
            return self._failed_transcript(item, redact(f"{type(exc).__name__}: {exc}"))

    def _failed_transcript(self, item: EncounterItem, error: str) -> Transcript:
        case = item.spec.case
        return Transcript(case_id=case.id, dataset=case.dataset, specialty=case.specialty,
                          models={**self.settings.roles, "doctor": item.spec.doctor,
                                  "patient": item.spec.patient},
                          sample=item.spec.sample, turn_budget=item.spec.turn_budget,
                          outcome="error", error=error)
