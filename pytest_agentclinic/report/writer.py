"""Writes a run directory: transcripts, ``results.jsonl`` and ``summary.json``."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..encounter.transcript import Transcript
from ..settings import Settings
from .records import ResultRecord
from .stats import group_rows

SUMMARY_VERSION = 1


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def write_transcript(run_dir: Path, file_stem: str, item_name: str, t: Transcript) -> str:
    """Save one encounter's transcript; return its path."""
    path = run_dir / "transcripts" / f"{_safe(file_stem)}__{_safe(item_name)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(t.model_dump_json(indent=1), encoding="utf-8")
    return str(path)


def _sha256(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def run_summary(settings: Settings, records: Sequence[ResultRecord],
                bad_records: int) -> dict[str, Any]:
    """The run's settings and headline numbers, as ``summary.json`` holds them."""
    files = sorted({r.case_file for r in records if r.case_file})
    hits = sum(u.cache_hits for r in records for u in r.usage.values())
    calls = sum(u.calls for r in records for u in r.usage.values())
    return {
        "version": SUMMARY_VERSION,
        "plugin_version": __version__,
        "run": records[0].run if records else None,
        "roles": settings.roles,
        "turn_budgets": list(settings.turns),
        "repeat": settings.repeat,
        "cache_mode": settings.cache.value,
        "temperature": settings.call.temperature,
        "case_files": {f: _sha256(f) for f in files},
        "items": len(records),
        "bad_case_records": bad_records,
        "model_calls": calls,
        "cache_hits": hits,
        "cache_misses": calls - hits,
        "by_doctor": group_rows(records, lambda r: r.doctor),
    }


def write_run(run_dir: Path, settings: Settings, records: Sequence[ResultRecord],
              bad_records: int) -> None:
    """Write ``results.jsonl`` (one record per item) and ``summary.json``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")
    summary = run_summary(settings, records, bad_records)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
