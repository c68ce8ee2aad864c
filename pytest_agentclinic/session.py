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
from .collect import RECORD_PROPERTY, UNPLAYED_PROPERTY, EncounterError, EncounterItem
from .encounter.craftmd import CraftItem, converse, run_craftmd
from .encounter.engine import run_encounter
from .encounter.runner import EncounterRunner, NotPlayed
from .encounter.transcript import Transcript
from .llm.cache import ResponseCache
from .llm.caller import ModelCaller
from .llm.errors import FatalLLMError
from .report import gate, summary, writer
from .report.records import ResultRecord
from .report.tables import Table, build_tables
from .settings import Settings

#: Returns the items this process will run next (xdist workers only know their queue).
Lookahead = Callable[[pytest.Session, EncounterItem], Sequence[pytest.Item]]
#: Seconds between :attr:`AgentClinicSession.on_wait` calls.
WAIT_TICK = 0.25


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
        #: Fields the operations plugin adds to summary.json (e.g. the run stopped on cost).
        self.summary_extra: dict[str, Any] = {}
        #: Called every :data:`WAIT_TICK` seconds while an item waits for its encounter.
        self.on_wait: Callable[[], None] = lambda: None

    # ----------------------------------------------------------------- hooks

    def pytest_report_header(self) -> list[str]:
        roles = ", ".join(f"{role}={model}" for role, model in self.settings.roles.items())
        return [f"agentclinic: {roles}",
                f"agentclinic: turns={','.join(map(str, self.settings.turns))} "
                f"repeat={self.settings.repeat} cache={self.settings.cache.value} "
                f"concurrency={self.settings.concurrency}"]

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and re.search(r"::line-\d+$", report.nodeid):
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

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
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
            summary.update(self.summary_extra)
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
        key = (spec.case.dataset, spec.case.id, spec.doctor, spec.patient, spec.sample)

        def conversation() -> Awaitable[Any]:
            return self._shared(("conversation", *key), lambda: converse(
                spec.case, cast, spec.turn_budget, spec.sample))

        async def summarize() -> Any:
            convo = await conversation()
            return await cast.summarizer.summarize(spec.case, convo.statements, spec.sample)

        async def play() -> Transcript:
            summary = lambda: self._shared(("summary", *key), summarize)  # noqa: E731
            try:
                return await run_craftmd(craft, cast, conversation, summary)
            except FatalLLMError as exc:
                self.fatal = self.fatal or str(exc)
                self.runner.cancel_pending()
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
                return await run_encounter(spec.case, cast, budget=spec.turn_budget,
                                           sample=spec.sample, bias=spec.bias,
                                           image_mode=spec.image_mode,
                                           ask_perception=settings.perception)
            except FatalLLMError as exc:
                # Stop the other encounters in flight now: they would only fail the same way.
                self.fatal = self.fatal or str(exc)
                self.runner.cancel_pending()
                raise

        return play

    def finish_item(self, item: EncounterItem) -> None:
        """Wait for ``item``'s encounter, save its transcript and attach its result record."""
        transcript = self._await(item)
        item.transcript = transcript
        item.transcript_path = writer.write_transcript(self.run_dir, item.path.stem, item.name,
                                                       transcript)
        record = ResultRecord.from_transcript(
            transcript, run=self.run_name, nodeid=item.nodeid, expected=item.spec.case.diagnosis,
            transcript_path=item.transcript_path, case_file=str(item.path),
            difficulty=item.spec.case.difficulty)
        record.served = self.caller.served_identities(dict.fromkeys(record.models.values()))
        item.user_properties.append((RECORD_PROPERTY, record.model_dump(mode="json")))
        if self.fatal is not None:
            # The first item to meet a fatal error reports it once and stops the session;
            # nothing else will run, so the runner's thread is ended now.
            self.runner.close()
            item.session.shouldstop = f"agentclinic: fatal model error: {self.fatal}"
            raise EncounterError(f"fatal model error, stopping the session: {self.fatal}")

    def _await(self, item: EncounterItem) -> Transcript:
        if self.fatal is not None:
            return self._failed_transcript(item, f"not run after a fatal error: {self.fatal}")
        try:
            future = self._schedule(item)
            while not concurrent.futures.wait([future], timeout=WAIT_TICK).done:
                self.on_wait()  # the status line, written from this (the main) thread
            return future.result()
        except NotPlayed as exc:
            item.user_properties.append((UNPLAYED_PROPERTY, str(exc)))
            pytest.skip(str(exc))
        except (FatalLLMError, concurrent.futures.CancelledError):
            # ``play`` recorded a fatal error in ``self.fatal``; otherwise the session is ending.
            return self._failed_transcript(item, self.fatal or "cancelled: the session ended")
        except Exception as exc:  # a bug in a custom agent must not lose the other results
            return self._failed_transcript(item, f"{type(exc).__name__}: {exc}")

    def _failed_transcript(self, item: EncounterItem, error: str) -> Transcript:
        case = item.spec.case
        return Transcript(case_id=case.id, dataset=case.dataset, specialty=case.specialty,
                          models={**self.settings.roles, "doctor": item.spec.doctor,
                                  "patient": item.spec.patient},
                          sample=item.spec.sample, turn_budget=item.spec.turn_budget,
                          outcome="error", error=error)
