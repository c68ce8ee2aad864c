"""The run directory's one reader and writer.

A run directory holds ``run.json`` (the manifest: how many items the run planned),
``results.jsonl`` (one result record per finished item, appended and flushed as each item
finishes, so a killed run keeps what it finished; an xdist worker streams its own
``results.<worker>.jsonl``, merged as the run ends and read as part of the run until then),
``.lock`` (the pid of the session that owns the directory), ``transcripts/``, and the reports built
from the records (``summary.json``, ``summary.md``, ``report.html``). Everything that reads or
writes those files (the pytest session, ``play``, ``import-craftmd``, ``report``, ``compare``,
the gate's baseline and the HTML page) goes through this module; results.jsonl's lines are
read and written by :mod:`.results_jsonl`, for this module only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.heap import gc_paused as gc_paused
from ..core.records import ResultRecord
from ..core.redact import redact
from ..core.transcript import Transcript
from .gate import GateResult, GateSettings, evaluate
from .results_jsonl import RESULTS as RESULTS
from .results_jsonl import WORKER_GLOB, read_records
from .results_jsonl import ResultsStream as ResultsStream
from .results_jsonl import merge_results as merge_results
from .results_jsonl import worker_results_name as worker_results_name
from .results_jsonl import write_results as write_results
from .run_summary import SUMMARY_VERSION as SUMMARY_VERSION
from .run_summary import build_summary, check_version
from .run_summary import record_roles as record_roles
from .run_summary import served_models as served_models
from .run_summary import sha256_of as sha256_of
from .runlock import RunDirError as RunDirError
from .runlock import RunInUse as RunInUse
from .runlock import RunLock as RunLock
from .runlock import lock_run as lock_run
from .safe_write import atomic_text, write_text_atomic
from .safe_write import is_disk_full as is_disk_full
from .summary_md import render_markdown
from .tables import Table

MANIFEST_VERSION = 1
SUMMARY = "summary.json"
MANIFEST = "run.json"
TRANSCRIPTS = "transcripts"


# --- paths ---------------------------------------------------------------------------------

def results_path(path: str | Path) -> Path:
    """``results.jsonl`` of a run given as its directory, the file, or ``summary.json``."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS
    elif p.name in (SUMMARY, MANIFEST):
        p = p.with_name(RESULTS)
    if not p.is_file():
        raise FileNotFoundError(f"no results file at {p} (give a run directory, its "
                                f"results.jsonl, or the summary.json beside it)")
    return p

def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


# --- records -------------------------------------------------------------------------------

def load_records(path: str | Path) -> list[ResultRecord]:
    """Read a run's ``results.jsonl``; a bad line raises ValueError naming file and line.

    pydantic's JSON validation runs in Rust and reads 40,000 lines in about half a second,
    so the records are validated rather than trusted.
    """
    records, _ = read_records(results_path(path), strict=True)
    return records


def load_records_skipping_bad(path: str | Path) -> tuple[list[ResultRecord], int]:
    """Like :func:`load_records`, but skip unreadable lines and count them (none: no file).

    For views of a run (the HTML page), where one damaged line from a crashed writer should
    not cost the whole report.
    """
    try:
        p = results_path(path)
    except FileNotFoundError:
        return [], 0
    return read_records(p, strict=False)


# --- manifest ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Manifest:
    """What a run planned, written before its first item runs."""

    run: str
    planned_items: int
    started_at: float
    version: int = MANIFEST_VERSION


def start_run(run_dir: Path, run: str, planned_items: int) -> None:
    """Write the manifest and empty ``results.jsonl`` (a reused run name starts afresh)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(run=run, planned_items=planned_items, started_at=time.time())
    write_text_atomic(run_dir / MANIFEST, json.dumps(asdict(manifest)))
    (run_dir / RESULTS).write_text("", encoding="utf-8")
    for stale in run_dir.glob(WORKER_GLOB):  # a previous run's workers' files
        stale.unlink()


def read_manifest(run_dir: Path) -> Manifest | None:
    """The run's manifest, or None (imported runs and older runs have none)."""
    try:
        data = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
        return Manifest(run=str(data["run"]), planned_items=int(data["planned_items"]),
                        started_at=float(data.get("started_at", 0.0)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def completeness(run_dir: Path, finished: int) -> str | None:
    """``partial: N of M items`` when the run planned more items than it finished."""
    manifest = read_manifest(run_dir)
    if manifest is None or finished >= manifest.planned_items:
        return None
    return f"partial: {finished} of {manifest.planned_items} items"


# --- transcripts ---------------------------------------------------------------------------

#: Longest readable part of a transcript's file name: most file systems allow 255 bytes per
#: name, and a case id or specialty may be longer ("File name too long" lost the record).
NAME_PART = 60


def write_transcript(run_dir: Path, case_file: str | Path, item_id: str, t: Transcript) -> str:
    """Save one encounter's transcript (secrets redacted); return its path.

    The name is readable (file stem and item name, each cut to :data:`NAME_PART`
    characters) and unique: a hash of the case file's resolved path and the full item id
    tells ``a/derm.yaml`` from ``b/derm.yaml`` and two long ids that share their first
    characters. The full id stays in the record.
    """
    source = Path(case_file)
    digest = hashlib.sha256(f"{source.resolve()}\0{item_id}".encode()).hexdigest()[:10]
    name = item_id.rsplit("::", 1)[-1]
    stem, item = _safe(source.stem)[:NAME_PART], _safe(name)[:NAME_PART]
    # A string, not a Path: pathlib interns every part it parses, each item's name too.
    folder = os.path.join(run_dir, TRANSCRIPTS)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{stem}__{item}-{digest}.json")
    write_text_atomic(path, redact(t.model_dump_json(indent=1)))
    return path


def read_transcript(run_dir: Path, record: ResultRecord) -> tuple[Transcript | None, str | None]:
    """The record's transcript, or ``None`` and a note saying why there is none."""
    if not record.transcript:
        return None, "No transcript was saved for this encounter (e.g. an imported run)."
    candidate = _transcript_file(run_dir, record.transcript)
    if candidate is None:
        return None, f"Transcript file not found: {record.transcript}"
    try:
        with open(candidate, "rb") as fh:
            return Transcript.model_validate_json(fh.read()), None
    except (OSError, ValidationError) as exc:
        return None, f"Transcript {candidate} could not be read: {type(exc).__name__}."


def _transcript_file(run_dir: Path, ref: str) -> str | None:
    """Where the transcript ``ref`` of a run in ``run_dir`` is now, if anywhere."""
    # Paths are written as the run saw them; a moved or copied run directory still holds the
    # file under transcripts/, so look there too. Strings, not Paths: see write_transcript.
    candidates = ([ref] if os.path.isabs(ref)
                  else [os.path.join(os.getcwd(), ref), os.path.join(run_dir, ref)])
    candidates.append(os.path.join(run_dir, TRANSCRIPTS, os.path.basename(ref)))
    return next((c for c in candidates if os.path.isfile(c)), None)


def copy_transcript(run_dir: Path, record: ResultRecord, target_dir: Path) -> str | None:
    """Copy the record's transcript into run ``target_dir``; its new path, or None when the
    record has none or the file is gone (a merge of runs that moved)."""
    source = _transcript_file(run_dir, record.transcript) if record.transcript else None
    if source is None:
        return None
    target = target_dir / TRANSCRIPTS / os.path.basename(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return str(target)


# --- summary and reports -------------------------------------------------------------------

def read_summary(path: Path) -> dict[str, Any]:
    """The run's ``summary.json`` (``path`` is the run directory or a file in it); {} if none."""
    run_dir = path if path.is_dir() else path.parent
    summary_path = run_dir / SUMMARY
    if not summary_path.exists():
        return {}
    try:
        data = json.loads(summary_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{summary_path}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        return {}
    check_version(data, str(summary_path))
    return data


def read_baseline(path: Path) -> tuple[list[ResultRecord], dict[str, Any]]:
    """A gate baseline: its records (when the run directory or results.jsonl is given, or
    only records exist) and its summary."""
    run_dir = path if path.is_dir() else path.parent
    summary = read_summary(path)
    results = run_dir / RESULTS
    if results.exists() and (path.is_dir() or path.name == RESULTS or not summary):
        return load_records(results), summary
    return [], summary


def litellm_version() -> str | None:
    """litellm's installed version, read from its metadata: importing it costs seconds."""
    try:
        return metadata.version("litellm")
    except metadata.PackageNotFoundError:
        return None


def run_summary(header: Mapping[str, Any], records: Sequence[ResultRecord],
                bad_records: int) -> dict[str, Any]:
    """``summary.json``'s fields (:func:`.run_summary.build_summary`, the one builder)."""
    return build_summary(header, records, bad_records, litellm_version=litellm_version())


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
    """(Re)write summary.json and summary.md; return the summary as written."""
    run_dir.mkdir(parents=True, exist_ok=True)
    conditions = next((t.data for t in tables if t.title == "accuracy by condition"), [])
    summary = {**summary, "by_doctor": {row["group"]: row for row in tables[0].data},
               "conditions": conditions, "tables": [asdict(t) for t in tables]}
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


REVIEW_FILE = "review.json"


def write_review(run_dir: Path, review: Mapping[str, Any]) -> Path:
    """Write the run's imported expert review (``agentclinic review --import``)."""
    path = run_dir / REVIEW_FILE
    path.write_text(json.dumps(review, indent=1), encoding="utf-8")
    return path


def read_review(run_dir: Path) -> dict[str, Any] | None:
    """The run's imported expert review, or None when there is none."""
    path = run_dir / REVIEW_FILE
    if not path.is_file():
        return None
    review: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return review


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
