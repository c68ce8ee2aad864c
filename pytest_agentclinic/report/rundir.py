"""The run's reports written into its directory: summary.json, summary.md, report.html.

The run directory itself (paths, results, transcripts, manifest, locks, safe writes, the
typed summary and its builder) is the run store, :mod:`pytest_agentclinic.runs`, below the
reports; this module writes what is built from its records with the tables, the HTML page
and the gate. The store's functions are re-exported here under their old names for one
release (``rundir.load_records`` ...): new code imports them from ``runs``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..core.heap import gc_paused as gc_paused
from ..core.records import ResultRecord
from ..core.redact import redact
from ..runs.directory import MANIFEST as MANIFEST
from ..runs.directory import MANIFEST_VERSION as MANIFEST_VERSION
from ..runs.directory import REVIEW_FILE as REVIEW_FILE
from ..runs.directory import SUMMARY as SUMMARY
from ..runs.directory import Manifest as Manifest
from ..runs.directory import completeness as completeness
from ..runs.directory import load_records as load_records
from ..runs.directory import load_records_skipping_bad, read_baseline
from ..runs.directory import read_manifest as read_manifest
from ..runs.directory import read_review as read_review
from ..runs.directory import read_summary as read_summary
from ..runs.directory import results_path as results_path
from ..runs.directory import start_run as start_run
from ..runs.directory import write_review as write_review
from ..runs.errors import RunDirectoryError as RunDirectoryError
from ..runs.errors import RunDirError as RunDirError
from ..runs.errors import RunInUse as RunInUse
from ..runs.lock import RunLock as RunLock
from ..runs.lock import lock_run as lock_run
from ..runs.results import RESULTS as RESULTS
from ..runs.results import ResultsStream as ResultsStream
from ..runs.results import merge_results as merge_results
from ..runs.results import worker_results_name as worker_results_name
from ..runs.results import write_results as write_results
from ..runs.safe_write import atomic_text
from ..runs.safe_write import is_disk_full as is_disk_full
from ..runs.safe_write import write_text_atomic as write_text_atomic
from ..runs.summary import SUMMARY_VERSION as SUMMARY_VERSION
from ..runs.summary import RunSummary
from ..runs.summary import litellm_version as litellm_version
from ..runs.summary import record_roles as record_roles
from ..runs.summary import run_summary as run_summary
from ..runs.summary import served_models as served_models
from ..runs.summary import sha256_of as sha256_of
from ..runs.transcripts import NAME_PART as NAME_PART
from ..runs.transcripts import TRANSCRIPTS as TRANSCRIPTS
from ..runs.transcripts import copy_transcript as copy_transcript
from ..runs.transcripts import read_transcript as read_transcript
from ..runs.transcripts import write_transcript as write_transcript
from .gate import GateResult, GateSettings, evaluate
from .summary_md import render_markdown
from .tables import BY_CONDITION, BY_DOCTOR, Table, table_by_id


def write_reports(run_dir: Path, summary: dict[str, Any], records: Sequence[ResultRecord],
                  tables: Sequence[Table]) -> dict[str, Any]:
    """(Re)write summary.json, summary.md and report.html from the records and tables;
    return the summary as written."""
    written = write_reports_text(run_dir, summary, tables)
    # A table given as cells only (an extension's) shows as its cells, not not at all.
    write_html(run_dir, {t.title: t.data or [dict(zip(t.headers, row, strict=False))
                                             for row in t.rows] for t in tables},
               written, records)
    return written


def write_reports_text(run_dir: Path, summary: dict[str, Any],
                       tables: Sequence[Table]) -> dict[str, Any]:
    """(Re)write summary.json and summary.md; return the summary as written (a summary
    the one builder did not make, or made of another format, is refused)."""
    RunSummary.model_validate(summary)
    run_dir.mkdir(parents=True, exist_ok=True)
    # Found by id: a title changes with what the run pooled, and order with what it varied.
    by_doctor, by_condition = table_by_id(tables, BY_DOCTOR), table_by_id(tables, BY_CONDITION)
    summary = {**summary,
               "by_doctor": {row["group"]: row for row in (by_doctor.data if by_doctor else [])},
               "conditions": by_condition.data if by_condition else [],
               "tables": [asdict(t) for t in tables]}
    (run_dir / SUMMARY).write_text(redact(json.dumps(summary, indent=1)), encoding="utf-8")
    (run_dir / "summary.md").write_text(redact(render_markdown(summary, tables)),
                                        encoding="utf-8")
    return summary


def render_html(run_dir: Path, tables: Mapping[str, Sequence[Mapping[str, Any]]],
                summary: Mapping[str, Any],
                records: Sequence[ResultRecord] | None = None) -> str:
    """The HTML page of a run as one string (see :func:`write_html`; not redacted)."""
    pieces: list[str] = []
    _page(pieces.append, run_dir, tables, summary, records)
    return "".join(pieces)


def write_html(run_dir: Path, tables: Mapping[str, Sequence[Mapping[str, Any]]],
               summary: Mapping[str, Any],
               records: Sequence[ResultRecord] | None = None) -> Path:
    """Write ``run_dir/report.html``: ``records`` as given (read from the run when None),
    with the transcripts they name.

    The page is written as it is made, a transcript at a time, to a temporary file that
    replaces the page once whole.
    """
    from .html import REPORT_FILE

    path = run_dir / REPORT_FILE
    with atomic_text(path) as fh:
        # Each piece is whole (a transcript, a row, a part of the template): no secret
        # spans two of them.
        _page(lambda piece: fh.write(redact(piece)), run_dir, tables, summary, records)
    return path


def _page(write: Callable[[str], object], run_dir: Path,
          tables: Mapping[str, Sequence[Mapping[str, Any]]], summary: Mapping[str, Any],
          records: Sequence[ResultRecord] | None) -> None:
    from .html import write_page  # the page's template is read only when a page is made

    skipped = 0
    if records is None:
        records, skipped = load_records_skipping_bad(run_dir)
    # A generator: each transcript is read when the page reaches it, and let go after.
    transcripts = (read_transcript(run_dir, r) for r in records)
    write_page(write, run_dir.name, records, transcripts, tables, summary, skipped)


def judge_gate(settings: GateSettings, records: Sequence[ResultRecord]) -> GateResult:
    """The gate's :func:`~.gate.evaluate` with the baseline run read from
    ``settings.baseline``: an unreadable baseline is a failed check, never a pass (the pytest
    session and ``merge`` both)."""
    baseline: tuple[Sequence[ResultRecord], Mapping[str, Any]] = ((), {})
    error = None
    if settings.baseline is not None:
        try:
            baseline = read_baseline(settings.baseline)
        except (OSError, ValueError) as exc:
            error = str(exc)
    return evaluate(settings, records, baseline, error)
