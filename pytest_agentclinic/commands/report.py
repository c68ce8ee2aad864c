"""``agentclinic report RUN_DIR``: re-render a run's tables, summary and HTML from its results."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._args import positive


def add_parser(sub: Any) -> None:
    """Register the ``report`` subcommand."""
    parser = sub.add_parser(
        "report", help="re-render summary.json, summary.md and report.html from results.jsonl",
        description="Rebuild every table (accuracy with bootstrap CIs by model, specialty, "
                    "bias, ...), summary.md, summary.json and report.html of a run directory "
                    "from its results.jsonl alone, and print the tables.")
    parser.add_argument("run_path", metavar="RUN", help="a run directory, or its results.jsonl")
    parser.add_argument("--resamples", type=positive, default=10_000,
                        help="bootstrap resamples per group (default 10000)")
    parser.add_argument("--no-html", action="store_true", help="skip report.html")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Rebuild and print the run's report."""
    from ..core.errors import ExtensionError, InputError
    from ..protocols.registry import names, report_tables
    from ..report import rundir
    from ..report.review import review_tables
    from ..report.summary import render_text
    from ..runs import directory
    from ..runs.errors import NoResults
    from ..runs.summary import run_summary

    try:
        results = directory.results_path(args.run_path)
    except NoResults as exc:
        print(f"agentclinic report: {exc}", file=sys.stderr)
        return 2
    try:
        records = directory.load_records(results)
    except InputError as exc:
        print(f"agentclinic report: {exc}", file=sys.stderr)
        return 2
    if not records:
        partial = directory.completeness(results.parent, 0)
        why = f" ({partial}: the run stopped before its first item finished)" if partial else ""
        print(f"agentclinic report: {results} holds no results{why}", file=sys.stderr)
        return 2
    run_dir = results.parent
    try:
        summary = directory.read_summary(run_dir)
    except InputError as exc:
        # The summary is rebuilt from the records anyway; only its settings are lost.
        where = run_dir / "summary.json"
        why = str(exc).removeprefix(f"{where}").lstrip(":0123456789 ") or type(exc).__name__
        print(f"agentclinic report: {where}: unreadable, rebuilt from the records ({why})",
              file=sys.stderr)
        summary = {}
    # The one builder: the old summary's settings kept, every count computed anew from
    # the records (a summary rebuilt from the records alone keeps its version, the
    # plugin's, the model calls and the served models).
    roles = summary.get("roles") or {k: ", ".join(sorted({r.models.get(k, "?") for r in records}))
                                     for k in records[0].models}
    summary = run_summary({**summary, "roles": roles}, records,
                          int(summary.get("bad_case_records") or 0))
    partial = directory.completeness(run_dir, len(records))
    if partial:
        # A killed or interrupted run: its finished items are reported, and it says so.
        summary["partial"] = partial
    try:
        # Installed protocols (entry points) are loaded here: a fresh process rebuilds a
        # third-party protocol's tables from its records alone.
        tables = report_tables(records, args.resamples)
        unknown = [p for p in dict.fromkeys(r.protocol for r in records) if p not in names()]
    except ExtensionError as exc:
        print(f"agentclinic report: {exc}", file=sys.stderr)
        return 2
    for name in unknown:
        print(f"agentclinic report: protocol {name!r} is not installed: its records are in "
              f"the common tables, its own tables are left out", file=sys.stderr)
    tables += review_tables(run_dir)  # an imported expert review (agentclinic review)
    if args.no_html:
        rundir.write_reports_text(run_dir, summary, tables)
    else:
        rundir.write_reports(run_dir, summary, records, tables)
    if partial:
        print(f"{partial} (the run did not finish)")
    print("\n".join(render_text(summary["roles"], tables)))
    print(f"\nwritten: {run_dir}/summary.json, summary.md"
          f"{'' if args.no_html else ', report.html'}")
    return 0
