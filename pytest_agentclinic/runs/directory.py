"""The run directory: where its files are, its manifest, and its summary and review read
back.

A run directory holds ``run.json`` (the manifest: how many items the run planned),
``results.jsonl`` (:mod:`.results`), ``.lock`` (:mod:`.lock`), ``transcripts/``
(:mod:`.transcripts`), ``review.json`` (an imported expert review) and the reports built
from the records (``summary.json``, whose fields :mod:`.summary` builds, ``summary.md``,
``report.html``). Every versioned file is checked when read (:mod:`..core.versioned`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.records import ResultRecord
from ..core.versioned import Format, read_json
from .errors import NoResults
from .results import RESULTS, WORKER_GLOB, first_error, read_records
from .safe_write import write_text_atomic
from .summary import RunSummary, check_version

MANIFEST_VERSION = 1
MANIFEST_FORMAT = Format("run manifest", MANIFEST_VERSION, unversioned=1)
REVIEW_VERSION = 1
#: ``review.json``: an expert review imported into the run (``agentclinic review``).
REVIEW_FORMAT = Format("expert review", REVIEW_VERSION)
SUMMARY = "summary.json"
MANIFEST = "run.json"
REVIEW_FILE = "review.json"


def results_path(path: str | Path) -> Path:
    """``results.jsonl`` of a run given as its directory, the file, or ``summary.json``."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS
    elif p.name in (SUMMARY, MANIFEST):
        p = p.with_name(RESULTS)
    if not p.is_file():
        raise NoResults(f"no results file at {p} (give a run directory, its "
                                f"results.jsonl, or the summary.json beside it)")
    return p


# --- records -------------------------------------------------------------------------------

def load_records(path: str | Path) -> list[ResultRecord]:
    """Read a run's ``results.jsonl``; a bad line raises an InputError naming file and line
    (:class:`.errors.NoResults` when there is none).

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


def clear_workers_results(run_dir: Path) -> None:
    """Remove a previous run's xdist workers' results files (a reused run name starts
    afresh). Under xdist the controller does so before its workers start: a worker may
    write its first records before the run's plan, and so its manifest, is known."""
    for stale in run_dir.glob(WORKER_GLOB):
        stale.unlink()


def start_run(run_dir: Path, run: str, planned_items: int, *,
              workers_cleared: bool = False) -> None:
    """Write the manifest and empty ``results.jsonl`` (a reused run name starts afresh);
    and remove the workers' results files unless ``workers_cleared`` (they were removed
    before this run's workers started: what is there now is theirs)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(run=run, planned_items=planned_items, started_at=time.time())
    write_text_atomic(run_dir / MANIFEST, json.dumps(asdict(manifest)))
    (run_dir / RESULTS).write_text("", encoding="utf-8")
    if not workers_cleared:
        clear_workers_results(run_dir)


def read_manifest(run_dir: Path) -> Manifest | None:
    """The run's manifest, or None (imported runs and older runs have none, and a damaged
    one says nothing); :class:`~..core.versioned.UnknownVersion` for a manifest of a format
    this version cannot read."""
    path = run_dir / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    data = MANIFEST_FORMAT.upgrade(data, str(path))
    try:
        return Manifest(run=str(data["run"]), planned_items=int(data["planned_items"]),
                        started_at=float(data.get("started_at", 0.0)))
    except (ValueError, KeyError, TypeError):
        return None


def completeness(run_dir: Path, finished: int) -> str | None:
    """``partial: N of M items`` when the run planned more items than it finished."""
    manifest = read_manifest(run_dir)
    if manifest is None or finished >= manifest.planned_items:
        return None
    return f"partial: {finished} of {manifest.planned_items} items"


# --- summary, baseline, review -------------------------------------------------------------

def read_summary(path: Path) -> dict[str, Any]:
    """The run's ``summary.json`` (``path`` is the run directory or a file in it) as the
    current format (checked against :class:`.summary.RunSummary`); {} if none."""
    run_dir = path if path.is_dir() else path.parent
    summary_path = run_dir / SUMMARY
    if not summary_path.exists():
        return {}
    data = read_json(summary_path)
    if not isinstance(data, dict):
        return {}
    data = check_version(data, str(summary_path))
    try:
        RunSummary.model_validate(data)
    except ValueError as exc:
        raise InputError(first_error(exc), path=summary_path) from None
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
    review = read_json(path)
    if not isinstance(review, dict):
        raise InputError(f"not an expert review (a JSON {type(review).__name__})", path=path)
    return REVIEW_FORMAT.upgrade(review, str(path))
