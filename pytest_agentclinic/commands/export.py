"""``agentclinic export --format inspect RUN``: a run as Inspect eval logs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

FORMATS = ("inspect",)


def add_parser(sub: Any) -> None:
    """Register the ``export`` subcommand."""
    parser = sub.add_parser(
        "export", help="write a run as Inspect eval logs (one per doctor and role models)",
        description="Write a run directory's records and transcripts as Inspect eval logs "
                    "(JSON format), one file per doctor and set of the other roles' models, "
                    "named as Inspect lists logs, that Inspect View and inspect_ai's log "
                    "reader open: samples, scores, model usage and every role's messages.")
    parser.add_argument("run_path", metavar="RUN", help="a run directory, or its results.jsonl")
    parser.add_argument("--format", choices=FORMATS, default="inspect",
                        help="the log format (default: inspect)")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="where to write the logs (default: RUN/inspect)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write one Inspect log per doctor model; print their paths."""
    from ..report import rundir
    from ..report.inspect_log import inspect_log, log_file_name, log_groups
    from ._runs import NoRun, load_run, say

    try:
        run_dir, records = load_run(args.run_path, "export")
    except NoRun as exc:
        return say(exc)
    summary = rundir.read_summary(run_dir) if (run_dir / "summary.json").is_file() else {}
    transcripts = {r.nodeid: rundir.read_transcript(run_dir, r)[0] for r in records}
    out = Path(args.output) if args.output else run_dir / "inspect"
    out.mkdir(parents=True, exist_ok=True)
    run_name = records[0].run
    # One log per doctor and set of the other roles' models, named as Inspect lists logs
    # (an export again rewrites its own logs; two logs never share a file).
    taken: set[str] = set()
    for mine in log_groups(records):
        log = inspect_log(run_name, mine, transcripts, summary)
        path = out / log_file_name(run_name, mine, taken)
        path.write_text(json.dumps(log, indent=1), encoding="utf-8")
        roles = ", ".join(f"{k}={v}" for k, v in sorted(mine[0].models.items()))
        print(f"{path}: {len(log['samples'])} samples ({roles})")
    return 0
