"""Writes a run directory: transcripts, ``results.jsonl`` and ``summary.json``."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import __version__
from ..encounter.transcript import Transcript
from ..settings import Settings
from .records import ResultRecord
from .summary_md import render_markdown
from .tables import Table

SUMMARY_VERSION = 1


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def write_transcript(run_dir: Path, file_stem: str, item_name: str, t: Transcript) -> str:
    """Save one encounter's transcript; return its path."""
    path = run_dir / "transcripts" / f"{_safe(file_stem)}__{_safe(item_name)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(t.model_dump_json(indent=1), encoding="utf-8")
    return str(path)


def sha256_of(path: str) -> str:
    """The file's sha256, or "unreadable"."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def litellm_version() -> str | None:
    """litellm's installed version, read from its metadata: importing it costs seconds."""
    try:
        return metadata.version("litellm")
    except metadata.PackageNotFoundError:
        return None


def run_summary(settings: Settings, records: Sequence[ResultRecord], bad_records: int,
                info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The run's settings and counts, as ``summary.json`` holds them (tables are added).

    ``info``: ``date`` (ISO 8601, UTC), ``duration_s`` and ``command`` of the pytest run.
    """
    files = sorted({r.case_file for r in records if r.case_file})
    hits = sum(u.cache_hits for r in records for u in r.usage.values())
    calls = sum(u.calls for r in records for u in r.usage.values())
    return {
        "version": SUMMARY_VERSION,
        **(info or {}),
        "plugin_version": __version__,
        "litellm_version": litellm_version(),
        "api_base": settings.call.api_base,
        "run": records[0].run if records else None,
        "protocol": settings.protocol,
        "roles": _roles(settings, records),
        "turn_budgets": list(settings.turns),
        "biases": list(settings.biases),
        "image_modes": list(settings.image_modes),
        "experiments": list(settings.experiments) if settings.protocol == "craftmd" else [],
        "answer_modes": list(settings.answers) if settings.protocol == "craftmd" else [],
        "repeat": settings.repeat,
        "cache_mode": settings.cache.value,
        "temperature": settings.call.temperature,
        "case_files": {f: sha256_of(f) for f in files},
        "items": len(records),
        "bad_case_records": bad_records,
        "model_calls": calls,
        "cache_hits": hits,
        "cache_misses": calls - hits,
    }


def _roles(settings: Settings, records: Sequence[ResultRecord]) -> dict[str, str]:
    """Each role's model as the records name it (a conftest's agent names itself), else as
    configured."""
    roles = {}
    for role, configured in settings.roles.items():
        seen = sorted({r.models[role] for r in records if role in r.models})
        roles[role] = ", ".join(seen) if seen else configured
    return roles


def write_reports(run_dir: Path, summary: dict[str, Any], records: Sequence[ResultRecord],
                  tables: Sequence[Table]) -> dict[str, Any]:
    """(Re)write summary.json, summary.md and report.html from the tables; return the summary."""
    written = write_reports_text(run_dir, summary, tables)
    write_html_report(run_dir, tables, written)
    return written


def write_reports_text(run_dir: Path, summary: dict[str, Any],
                       tables: Sequence[Table]) -> dict[str, Any]:
    """(Re)write summary.json and summary.md; return the summary as written."""
    conditions = next((t.data for t in tables if t.title == "accuracy by condition"), [])
    summary = {**summary, "by_doctor": {row["group"]: row for row in tables[0].data},
               "conditions": conditions, "tables": [asdict(t) for t in tables]}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    (run_dir / "summary.md").write_text(render_markdown(summary, tables), encoding="utf-8")
    return summary


def write_html_report(run_dir: Path, tables: Sequence[Table], summary: dict[str, Any]) -> None:
    """The self-contained HTML report with plots and the transcript viewer."""
    from .html import write_html

    write_html(run_dir, {t.title: t.data for t in tables}, summary)


def write_results(run_dir: Path, records: Sequence[ResultRecord]) -> None:
    """Write ``results.jsonl``: one record per item."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")
