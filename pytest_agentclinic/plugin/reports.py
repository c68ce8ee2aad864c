"""The run's end on the process that owns the run directory: the records merged from disk,
the gate judged, the tables, summary.json, summary.md and report.html written, the terminal
summary printed.

Ctrl-C or a full disk while the reports are written stops the reports with one line; every
finished record is on disk already (:mod:`.interrupts`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..core.records import ResultRecord
from ..core.threads import start_thread
from ..llm.served import UNKNOWN, redact_url
from ..protocols.registry import report_tables
from ..report import gate, rundir, summary
from ..report.summary_md import append_step_summary
from ..report.tables import Table
from ..runs.merging import RunningMerge
from .interrupts import defer_interrupts, restore_interrupts, say
from .item import RECORD_PROPERTY
from .junit import write_gate_testcases
from .settings import Settings


class FinalReports:
    """Judges the gate and writes the reports of a run (the controller under xdist)."""

    def __init__(self, config: pytest.Config, settings: Settings, run_dir: Path,
                 merge: RunningMerge) -> None:
        self.config = config
        self.settings = settings
        self.run_dir = run_dir
        #: The records, parsed as their items report (:meth:`received`).
        self.merge = merge
        self.started_at = time.time()
        self.gate: gate.GateResult | None = None
        self.tables: list[Table] = []
        #: Models whose server did not say which model it serves (one line at the end).
        self.unknown_served: list[str] = []
        #: Fields other features add to summary.json (e.g. the run stopped on cost).
        self.summary_extra: dict[str, Any] = {}
        #: Bad case records met at collection (counted by the session's hooks).
        self.bad_records = 0
        self._writing = False
        self._sigint: Any = None
        #: The merged records, from the gate's step to the reports' step.
        self._records: list[ResultRecord] | None = None
        #: The first record that arrived, for the tables' warm-up (:meth:`workers_leaving`).
        self._first: ResultRecord | None = None
        #: Runs the tables' code once on the first record (:func:`warm_reports`).
        self.warming: threading.Thread | None = None

    def received(self, report: pytest.TestReport) -> None:
        """An item's report: the record it carries joins the merge (once per item; its
        call's report and its teardown's both carry it)."""
        if report.nodeid in self.merge:
            return
        text = next((v for name, v in report.user_properties if name == RECORD_PROPERTY), None)
        if isinstance(text, str):
            node = getattr(report, "node", None)  # xdist's controller names the worker
            worker = node.workerinput["workerid"] if node is not None else None
            self.merge.add(report.nodeid, text, worker)
            if self._first is None:
                self._first = self.merge.record(report.nodeid)
                if self._first is not None:
                    start_thread(warm_report_code, name="agentclinic-warm-report-code")

    def workers_leaving(self) -> None:
        """Half a split xdist run's workers have finished (or this process's session has):
        the process tree is past its peak. Parse the records held
        (:meth:`.RunningMerge.parse_held`) and warm the tables' code, in a thread: the
        tables import numpy (~12.5 MB), which, while every worker still held its items,
        added to the tree's peak."""
        self.merge.parse_held()
        if self.warming is None and self._first is not None:
            self.warming = start_thread(warm_reports, self._first, name="agentclinic-warm-tables")

    def judge(self, session: pytest.Session, started: bool) -> None:
        """Merge the records streamed to disk and judge the gate: its exit status and JUnit
        testcase must be in before pytest's junitxml writes its file. Ctrl-C from now on
        only stops the reports."""
        self.workers_leaving()  # a run without xdist: its tables warm while it merges
        self._sigint = defer_interrupts(session, lambda: self._writing)
        self._reporting(session, lambda: self._judge(session, started))

    def write(self, session: pytest.Session) -> None:
        """Write the reports of the merged records (once the workers are gone)."""
        if self._records is not None:
            self._reporting(session, self._write)

    def restore(self) -> None:
        """Put back the Ctrl-C handler :meth:`judge` replaced."""
        restore_interrupts(self._sigint)
        self._sigint = None

    def _reporting(self, session: pytest.Session, step: Callable[[], None]) -> None:
        """Run a step of the final reports; Ctrl-C or a full disk stops it with one line."""
        try:
            self._writing = True
            step()
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
            self._writing = False

    def _judge(self, session: pytest.Session, started: bool) -> None:
        # Parsed as the items reported (sharing what records hold alike: ~1/3 of a fresh
        # record's memory), only sorted and written in order now.
        records = self.merge.finish() if started else []
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

    def _write(self) -> None:
        """The tables, summary.json, summary.md and report.html of the merged records."""
        records, self._records = self._records or [], None
        if not records:
            return
        if self.warming is not None:
            self.warming.join()  # long done: it ran while the encounters played
        self.tables = report_tables(records)
        header = {**self._run_info(), **self.settings.summary_header()}
        run_summary = rundir.run_summary(header, records, self.bad_records)
        run_summary.update(self.summary_extra)
        if self.gate is not None:
            run_summary["gate"] = self.gate.to_dict()
        rundir.write_reports(self.run_dir, run_summary, records, self.tables)
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

    def print_summary(self, terminalreporter: Any) -> None:
        """The tables, the subset and the gate's verdict at the end of pytest's output."""
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


def warm_report_code() -> None:
    """Import the page's code, in a thread while the encounters play (none of it imports
    numpy). A failure here is met again, and reported, when the reports are written."""
    with contextlib.suppress(Exception):
        importlib.import_module("pytest_agentclinic.report.html")


def warm_reports(record: ResultRecord) -> None:
    """Build the tables of one record, in a thread once the first worker has finished
    (:meth:`FinalReports.workers_leaving`): their first use imports and prepares what the
    reports compute with (numpy, the installed protocols' tables, the statistics), CPU that
    the end of the run paid (tables of 4,000 records: 0.235 -> 0.154 s); in a split run the
    first worker finishes seconds before the last. The heap is frozen after (see
    ``xdist_hooks.warm_report_imports``). A failure here is met again, and reported, when
    the reports are written."""
    with contextlib.suppress(Exception):
        report_tables([record], resamples=100)
    gc.freeze()


class _GateVerdict:
    """Counted in pytest's final line as "1 gate failed"."""

    count_towards_summary = True


def _say_gate_failed(terminalreporter: Any) -> None:
    """Make pytest's final line say the gate's verdict: "1 gate failed", in red. pytest
    colours the line red when its stats hold a "failed" key; an empty one adds no count
    (a gated run's misses are xfailed, so the line was green on exit status 1)."""
    terminalreporter.stats.setdefault("failed", [])
    terminalreporter.stats.setdefault("gate failed", []).append(_GateVerdict())
