"""``agentclinic import-craftmd FILE``: a recorded CRAFT-MD file as a run directory."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ._args import print_problems

if TYPE_CHECKING:
    from ..core.records import ResultRecord


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``import-craftmd``."""
    parser = subparsers.add_parser(
        "import-craftmd", help="turn recorded CRAFT-MD answers into a run directory",
        description="Write results.jsonl (one record per case x trial x experiment of the "
                    "FRQ lines, graded by the recorded GPT-4 verdicts) and summary.json for a "
                    "recorded CRAFT-MD file (e.g. recorded_gpt4_1106.jsonl.gz).")
    parser.add_argument("file", type=Path, help="recorded CRAFT-MD JSONL, gzipped or not")
    parser.add_argument("--out", type=Path, default=None,
                        help="run directory (default: reports/craftmd-<model>)")
    parser.add_argument("--dataset-csv", type=Path, default=None,
                        help="CRAFT-MD dataset CSV for specialty and dataset "
                             "(default: usmle_and_derm_dataset.csv beside FILE)")
    parser.add_argument("--include-mcq", action="store_true",
                        help="also import the MCQ lines, graded by a provisional option match")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import; exit 0, 1 when lines were skipped (the rest is written), 2 on failure."""
    from ..core.errors import AgentClinicError
    from ..importers.craftmd import import_craftmd

    try:
        result = import_craftmd(args.file, out=args.out, dataset_csv=args.dataset_csv,
                                include_mcq=args.include_mcq)
    except (AgentClinicError, OSError) as exc:  # bad input; a ValueError of ours is a bug
        print(f"agentclinic import-craftmd: error: {exc}", file=sys.stderr)
        return 2
    if not result.records:
        print(f"agentclinic import-craftmd: error: {args.file}: no records to import",
              file=sys.stderr)
        print_problems(result.skipped, prefix="skipped: ", more="more skipped lines")
        return 2
    _print_accuracy(result.records)
    frq = sum(r.answer_format == "frq" for r in result.records)
    print(f"wrote {len(result.records)} records ({frq} FRQ, {len(result.records) - frq} MCQ; "
          f"{result.mcq_lines} MCQ lines in the file) to {result.run_dir / 'results.jsonl'}")
    if result.unknown_cases:
        print(f"{result.unknown_cases} records name cases missing from the dataset CSV "
              f"(specialty 'unspecified')")
    print_problems(result.skipped, prefix="skipped: ", more="more skipped lines")
    return 1 if result.skipped else 0


def _print_accuracy(records: Sequence[ResultRecord]) -> None:
    from tabulate import tabulate

    from ..report.statistics import accuracy_table

    rows = [[*row.key, row.n, f"{row.accuracy:.3f}" if row.accuracy is not None else "-",
             f"({row.ci_low:.3f}, {row.ci_high:.3f})" if row.ci_low is not None else "-"]
            for row in accuracy_table(records, ["answer_format", "experiment"])]
    print(tabulate(rows, headers=["format", "experiment", "n", "accuracy",
                                  "95% CI (case bootstrap)"], tablefmt="github"))
