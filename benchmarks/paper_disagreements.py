"""Why the offline grader and the recorded GPT-4 grader disagree, bucketed by stage.

A study tool for one fold of the recorded CRAFT-MD answers (issue 31: disagreements are
studied in fold A only; fold B measures what carries over). Each disagreement is put in a
bucket by the stage that decided it and how the names relate:

* ``read``: our step 1 category (single / multiple / none) differs from the recorded
  grader's extraction ("Multiple", "None" or a name);
* ``relate``: both read one name; the bucket is our relation of that name to the truth
  (same, synonym, broader, narrower, sibling, different, related, ...) and whether our
  rules were sure; ``secondary`` when the truth was found only beside the main name.

and printed with counts, the recorded verdict, and a few examples each. Nothing is written
into the project; ``--dump FILE`` keeps the graded rows (JSON lines) outside it so that a
later ``--load FILE`` buckets again without grading.

    python benchmarks/paper_disagreements.py [--policy paper] [--fold A] [--every 1]
        [--examples 4] [--dump FILE | --load FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_grader import DEFAULT_DATASETS, fold
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from tools.craftmd_eval import (
    CASES,
    RECORDED,
    load_cases,
    load_recorded,
    reference_category,
)


def graded_rows(datasets: Path, policy: str, only: str, every: int) -> list[dict[str, Any]]:
    """Every free-response answer of the fold, graded, beside the recorded verdict."""
    folder = datasets / "craftmd"
    cases = load_cases(folder / CASES)
    grader = CraftMDGrader(policy=policy)  # type: ignore[arg-type]
    rows = []
    for model in RECORDED:
        lines = [x for x in load_recorded(folder / RECORDED[model])
                 if x["format"] == "frq" and fold(x["case_id"]) == only]
        for line in lines[::every]:
            case = cases.get(line["case_id"])
            g = grader.grade_frq(line["response"], line["correct_answer"],
                                 case.choices if case else ())
            rows.append({"case": line["case_id"], "truth": line["correct_answer"],
                         "response": line["response"], "ref": str(line.get("extracted", "")),
                         "ref_verdict": int(line["grader_verdict"]), "verdict": g.verdict,
                         "extracted": g.extracted, "category": g.category,
                         "relation": g.relation, "sure": g.sure, "reason": g.reason,
                         "specialty": case.specialty if case else "unknown"})
    return rows


def bucket(row: dict[str, Any]) -> str:
    """The stage and kind of one disagreement."""
    ref = reference_category(row["ref"])
    ours = row["category"]
    if ours != ref:
        derm = "derm" if row["specialty"] == "Dermatology" else "non-derm"
        return f"read: ours {ours} / ref {ref} ({derm})"
    if ours != "single":
        return f"read: both {ours}"
    if "secondary role" in row["reason"] or "beside the main" in row["reason"]:
        return "decide: truth beside / secondary"
    sure = "sure" if row["sure"] else "unsure"
    return f"relate: {row['relation']} ({sure})"


def report(rows: list[dict[str, Any]], examples: int) -> None:
    """Counts of agreement and the buckets of disagreements, with examples."""
    table = Counter((r["verdict"], r["ref_verdict"]) for r in rows)
    n = len(rows)
    agree = (table[(0, 0)] + table[(1, 1)]) / n
    ours, ref = (table[(1, 0)] + table[(1, 1)]) / n, (table[(0, 1)] + table[(1, 1)]) / n
    chance = ours * ref + (1 - ours) * (1 - ref)
    print(f"answers {n}  agree {agree:.4f}  kappa {(agree - chance) / (1 - chance):.4f}  "
          f"ours 1/ref 0: {table[(1, 0)]}  ours 0/ref 1: {table[(0, 1)]}")
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["verdict"] != r["ref_verdict"]:
            groups[(bucket(r), r["ref_verdict"])].append(r)
    rng = random.Random(31)
    for (name, verdict), members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{len(members):>5}  ref says {verdict}  {name}")
        for r in rng.sample(members, min(examples, len(members))):
            text = " ".join(r["response"].split())[:160]
            print(f"       truth {r['truth']!r} | ref {r['ref'][:50]!r} | ours "
                  f"{r['extracted'][:50]!r} | {r['reason'][:90]}\n         {text!r}")


def main(argv: list[str] | None = None) -> int:
    """Grade (or load) one fold and print its disagreements by bucket."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--policy", choices=("strict", "paper"), default="paper")
    parser.add_argument("--fold", choices=("A", "B"), default="A")
    parser.add_argument("--every", type=int, default=1, help="grade every n-th answer")
    parser.add_argument("--examples", type=int, default=4)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--load", type=Path)
    args = parser.parse_args(argv)
    if args.load:
        rows = [json.loads(x) for x in args.load.read_text(encoding="utf-8").splitlines()]
    else:
        rows = graded_rows(args.datasets, args.policy, args.fold, args.every)
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report(rows, args.examples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
