"""``agentclinic meld --model MODEL CASES...``: is a model reciting the vignettes it is tested on?

The MELD contamination check of CRAFT-MD (rules in :mod:`pytest_agentclinic.importers.meld`):
the model is given the first half of each vignette and asked to continue it verbatim; its
continuation is scored against the real second half by length-normalised Levenshtein
similarity, and a case with similarity >= 0.95 counts as likely memorised.

Exit status: 0 every case was measured; 1 some were not (a model error after retries, a
vignette too short, a bad case record), the others are reported; 2 bad arguments or an
unreadable input file; 3 stopped on an error no retry can fix (bad key, unknown model,
unreachable --api-base).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..llm.modes import CACHE_MODES as CACHE_MODES
from ._args import SHOW_PROBLEMS, add_call_arguments, call_settings_of, count, model, print_problems

if TYPE_CHECKING:  # heavy imports wait for ``run`` so ``agentclinic --help`` stays instant
    from ..importers.meld import MeldResult, MeldRun
    from ..llm.caller import ModelCaller

OK, NOT_ALL_MEASURED, USAGE_ERROR, FATAL = 0, 1, 2, 3
#: Characters of a completion shown in the table.
_PREVIEW = 60


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``meld``."""
    p = subparsers.add_parser(
        "meld", help="contamination check: can the model recite the second half of a vignette?",
        description="MELD (CRAFT-MD): give the model the first half of each case vignette "
                    "(first n//2 whitespace-separated words), ask it to continue verbatim, and "
                    "score the continuation against the real second half by 1 - Levenshtein "
                    "distance / max length. Reports each case and the share of measured cases "
                    "with similarity >= 0.95. Cases: the CRAFT-MD CSV (case_vignette column) "
                    "or any case file (vignette; without one, objective + patient history).")
    p.add_argument("cases", nargs="+", type=Path, metavar="CASES",
                   help="CRAFT-MD CSV or case files (YAML/JSON/JSONL)")
    p.add_argument("--model", required=True, type=model, metavar="MODEL",
                   help="litellm model string")
    p.add_argument("--cache-dir", type=Path, default=Path(".agentclinic_cache"), metavar="DIR",
                   help="response cache directory (default: .agentclinic_cache)")
    p.add_argument("--cache", choices=CACHE_MODES, default="read-write", metavar="MODE",
                   help="response cache mode: " + ", ".join(CACHE_MODES)
                        + " (default: read-write)")
    # Greedy decoding: the question is what the model finds most likely, not what it may say.
    add_call_arguments(p, api_base=None, timeout=60.0, retries=3, backoff=1.0,
                       temperature=0.0, max_tokens=1024)
    p.add_argument("--concurrency", type=count(1), default=16, metavar="N",
                   help="calls in flight (default: 16)")
    p.add_argument("--limit", type=count(1), default=None, metavar="N",
                   help="test only the first N cases, in input order")
    p.add_argument("--top", type=count(0), default=10, metavar="N",
                   help="most similar cases listed in the table (default: 10)")
    p.add_argument("--out", type=Path, default=None, metavar="FILE.jsonl",
                   help="write one JSON record per case")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the check, print the tables, write --out; return the exit status."""
    import asyncio

    from ..importers.meld import MeldInputError, read_inputs, run_meld, write_jsonl

    try:
        cases, problems = read_inputs(args.cases)
    except MeldInputError as exc:
        print(f"agentclinic meld: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print_problems(problems)
    cases = cases[:args.limit] if args.limit else cases
    if not cases:
        print("agentclinic meld: error: no cases to test", file=sys.stderr)
        return USAGE_ERROR
    caller = _caller(args)
    try:
        result = asyncio.run(run_meld(cases, caller, args.model, args.concurrency))
    finally:
        caller.cache.close()
    print(format_report(args, result))
    if args.out:
        write_jsonl(result.results, args.out, args.model)
        print(f"\nwrote {len(result.results)} records to {args.out}")
    if result.fatal:
        print(f"agentclinic meld: stopped: {result.fatal}", file=sys.stderr)
        return FATAL
    measured_all = result.summary.measured == result.summary.cases
    return OK if measured_all and not problems else NOT_ALL_MEASURED


def _caller(args: argparse.Namespace) -> ModelCaller:
    from ..llm.cache import CacheMode, ResponseCache
    from ..llm.caller import ModelCaller

    return ModelCaller(call_settings_of(args),
                       ResponseCache(args.cache_dir, CacheMode(args.cache)))


# ---------------------------------------------------------------- the printed report


def format_report(args: argparse.Namespace, meld_run: MeldRun) -> str:
    """Header, summary table, top cases, and the first errors."""
    from ..importers.meld import PROMPT_VERSION, THRESHOLD, top_cases

    results = meld_run.results
    files = len({r.case.file for r in results})
    cached = sum(r.cached for r in results)
    lines = [f"MELD contamination check: {args.model}, {len(results)} cases from {files} "
             f"file(s); prompt {PROMPT_VERSION}; memorised = similarity >= {THRESHOLD}",
             f"calls: {meld_run.http_attempts} HTTP requests (retries included), "
             f"{cached} cached", "", _summary_table(args.model, meld_run)]
    top = top_cases(results, args.top)
    if top:
        lines += ["", f"most similar {len(top)} cases:", _top_table(top)]
    failed = [r for r in results if r.status != "ok"]
    if failed:
        lines += ["", f"not measured ({len(failed)}):"]
        # First lines only: a replay miss lists every part of its key on the lines below.
        lines += [f"  {r.case.case_id}: {r.status}: {(r.error or '').splitlines()[0]}"
                  for r in failed[:SHOW_PROBLEMS]]
        if len(failed) > SHOW_PROBLEMS:
            lines.append(f"  ... and {len(failed) - SHOW_PROBLEMS} more")
    return "\n".join(lines)


def _fraction(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _summary_table(model: str, meld_run: MeldRun) -> str:
    from tabulate import tabulate

    s = meld_run.summary
    share = "-" if s.share is None else f"{s.share:.1%}"
    row = [model, *map(str, (s.cases, s.measured, s.errors, s.skipped, s.memorized)), share,
           _fraction(s.mean), _fraction(s.median), _fraction(s.maximum)]
    headers = ["model", "cases", "measured", "errors", "skipped", ">= 0.95",
               "share (of measured)", "mean", "median", "max"]
    return tabulate([row], headers=headers, tablefmt="github", disable_numparse=True,
                    colalign=("left", *["right"] * (len(headers) - 1)))


def _top_table(results: Sequence[MeldResult]) -> str:
    from tabulate import tabulate

    rows = [[str(rank), r.case.case_id, Path(r.case.file).name, r.case.source,
             _fraction(r.similarity), str(r.distance), str(len(r.expected.split())),
             "yes" if r.memorized else "", _preview(r.completion or "")]
            for rank, r in enumerate(results, start=1)]
    headers = ["#", "case", "file", "source", "similarity", "distance", "words",
               "memorised", "completion"]
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True,
                    colalign=("right", "left", "left", "left", "right", "right", "right",
                              "left", "left"))


def _preview(text: str) -> str:
    return text if len(text) <= _PREVIEW else text[:_PREVIEW - 3] + "..."
