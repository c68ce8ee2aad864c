"""``agentclinic compare RUN_A RUN_B``: paired accuracy difference of two runs, per group."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._args import positive

if TYPE_CHECKING:
    from ..core.records import ResultRecord
    from ..report.comparison import ComparisonRow, Pairing
    from ..report.measure_compare import MeasureDiff

#: Listed here, not imported, so ``--help`` does not pay numpy's import; a test keeps this in
#: step with statistics.GROUP_FIELDS.
FIELDS_HELP = "doctor, patient, bias, specialty, dataset, turn_budget, experiment, answer_format"
#: comparison.PAIRED_BY_DEFAULT, listed for the same reason (a test keeps them in step).
PAIR_DEFAULT = "bias,turn_budget,experiment,answer_format"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare``."""
    parser = subparsers.add_parser(
        "compare", help="paired comparison of two runs (B - A)",
        description="Pair the items of two runs (same case, sample, bias, turn budget, "
                    "experiment, answer format and dataset; pairs with an error on either "
                    "side are dropped) and report per group both accuracies, the difference "
                    "B - A with a case-clustered paired bootstrap 95% CI and two-sided p, "
                    "the exact McNemar p, Holm-adjusted p across the groups, and the cases "
                    "that flipped.")
    parser.add_argument("run_a", metavar="RUN_A", help="run directory, results.jsonl or "
                        "summary.json (the baseline)")
    parser.add_argument("run_b", metavar="RUN_B", help="the run compared with RUN_A")
    parser.add_argument("--by", action="append", default=[], metavar="FIELD[,FIELD]",
                        help=f"one table per --by; FIELD,FIELD groups by both. Fields: "
                             f"{FIELDS_HELP}, or a protocol's own condition (MediQ's "
                             f"setting). Without --by: the overall row only")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT",
                        help="also write every table, with all flipped cases, as JSON")
    parser.add_argument("--html", type=Path, default=None, metavar="OUT",
                        help="also write a comparison page (differences with CIs, the "
                             "flipped items linking to both runs' transcripts)")
    parser.add_argument("--doctor-a", default=None, metavar="MODEL",
                        help="keep only this doctor's items of RUN_A (for multi-doctor runs)")
    parser.add_argument("--doctor-b", default=None, metavar="MODEL",
                        help="keep only this doctor's items of RUN_B")
    parser.add_argument("--pair-on", default=None, metavar="FIELD[,FIELD]",
                        help=f"the conditions items pair on besides dataset, case and "
                             f"sample (default: {PAIR_DEFAULT} and a protocol's own "
                             f"conditions; also: patient). Leave a condition "
                             f"out to pair across it, e.g. runs with different turn budgets: "
                             f"--pair-on bias,experiment,answer_format")
    parser.add_argument("--flips", type=positive, default=8, metavar="N",
                        help="flipped cases listed per group and direction (default 8)")
    parser.add_argument("--resamples", type=positive, default=10_000, metavar="N",
                        help="bootstrap resamples (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--measures", action="store_true",
                        help="also compare the information-gathering and test-cost measures "
                             "(paired bootstrap per measure, grouped by the last --by, Holm "
                             "across a group's measures)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compare; exit 0, or 2 on unreadable runs, bad fields or nothing to pair."""
    from ..core.errors import AgentClinicError, InputError
    from ..report import comparison as st
    from ..report.statistics import check_fields, condition_names

    try:
        a = _load(args.run_a, args.doctor_a)
        b = _load(args.run_b, args.doctor_b)
        on = _pair_on(args.pair_on, [*a, *b])
        # A protocol's own conditions (MediQ's setting) group like the built-in fields.
        groupings = [check_fields([f.strip() for f in spec.split(",") if f.strip()],
                                  condition_names([*a, *b]))
                     for spec in args.by] or [()]
        pairing = _pair(a, b, on)
        if not pairing.pairs:
            raise InputError(_nothing_paired(pairing, on))
        tables = [st.compare_pairs(pairing.pairs, by, args.resamples, args.seed)
                  for by in groupings]
    except (AgentClinicError, OSError) as exc:
        # Bad input only (the project's errors, a file that cannot be read): a ValueError of
        # ours is a bug, and shows its traceback.
        from ..core.text import terminal_safe

        # A tampered record's case id can reach the message (the unpaired cases).
        print(terminal_safe(f"agentclinic compare: error: {exc}"), file=sys.stderr)
        return 2
    print(_header(args, a, b, pairing))
    for by, rows in zip(groupings, tables, strict=True):
        print()
        print(format_table(by, rows))
        if by:  # the all row's flips are the same in every table: printed once, below
            print()
            print(format_flips(rows[:-1], args.flips))
    print()
    print(format_flips(tables[0][-1:], args.flips))
    measures = _measures(args, pairing, groupings[-1])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        data = _as_json(args, pairing, groupings, tables)
        if measures is not None:
            data["measures"] = [m.to_dict() for m in measures]
        args.json.write_text(json.dumps(data, indent=1), encoding="utf-8")
        print(f"\nJSON: {args.json}")
    if args.html:
        _write_html(args, pairing, groupings, tables)
        print(f"\nHTML: {args.html}")
    return 0


def _write_html(args: argparse.Namespace, pairing: Pairing,
                groupings: Sequence[Sequence[str]],
                tables: Sequence[Sequence[ComparisonRow]]) -> None:
    from ..report.compare_html import render_compare_html
    from ..report.rundir import results_path

    runs = (results_path(args.run_a).parent, results_path(args.run_b).parent)
    args.html.parent.mkdir(parents=True, exist_ok=True)
    page = render_compare_html((str(args.run_a), str(args.run_b)), runs, pairing,
                               list(zip(groupings, tables, strict=True)), args.html)
    args.html.write_text(page, encoding="utf-8")


def _pair_on(spec: str | None, records: Sequence[ResultRecord]) -> tuple[str, ...]:
    """The fields to pair on: ``--pair-on``'s (checked) or the default."""
    from ..report import comparison as st

    if spec is None:
        return st.pair_fields(records)
    return st.check_pair_fields([f.strip() for f in spec.split(",") if f.strip()], records)


def _pair(a: Sequence[ResultRecord], b: Sequence[ResultRecord],
          on: Sequence[str]) -> Pairing:
    """The runs' pairs; a run holding one item twice is bad input (an InputError)."""
    from ..report import comparison as st

    return st.pair_records(a, b, on)


def _nothing_paired(pairing: Pairing, on: Sequence[str]) -> str:
    why = "\n  ".join(pairing.why_unpaired)
    if pairing.errors and not why:
        why = f"every one of the {pairing.errors} common items is an error on one side"
    return (f"no judged items pair between the two runs (pairing on dataset, case, sample"
            f"{', ' if on else ''}{', '.join(on)}):\n  {why}")


def _measures(args: argparse.Namespace, pairing: Pairing,
              by: Sequence[str]) -> list[MeasureDiff] | None:
    """With ``--measures``: print and return the measures' paired differences, grouped by
    the last ``--by``."""
    if not args.measures:
        return None
    from ..report.measure_compare import compare_measures, format_measures

    rows = compare_measures(pairing.pairs, by, args.resamples, args.seed)
    print()
    print("beyond accuracy (paired, B - A):" if rows else
          "beyond accuracy: no paired items carry measures")
    if rows:
        from ..core.text import terminal_safe

        print(terminal_safe(format_measures(rows)))
    return rows


def _load(path: str, doctor: str | None) -> list[ResultRecord]:
    from ..report.rundir import load_records

    records = load_records(path)
    if doctor is not None:
        records = [r for r in records if r.doctor == doctor]
        if not records:
            from ..core.errors import InputError

            raise InputError(f"no items of doctor {doctor!r} in {path}")
    return records


def _doctors(records: Sequence[ResultRecord]) -> str:
    return ", ".join(sorted({r.doctor for r in records})) or "-"


def _header(args: argparse.Namespace, a: Sequence[ResultRecord], b: Sequence[ResultRecord],
            pairing: Pairing) -> str:
    from ..report.tables import pooled_over

    pooled = pooled_over([ra for ra, _ in pairing.pairs])
    return "\n".join(_safe(line) for line in [
        f"A: {args.run_a} ({len(a)} items; doctor {_doctors(a)})",
        f"B: {args.run_b} ({len(b)} items; doctor {_doctors(b)})",
        f"paired {len(pairing.pairs)} judged items; {pairing.only_a} only in A, "
        f"{pairing.only_b} only in B, {pairing.errors} pairs dropped for an error",
        *(f"  not paired: {line}" for line in pairing.why_unpaired),
        *([f"the all row is {pooled}"] if pooled else []),
        f"difference = B - A; 95% CI and p boot: paired bootstrap resampling cases "
        f"({args.resamples} resamples, seed {args.seed}); p McNemar: exact; "
        f"Holm: across the groups of a table; a bootstrap p is at least "
        f"1/(resamples + 1); p cases: two-sided sign-flip test over cases (the gate's test: "
        f"repeats of a case count once; McNemar counts every item)",
    ])


def _safe(text: object) -> str:
    """A value printed inside one line: control characters (ESC, BEL, CR, a newline) of a
    tampered record shown as escapes, as everywhere the CLI prints case text."""
    from ..core.text import terminal_safe

    return terminal_safe(str(text), newlines=False)


def p_text(p: float) -> str:
    """A p-value as the paper prints it: 4 decimals, ``<0.0001`` below."""
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def p_exact_text(p: float) -> str:
    """An exact p-value: 4 decimals, or 2 significant digits when tiny."""
    if p == 0.0:  # below the smallest double: the binomial tail underflowed
        return "<1e-300"
    return f"{p:.2g}" if p < 1e-4 else f"{p:.4f}"


def format_table(by: Sequence[str], rows: Sequence[ComparisonRow]) -> str:
    """The comparison table of one grouping (the ``all`` row last)."""
    from tabulate import tabulate

    headers = [*(by or ["group"]), "pairs", "cases", "acc A", "acc B", "B - A", "95% CI",
               "p boot", "p McNemar", "Holm boot", "Holm McNemar", "p cases"]
    body = []
    for r in rows:
        key = [_safe(k) for k in r.key] if r.key else ["all", *[""] * (max(len(by), 1) - 1)]
        body.append([*key, r.n_pairs, r.cases, f"{r.accuracy_a:.3f}", f"{r.accuracy_b:.3f}",
                     f"{r.difference:+.3f}", f"({r.ci_low:+.3f}, {r.ci_high:+.3f})",
                     p_text(r.p_bootstrap), p_exact_text(r.p_mcnemar),
                     p_text(r.p_holm_bootstrap), p_exact_text(r.p_holm_mcnemar),
                     p_text(r.p_cases)])
    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)


def format_flips(rows: Sequence[ComparisonRow], limit: int) -> str:
    """Per group, the cases that went right -> wrong and wrong -> right (first ``limit``)."""
    lines = ["flipped (pairs in cases: case x pairs):"]
    for r in rows:
        lines.append(f"  {_safe(r.label)}:")
        lines.append(f"    right->wrong {_flip_text(r.to_wrong, r.cases_to_wrong, limit)}")
        lines.append(f"    wrong->right {_flip_text(r.to_right, r.cases_to_right, limit)}")
    return "\n".join(lines)


def _flip_text(pairs: int, cases: Sequence[tuple[str, int]], limit: int) -> str:
    shown = ", ".join(f"{_safe(case)} x{n}" if n > 1 else _safe(case)
                      for case, n in cases[:limit])
    more = f", ... (+{len(cases) - limit} cases)" if len(cases) > limit else ""
    return f"{pairs} pairs in {len(cases)} cases" + (f": {shown}{more}" if cases else "")


def _as_json(args: argparse.Namespace, pairing: Pairing, groupings: Sequence[Sequence[str]],
             tables: Sequence[Sequence[ComparisonRow]]) -> dict[str, Any]:
    return {
        "run_a": str(args.run_a), "run_b": str(args.run_b),
        "pairing": {"pairs": len(pairing.pairs), "only_a": pairing.only_a,
                    "only_b": pairing.only_b, "errors": pairing.errors},
        "resamples": args.resamples, "seed": args.seed,
        "tables": [{"by": list(by), "rows": [r.to_dict() for r in rows]}
                   for by, rows in zip(groupings, tables, strict=True)],
    }
