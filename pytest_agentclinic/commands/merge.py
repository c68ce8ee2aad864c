"""``agentclinic merge RUN... --out RUN``: join the runs of several machines into one."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._args import fraction, print_problems

if TYPE_CHECKING:
    from ..report.gate import GateResult


def add_parser(sub: Any) -> None:
    """Register the ``merge`` subcommand."""
    parser = sub.add_parser(
        "merge", help="join shard runs (--agent-shard K/N) into one run directory",
        description="Join the run directories of several machines (each run with "
                    "--agent-shard K/N) into one: results.jsonl, transcripts, summary and "
                    "report, as if one machine had run everything. Overlapping or duplicate "
                    "shards, missing shards and runs with different settings are errors. "
                    "With a gate option the exit status is the gate's verdict on the merged "
                    "run.")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run directories to merge")
    parser.add_argument("--out", required=True, type=Path, metavar="RUN",
                        help="the merged run directory (new, or empty)")
    parser.add_argument("--partial", action="store_true",
                        help="merge even when shards are missing (the summary lists the runs)")
    parser.add_argument("--no-html", action="store_true", help="skip report.html")
    gate = parser.add_argument_group("gate on the merged run (as the pytest options)")
    gate.add_argument("--min-accuracy", type=fraction, default=None, metavar="X")
    gate.add_argument("--baseline", type=Path, default=None, metavar="RUN")
    gate.add_argument("--max-drop", type=fraction, default=None, metavar="D")
    gate.add_argument("--gate-alpha", type=fraction, default=0.05, metavar="P")
    gate.add_argument("--gate-on", action="append", default=None, metavar="SPEC",
                      help="which conditions are gated (repeatable), as --agent-gate-on: "
                           "default, all, pooled, or FIELD=VALUE")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Merge, write the merged run, print its tables (and gate); 2 on a refused merge."""
    from ..core.errors import InputError
    from ..protocols.registry import all_conditions, report_tables
    from ..report import rundir
    from ..report.conditions import check_gate_on
    from ..report.merge import MergeError, check, load_part, merge
    from ..report.summary import render_text
    from ..report.summary_md import append_step_summary

    if args.max_drop is not None and args.baseline is None:
        print("agentclinic merge: --max-drop needs --baseline RUN", file=sys.stderr)
        return 2
    try:
        # Any installed protocol's own conditions, as the pytest option takes its protocol's.
        gate_on = check_gate_on(args.gate_on or ["default"], all_conditions())
    except InputError as exc:
        print(f"agentclinic merge: --gate-on: {exc}", file=sys.stderr)
        return 2
    try:
        parts = [load_part(p) for p in args.runs]
        check(parts, partial=args.partial)
        records, summary, lost = merge(parts, args.out)
    except MergeError as exc:
        print(f"agentclinic merge: {exc}", file=sys.stderr)
        return 2
    summary["command"] = _command_line(args)
    rundir.write_results(args.out, records)
    result = _gate(args, records, gate_on)
    if result is not None:
        summary["gate"] = result.to_dict()
    tables = report_tables(records)
    if args.no_html:
        rundir.write_reports_text(args.out, summary, tables)
    else:
        rundir.write_reports(args.out, summary, records, tables)
    append_step_summary(args.out / "summary.md")
    print("\n".join(render_text(summary.get("roles") or {}, tables)))
    if lost:
        print_problems([f"{lost} transcript(s) not found beside their runs; their records "
                        "keep no transcript path"], "agentclinic merge: ")
    print(f"\nmerged {len(parts)} runs, {len(records)} items: {args.out}")
    if result is None:
        return 0
    print("\nagentclinic gate:")
    print("\n".join(result.lines))
    print(f"gate {'PASSED' if result.passed else 'FAILED'}")
    return 0 if result.passed else 1


def _command_line(args: argparse.Namespace) -> str:
    """The merge as a command line (the shards' own commands are in ``merged_from``)."""
    words = ["agentclinic", "merge", *map(str, args.runs), "--out", str(args.out)]
    words += ["--partial"] * args.partial + ["--no-html"] * args.no_html
    for flag, value in (("--min-accuracy", args.min_accuracy), ("--baseline", args.baseline),
                        ("--max-drop", args.max_drop)):
        if value is not None:
            words += [flag, str(value)]
    if args.min_accuracy is not None or args.baseline is not None:
        words += ["--gate-alpha", str(args.gate_alpha)]
    for spec in args.gate_on or ():
        words += ["--gate-on", spec]
    return shlex.join(words)


def _gate(args: argparse.Namespace, records: list[Any],
          on: tuple[str, ...]) -> GateResult | None:
    """The gate's verdict on the merged records, as pytest's gate reaches it (None: no gate)."""
    from ..report import gate, rundir

    settings = gate.GateSettings(min_accuracy=args.min_accuracy, baseline=args.baseline,
                                 max_drop=args.max_drop or 0.0, alpha=args.gate_alpha, on=on)
    if not settings.active:
        return None
    return rundir.judge_gate(settings, records)
