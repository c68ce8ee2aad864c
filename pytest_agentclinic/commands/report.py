"""``agentclinic report RUN_DIR``: re-render a run's tables, summary and HTML from its results."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the ``report`` subcommand."""
    parser = sub.add_parser(
        "report", help="re-render summary.json, summary.md and report.html from results.jsonl",
        description="Rebuild every table (accuracy with bootstrap CIs by model, specialty, "
                    "bias, ...), summary.md, summary.json and report.html of a run directory "
                    "from its results.jsonl alone, and print the tables.")
    parser.add_argument("run_path", metavar="RUN", help="a run directory, or its results.jsonl")
    parser.add_argument("--resamples", type=int, default=10_000,
                        help="bootstrap resamples per group (default 10000)")
    parser.add_argument("--no-html", action="store_true", help="skip report.html")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Rebuild and print the run's report."""
    from ..report import writer
    from ..report.statistics import load_records, results_path
    from ..report.summary import render_text
    from ..report.tables import build_tables

    try:
        results = results_path(args.run_path)
    except FileNotFoundError as exc:
        print(f"agentclinic report: {exc}", file=sys.stderr)
        return 2
    try:
        records = load_records(results)
    except (ValueError, UnicodeDecodeError) as exc:
        print(f"agentclinic report: {exc}", file=sys.stderr)
        return 2
    if not records:
        print(f"agentclinic report: {results} holds no results", file=sys.stderr)
        return 2
    run_dir = results.parent
    summary_path = run_dir / "summary.json"
    try:
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        if not isinstance(summary, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as exc:
        # The summary is rebuilt from the records anyway; only its settings are lost.
        print(f"agentclinic report: {summary_path}: unreadable, rebuilt from the records "
              f"({type(exc).__name__})", file=sys.stderr)
        summary = {}
    summary = {k: v for k, v in summary.items() if k not in ("tables", "by_doctor")}
    summary.setdefault("run", records[0].run)
    summary.setdefault("roles", {k: ", ".join(sorted({r.models.get(k, "?") for r in records}))
                                 for k in records[0].models})
    summary["items"] = len(records)
    tables = build_tables(records, args.resamples)
    if args.no_html:
        writer.write_reports_text(run_dir, summary, tables)
    else:
        writer.write_reports(run_dir, summary, records, tables)
    print("\n".join(render_text(summary["roles"], tables)))
    print(f"\nwritten: {run_dir}/summary.json, summary.md"
          f"{'' if args.no_html else ', report.html'}")
    return 0
