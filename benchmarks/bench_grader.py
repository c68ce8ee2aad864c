"""Benchmark of the offline CRAFT-MD grader on the recorded GPT-4 and GPT-3.5 runs.

Prints, measured in one run: agreement and Cohen's kappa with the paper's GPT-4 grader on the
free-response answers (from the raw responses, never the paper's extraction), per model, per
experiment and per specialty; the commonest disagreements and their anatomy (which kinds
contradict the paper's own rules, hence the ceiling for a grader that follows them; step 2
alone on the reference's extraction); the MCQ accuracy table next to the paper's Table 1; and
the grading throughput on one core; and agreement with the dermatologists who validated the
paper's grader (``craftmd/expert_grader_validation_dev.jsonl``): 1 - sum |ours - experts| /
(5 n) over the cases, offline and with the recorded GPT-4 verdicts standing in for a
moderator on the answers the rules are unsure of, beside the recorded GPT-4 grader's own.

    python benchmarks/bench_grader.py [--datasets ../shared/datasets] [--top 25]
        [--policy strict|paper] [--experts-only] [--agreement-only]

``--agreement-only`` prints the agreement with the recorded GPT-4 verdicts pooled and in the
two folds of the cases (split as the dev half is, by the parity of half the case number).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

# The evaluation helpers live in the repository's tools/, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.rules import POLICIES
from pytest_agentclinic.grading.terms.concepts import default_terminology
from tools.craftmd_eval import (
    CASES,
    EXPERIMENTS,
    KINDS,
    PAPER_MCQ,
    RECORDED,
    REFERENCE_SLIPS,
    Agreement,
    Report,
    evaluate,
    evaluate_shared,
    load_cases,
    load_recorded,
    pooled,
)

DEFAULT_DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def _row(label: str, agreement: Agreement) -> str:
    return (f"  {label:<34} n={agreement.n:>6}  agree={agreement.rate:.4f}"
            f"  kappa={agreement.kappa:.4f}")


def print_frq(reports: dict[str, Report]) -> None:
    """Agreement with the paper's grader, overall and broken down."""
    print("Free response: agreement with the paper's GPT-4 grader (raw responses)")
    print(_row("pooled", pooled(reports.values())))
    for model, report in reports.items():
        print(_row(f"{model} overall", report.frq))
        for experiment in EXPERIMENTS:
            print(_row(f"{model} {experiment}", report.by_experiment[experiment]))
    for model, report in reports.items():
        print(f"  -- {model} by specialty")
        for specialty, agreement in sorted(report.by_specialty.items()):
            print(_row(specialty, agreement))


def print_disagreements(reports: dict[str, Report], top: int) -> None:
    """The commonest (our extraction, paper's extraction, truth, paper's verdict) patterns."""
    print(f"Commonest disagreements (top {top}): count | ours -> paper's extraction | truth")
    merged = sum((r.disagreements for r in reports.values()), start=type(
        next(iter(reports.values())).disagreements)())
    for (ours, theirs, truth, verdict), count in merged.most_common(top):
        print(f"  {count:>4} | ours {1 - verdict} {ours[:40]!r} -> paper {verdict} "
              f"{theirs[:40]!r} | {truth[:50]!r}")


def print_step1(reports: dict[str, Report]) -> None:
    """How often our extraction's category is the reference's: single, multiple or none."""
    table: Counter[tuple[str, str]] = Counter()
    for report in reports.values():
        table.update(report.step1)
    total = sum(table.values())
    same = sum(n for (ours, theirs), n in table.items() if ours == theirs)
    print(f"Step 1 alone: category (single / multiple / none) as the reference's extraction "
          f"for {same}/{total} = {same / total:.4f}")
    for ours in ("single", "multiple", "none"):
        row = "  ".join(f"{theirs} {table[(ours, theirs)]:>6}"
                        for theirs in ("single", "multiple", "none"))
        print(f"  ours {ours:<8} -> reference {row}")


def print_anatomy(reports: dict[str, Report]) -> None:
    """What the disagreements are, and the agreement left once the reference's own slips go."""
    total = pooled(reports.values())
    step2 = pooled(reports.values(), step2=True)
    print(f"Step 2 alone (our equivalence on the reference's own extraction): "
          f"agree={step2.rate:.4f}  kappa={step2.kappa:.4f}")
    anatomy: Counter[str] = Counter()
    for report in reports.values():
        anatomy.update(report.anatomy)
    disagreements = sum(anatomy.values())
    print(f"Anatomy of the {disagreements} disagreements (of {total.n} answers):")
    for kind, label in KINDS.items():
        print(f"  {anatomy[kind]:>5}  {anatomy[kind] / total.n:6.2%}  {label}")
    exact: Counter[tuple[bool, bool]] = Counter()
    for report in reports.values():
        exact.update(report.exact_none)
    for derm, label in ((True, "dermatology"), (False, "other specialties")):
        n = exact[(derm, True)] + exact[(derm, False)]
        print(f"  reference 'None' for answers our rules read as the truth's name, {label}: "
              f"{exact[(derm, True)]}/{n} = {exact[(derm, True)] / n:.1%}")
    against_rules = sum(anatomy[k] for k in REFERENCE_SLIPS)
    print(f"Ceiling for a grader that follows the paper's rules: "
          f"{1 - against_rules / total.n:.4f} (the reference contradicts them on "
          f"{against_rules} answers)")


def print_mcq(reports: dict[str, Report]) -> None:
    """MCQ accuracy per experiment: normalised matching, verbatim (paper's rule), Table 1."""
    print("MCQ accuracy: normalised option match / verbatim (paper's scoring) / paper Table 1")
    for model, report in reports.items():
        plain, strict = report.mcq_accuracy(), report.mcq_accuracy(verbatim=True)
        cells = [f"{e} {plain[e]:.3f}/{strict[e]:.3f}/{PAPER_MCQ[model][e]:.3f}"
                 for e in EXPERIMENTS]
        print(f"  {model}: " + "  ".join(cells))


EXPERTS = Path("craftmd") / "expert_grader_validation_dev.jsonl"


def fold(case: str) -> str:
    """The fold of a case of the dev half: "A" or "B" by the parity of its index in the half.

    The dev half holds the even case numbers (case_0, case_2, ...), so its own index is the
    number halved; fold A holds the even indices (case_0, case_4, ...), fold B the odd ones
    (case_2, case_6, ...). Disagreements are studied in fold A only; a rule that raises A and
    not B is a fit to cases, not a rule.
    """
    return "A" if (int(case.rsplit("_", 1)[1]) // 2) % 2 == 0 else "B"


def expert_agreement(path: Path, grader: CraftMDGrader,
                     only: str | None = None) -> dict[str, float]:
    """Agreement with the dermatologists' count of correct answers per case: ours offline,
    ours with the recorded GPT-4 verdict deciding what the rules are unsure of, and the
    recorded GPT-4 grader's; ``only`` keeps one fold ("A" or "B")."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows = [row for row in rows if only is None or fold(row["case"]) == only]
    gaps = {"offline": 0, "GPT-4 as moderator": 0, "recorded GPT-4 grader": 0}
    unsure = 0
    for row in rows:
        verdicts = [grader.grade_frq(a, row["truth"]) for a in row["answers"]]
        unsure += sum(not v.sure for v in verdicts)
        counts = {"offline": sum(v.verdict for v in verdicts),
                  "GPT-4 as moderator": sum(v.verdict if v.sure else int(g) for v, g in
                                            zip(verdicts, row["gpt4_grader"], strict=True)),
                  "recorded GPT-4 grader": sum(row["gpt4_grader"])}
        for name, count in counts.items():
            gaps[name] += abs(count - int(row["dermatologists_correct"]))
    n = len(rows)
    out = {name: 1 - gap / (5 * n) for name, gap in gaps.items()}
    out["cases"], out["unsure answers"] = n, unsure
    return out


def print_experts(datasets: Path, grader: CraftMDGrader) -> None:
    """Agreement with the dermatologists (development half of the validation cases), whole
    and in its two folds."""
    path = datasets / EXPERTS
    if not path.exists():
        print(f"Expert agreement: {path} not found")
        return
    for only, title in ((None, "dev half"), ("A", "fold A"), ("B", "fold B")):
        result = expert_agreement(path, grader, only)
        print(f"Expert agreement, {title} (dermatologists, {int(result['cases'])} cases, "
              f"{int(result['unsure answers'])} answers the rules are unsure of, "
              f"{grader.policy}): offline {result['offline']:.4f}  "
              f"GPT-4 as moderator {result['GPT-4 as moderator']:.4f}  "
              f"recorded GPT-4 grader {result['recorded GPT-4 grader']:.4f}")


def fold_agreement(datasets: Path, grader: CraftMDGrader) -> dict[str, Agreement]:
    """Agreement with the recorded GPT-4 verdicts in the two folds of the cases, split as the
    dev half is (:func:`fold`: by the parity of half the case number), and pooled."""
    folder = datasets / "craftmd"
    cases = load_cases(folder / CASES)
    lines = [line for model in RECORDED for line in load_recorded(folder / RECORDED[model])]
    out = {name: pooled([evaluate("all", [x for x in lines if fold(x["case_id"]) == name],
                                  cases, grader)]) for name in ("A", "B")}
    whole = Agreement()
    for agreement in out.values():
        whole.table.update(agreement.table)
    return {"all": whole, **out}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--experts-only", action="store_true",
                        help="print the agreement with the dermatologists only")
    parser.add_argument("--policy", choices=POLICIES, default="strict",
                        help="the grading policy measured (default strict)")
    parser.add_argument("--agreement-only", action="store_true",
                        help="print the agreement with the recorded GPT-4 verdicts only")
    args = parser.parse_args(argv)
    if not (args.datasets / "craftmd").is_dir():
        print(f"no CRAFT-MD datasets under {args.datasets}", file=sys.stderr)
        return 2
    start, cpu = time.perf_counter(), time.process_time()
    default_terminology()
    load, load_cpu = time.perf_counter() - start, time.process_time() - cpu
    grader = CraftMDGrader(policy=args.policy)
    print_experts(args.datasets, grader)
    if args.experts_only:
        return 0
    if args.agreement_only:
        for name, agreement in fold_agreement(args.datasets, grader).items():
            label = "pooled" if name == "all" else f"fold {name}"
            print(_row(f"{label} ({args.policy})", agreement))
        return 0
    reports = evaluate_shared(args.datasets, grader=grader)
    print(_row(f"pooled ({args.policy})", pooled(reports.values())))
    print_frq(reports)
    print_disagreements(reports, args.top)
    print_step1(reports)
    print_anatomy(reports)
    print_mcq(reports)
    answers = sum(r.answers for r in reports.values())
    seconds = sum(r.seconds for r in reports.values())
    decided = sum((r.decided_by for r in reports.values()), start=type(
        next(iter(reports.values())).decided_by)())
    print(f"Throughput: {answers} answers graded in {seconds:.1f} s on one core "
          f"({answers / seconds:,.0f}/s; terminology load {load:.2f} s wall, "
          f"{load_cpu:.2f} s CPU); "
          f"decided_by {dict(decided)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
