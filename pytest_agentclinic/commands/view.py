"""``agentclinic view RUN [RUN ...]``: one self-contained page across runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the ``view`` subcommand."""
    parser = sub.add_parser(
        "view", help="one HTML page across runs: accuracy over runs, cases that flipped",
        description="Write one self-contained HTML page over the given runs (in order): "
                    "accuracy per doctor model over the runs with 95% intervals, the cases "
                    "that flipped between two runs with both transcripts side by side, and "
                    "filters by specialty, bias and outcome. Works offline, from the records "
                    "and transcripts alone.")
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="run directories (or their results.jsonl), oldest first")
    parser.add_argument("-o", "--output", metavar="FILE", default="agentclinic-view.html",
                        help="the page to write (default: agentclinic-view.html)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Read every run, write the page, print its path."""
    from ..report import rundir
    from ..report.viewer import ViewRun, flipping_keys, item_keyer, render_view
    from ._runs import NoRun, load_run, say

    runs: list[ViewRun] = []
    dirs: list[Path] = []
    for given in args.runs:
        try:
            run_dir, records = load_run(given, "view")
        except NoRun as exc:
            return say(exc)
        summary = (rundir.read_summary(run_dir) if (run_dir / "summary.json").is_file() else {})
        name = str(summary.get("run") or records[0].run)
        if any(r.name == name for r in runs):
            name = f"{name} ({given})"
        runs.append(ViewRun(name, str(summary.get("date", "")), records, {},
                            _protocol_tables(records)))
        dirs.append(run_dir)
    # Only the items that flipped between two runs show transcripts: read those alone.
    flipping = flipping_keys(runs)
    key = item_keyer(runs)
    for view, run_dir in zip(runs, dirs, strict=True):
        view.transcripts.update({
            r.nodeid: rundir.read_transcript(run_dir, r)[0] for r in view.records
            if (view.name, key(r)) in flipping})
    out = Path(args.output)
    out.write_text(render_view(runs), encoding="utf-8")
    print(f"{out}: {len(runs)} runs, {sum(len(r.records) for r in runs)} items, "
          f"{len(flipping)} flipped item(s) with transcripts")
    return 0


def _protocol_tables(records: list[Any]) -> list[Any]:
    """The tables each protocol of ``records`` adds for its own records (installed ones)."""
    from ..protocols.registry import protocol_tables

    return protocol_tables(records, 2000)
