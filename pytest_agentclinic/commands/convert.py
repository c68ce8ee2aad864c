"""``agentclinic convert INPUT... --out DIR``: upstream case files to the project's YAML."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``convert`` subcommand."""
    parser = subparsers.add_parser(
        "convert", help="convert AgentClinic JSONL / CRAFT-MD CSV into project YAML cases",
        description="Convert AgentClinic JSONL (MedQA/OSCE and NEJM style), the CRAFT-MD "
                    "vignette CSV or project JSON/YAML case files into the project's YAML "
                    "format: one file per input, or one per specialty.")
    parser.add_argument("inputs", nargs="+", type=Path, metavar="INPUT", help="files to convert")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="folder for the YAML files (created if missing)")
    parser.add_argument("--per-specialty", action="store_true",
                        help="one file per specialty (<specialty>.yaml) instead of per input")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Convert, write, check each written file's round trip; 1 on any bad record."""
    from ..cases import convert

    missing = [p for p in args.inputs if not p.is_file()]
    if missing:
        print(f"agentclinic convert: no such file: {', '.join(map(str, missing))}",
              file=sys.stderr)
        return 2
    converted = [convert.read_input(p) for p in args.inputs]
    for item in converted:
        for note in item.notes:
            print(f"note: {note}", file=sys.stderr)
        for error in item.errors:
            print(f"error: {error}", file=sys.stderr)
    plan = convert.plan_outputs(converted, args.out, args.per_specialty)
    status = _refuse_clobbering(plan, args.inputs, args.force)
    if status:
        return status
    args.out.mkdir(parents=True, exist_ok=True)
    failures = []
    for path, cases in plan.items():
        path.write_text(convert.dump_cases(cases), encoding="utf-8")
        failures += convert.round_trip_problems(path, cases)
        print(f"wrote {len(cases)} case{'s' * (len(cases) != 1)} to {path}")
    for dup in convert.duplicate_ids(c for cases in plan.values() for c in cases):
        print(f"warning: case id {dup!r} occurs more than once", file=sys.stderr)
    for failure in failures:
        print(f"error: round trip: {failure}", file=sys.stderr)
    return 1 if failures or any(item.errors for item in converted) else 0


def _refuse_clobbering(outputs: Iterable[Path], inputs: list[Path], force: bool) -> int:
    # Never overwrite an input, nor (without --force) a file the user already has.
    sources = {p.resolve() for p in inputs}
    for path in outputs:
        if path.resolve() in sources:
            print(f"agentclinic convert: {path} is an input; choose another --out",
                  file=sys.stderr)
            return 2
        if path.exists() and not force:
            print(f"agentclinic convert: {path} exists (use --force to overwrite)",
                  file=sys.stderr)
            return 2
    return 0
