"""``agentclinic validate PATH...``: schema and content checks of case files."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate", help="check case files (schema and content)",
        description="Check case files: every schema error plus content checks (diagnosis "
                    "leaks, answer choices, empty sections, vignette vs structured fields, "
                    "duplicate ids). Each problem names file, line and field.")
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="case files or folders (searched recursively for case files)")
    parser.add_argument("--strict", action="store_true",
                        help="fail on warnings too (e.g. a distractor equal to a synonym)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print every problem, then a one-line summary; 1 when an error (or, --strict, a warning)."""
    from ..cases.validate import Summary, validate_paths

    summary = Summary()
    problems = validate_paths(args.paths, summary)
    for problem in problems:
        print(problem)
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    head = (f"{summary.cases} case{'s' * (summary.cases != 1)} in {summary.files} "
            f"file{'s' * (summary.files != 1)}")
    failed = errors > 0 or (args.strict and warnings > 0)
    if failed:
        print(f"{head}: {errors} error(s), {warnings} warning(s)")
        return 1
    print(f"{head}: OK" + (f" ({warnings} warning(s))" if warnings else ""))
    return 0
