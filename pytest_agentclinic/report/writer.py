"""Writes a run directory: transcripts, ``results.jsonl`` and ``summary.json``."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import __version__
from ..encounter.transcript import Transcript
from ..llm.served import redact_url
from ..settings import Settings
from .records import ResultRecord
from .summary import render_table
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


def run_summary(settings: Settings, records: Sequence[ResultRecord],
                bad_records: int) -> dict[str, Any]:
    """The run's settings and counts, as ``summary.json`` holds them (tables are added)."""
    files = sorted({r.case_file for r in records if r.case_file})
    hits = sum(u.cache_hits for r in records for u in r.usage.values())
    calls = sum(u.calls for r in records for u in r.usage.values())
    return {
        "version": SUMMARY_VERSION,
        "plugin_version": __version__,
        "run": records[0].run if records else None,
        "protocol": settings.protocol,
        "roles": settings.roles,
        "turn_budgets": list(settings.turns),
        "biases": list(settings.biases),
        "image_modes": list(settings.image_modes),
        "experiments": list(settings.experiments) if settings.protocol == "craftmd" else [],
        "answer_modes": list(settings.answers) if settings.protocol == "craftmd" else [],
        "repeat": settings.repeat,
        "cache_mode": settings.cache.value,
        "temperature": settings.call.temperature,
        # Where the models ran and with what: another server or max_tokens is another run.
        "api_base": redact_url(settings.call.api_base),
        "sampling": settings.call.sampling,
        "served_models": served_models(records),
        "shard": settings.operations.shard_label,
        "case_files": {f: sha256_of(f) for f in files},
        "items": len(records),
        "bad_case_records": bad_records,
        "model_calls": calls,
        "cache_hits": hits,
        "cache_misses": calls - hits,
    }


def served_models(records: Sequence[ResultRecord]) -> dict[str, list[str]]:
    """model -> every served identity its records name (one, unless the server changed)."""
    seen: dict[str, dict[str, None]] = {}
    for record in records:
        for model, identity in record.served.items():
            seen.setdefault(model, {})[identity] = None
    return {model: sorted(ids) for model, ids in sorted(seen.items())}


def write_reports(run_dir: Path, summary: dict[str, Any], records: Sequence[ResultRecord],
                  tables: Sequence[Table]) -> None:
    """(Re)write summary.json, summary.md and report.html from the tables."""
    write_html_report(run_dir, tables, write_reports_text(run_dir, summary, tables))


def write_reports_text(run_dir: Path, summary: dict[str, Any],
                       tables: Sequence[Table]) -> dict[str, Any]:
    """(Re)write summary.json and summary.md; return the summary as written."""
    summary = {**summary, "by_doctor": {row["group"]: row for row in tables[0].data},
               "tables": [asdict(t) for t in tables]}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    lines = [f"# agentclinic run {summary.get('run')}", "",
             *(f"- {k}: {v}" for k, v in summary.items()
               if k not in ("tables", "by_doctor", "case_files")),
             "- case files: " + ", ".join(f"{k} (sha256 {v[:12]})"
                                          for k, v in summary.get("case_files", {}).items())]
    for table in tables:
        lines += ["", f"## {table.title}", "", render_table(table)]
        if table.note:
            lines += ["", table.note]
    (run_dir / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
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
