"""``agentclinic review``: blinded expert review of a run's transcripts, and its ratings.

``agentclinic review RUN --sample N --seed S --out DIR`` writes ``DIR/sheet.csv`` (one row per
sampled transcript, to fill in), ``DIR/sheet.html`` (the printable transcripts with the
criteria and their anchors; doctor models appear as codes) and ``DIR/key.json`` (the codes'
meaning: keep it from the raters). ``agentclinic review --import DIR/sheet.csv RUN`` reads the
filled sheet(s) back: each criterion's mean with a 95% CI per model, and the weighted kappa
when two raters rated the same items; it writes ``RUN/review.json`` and adds the review to
the run's summary and report.html.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path
from typing import Any

from ._args import count


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``review``."""
    p = subparsers.add_parser("review", help="blinded expert review sheet, and its ratings",
                              description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_path", metavar="RUN", help="the run directory (or its results.jsonl)")
    p.add_argument("--sample", type=count(1), default=None, metavar="N",
                   help="transcripts to sample, spread evenly over the doctor models")
    p.add_argument("--seed", type=int, default=0, help="sampling and coding seed (default 0)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="where the sheet is written")
    p.add_argument("--import", dest="imports", action="append", type=Path, default=[],
                   metavar="SHEET", help="a filled-in sheet.csv (repeat for each rater's copy)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write a sheet or import ratings; exit 2 on bad input or arguments."""
    from ..core.errors import AgentClinicError, InputError

    try:
        if args.imports:
            return _import(args)
        if args.sample is None or args.out is None:
            raise InputError("give --sample N and --out DIR to write a sheet, or --import "
                             "SHEET to read ratings back")
        return _write(args)
    except (AgentClinicError, OSError) as exc:  # bad input; a ValueError of ours is a bug
        print(f"agentclinic review: error: {exc}", file=sys.stderr)
        return 2


def _write(args: argparse.Namespace) -> int:
    from ..core.errors import InputError
    from ..report.review import Sampled, sample, write_sheet
    from ..report.rundir import load_records, read_transcript, results_path

    results = results_path(args.run_path)
    run_dir = results.parent
    candidates = []
    for r in load_records(results):
        if r.outcome == "error" or r.experiment not in (None, "multiturn"):
            continue  # no conversation to rate
        transcript, _ = read_transcript(run_dir, r)
        if transcript is not None:
            candidates.append(Sampled(r, transcript))
    if not candidates:
        raise InputError("no judged encounter with a readable transcript", path=results)
    picked = sample(candidates, args.sample, args.seed)
    cases = _case_texts(picked)
    key = write_sheet(args.out, picked, cases, picked[0].record.run, args.seed)
    print(f"{len(picked)} transcripts of {len(key['models'])} doctor models "
          f"({len(candidates)} eligible), seed {args.seed}")
    print(f"written: {args.out / 'sheet.csv'} (to fill in), {args.out / 'sheet.html'} "
          f"(to print), {args.out / 'key.json'} (keep from the raters)")
    return 0


def _case_texts(picked: list[Any]) -> dict[str, str]:
    """Each sampled case's text for the raters: its vignette, else its patient facts."""
    from ..cases.loaders import load_case_file
    from ..metrics.facts import case_facts

    texts: dict[str, str] = {}
    for p in picked:
        path = p.record.case_file
        if p.record.case_id in texts or not path or not Path(path).is_file():
            continue
        for _, case in load_case_file(Path(path)).cases:
            texts.setdefault(case.id, case.vignette or " ".join(
                f.text for f in case_facts(case)))
    return texts


def _import(args: argparse.Namespace) -> int:
    from ..core.errors import InputError
    from ..report.review import KEY, read_key, read_ratings, review_tables, summarize
    from ..report.rundir import results_path, write_review
    from ..report.summary import render_table

    run_dir = results_path(args.run_path).parent
    key = read_key(args.imports[0].parent / KEY)
    ratings = [r for sheet in args.imports for r in read_ratings(sheet, key)]
    if not ratings:
        raise InputError("no ratings filled in", path=", ".join(map(str, args.imports)))
    review = summarize(ratings, key)
    written = write_review(run_dir, review)
    for table in review_tables(run_dir):
        print(f"{table.title}:\n{render_table(table)}\n{table.note}\n")
    _rebuild_reports(run_dir)
    print(f"written: {written}; summary.md, summary.json and report.html updated")
    return 0


def _rebuild_reports(run_dir: Path) -> None:
    from . import report

    with contextlib.redirect_stdout(io.StringIO()):
        report.run(argparse.Namespace(run_path=str(run_dir), resamples=2000, no_html=False))
