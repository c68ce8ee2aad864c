"""``agentclinic export --format inspect RUN``: a run as Inspect eval logs."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

FORMATS = ("inspect",)


def add_parser(sub: Any) -> None:
    """Register the ``export`` subcommand."""
    parser = sub.add_parser(
        "export", help="write a run as Inspect eval logs (one per doctor model)",
        description="Write a run directory's records and transcripts as Inspect eval logs "
                    "(JSON format), one file per doctor model, that Inspect View and "
                    "inspect_ai's log reader open: samples, scores, model usage and every "
                    "role's messages.")
    parser.add_argument("run_path", metavar="RUN", help="a run directory, or its results.jsonl")
    parser.add_argument("--format", choices=FORMATS, default="inspect",
                        help="the log format (default: inspect)")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="where to write the logs (default: RUN/inspect)")
    parser.set_defaults(run=run)


def _file_name(run: str, doctor: str) -> str:
    # Model names carry slashes and colons (openai/gpt-4o, ollama:llama3).
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{run}-{doctor}")[:150] + ".json"


def run(args: argparse.Namespace) -> int:
    """Write one Inspect log per doctor model; print their paths."""
    from ..report import rundir
    from ..report.inspect_log import inspect_log
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
    for doctor in dict.fromkeys(r.doctor for r in records):
        log = inspect_log(run_name, doctor, records, transcripts, summary)
        path = out / _file_name(run_name, doctor)
        path.write_text(json.dumps(log, indent=1), encoding="utf-8")
        print(f"{path}: {len(log['samples'])} samples ({doctor})")
    return 0
