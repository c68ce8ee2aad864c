"""The grader's CPU per answer, and its readings written out to compare two checkouts.

The answers graded are those the tests and benchmarks grade: every shape of
``tests/fixtures/adversarial.yaml`` filled with each truth set's truths, in both protocols
(``library``, ``agentclinic``, ``craftmd``, ``mediq``, ``sources``: as ``bench_adversarial``
builds them), and the distinct free-response answers of CRAFT-MD's recorded runs
(``recorded``, from ``../shared/datasets``, graded as ``bench_grader`` grades them). Each
answer goes through :func:`.rules.grade_text`, the one entry both protocols grade with.

    python benchmarks/bench_grader_cpu.py --save answers.jsonl [--sets library,recorded]
    python benchmarks/bench_grader_cpu.py --answers answers.jsonl [--readings out.tsv]
    python benchmarks/bench_grader_cpu.py --answers answers.jsonl --against /path/to/checkout \\
        [--rounds 5] [--limit 3000]

``--save`` writes the answers (built once, so that two checkouts grade the same texts);
``--readings`` writes one line per answer: the full decision (correct, sure, reason) and
what was read (category, diagnosis, relation), to ``diff`` between two checkouts.
``--against`` grades the same answers in turns with this checkout and another one (its
package first on ``PYTHONPATH``), each in a fresh interpreter, ``--rounds`` times
interleaved, and prints each side's median CPU per answer and their ratio.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
SETS = ("library", "agentclinic", "craftmd", "mediq", "sources", "recorded")
PROTOCOLS = ("agentclinic", "craftmd")
#: The characters graded of an answer, as :data:`.pipeline.GRADED_CHARS` (kept here so that
#: the file of answers does not depend on the checkout that grades it).
GRADED_CHARS = 65_536


def _library_answers(source: str) -> Iterator[dict[str, Any]]:
    """The adversarial shapes filled with ``source``'s truths, in both protocols."""
    sys.path.insert(0, str(ROOT / "tests"))
    from adversarial import answer, library_pool, suite
    from adversarial_truths import held_out_truths
    from source_truths import source_truths

    if source == "library":
        pool = library_pool()
    else:
        truths = source_truths() if source == "sources" else held_out_truths(source)
        if isinstance(truths, str):
            print(f"skipped: {truths}", file=sys.stderr)
            return
        pool = truths.pool
    for case in pool.cases:
        for shape in suite().strategies:
            for protocol in PROTOCOLS:
                said = answer(shape, case, protocol, pool)
                if said is not None:
                    yield {"text": said[:GRADED_CHARS], "accepted": case.accepted_diagnoses,
                           "choices": list(case.choices or ()), "asked": None}


def _recorded_answers(datasets: Path) -> Iterator[dict[str, Any]]:
    """The distinct (response, truth, choices) of CRAFT-MD's recorded free-response lines."""
    folder = datasets / "craftmd"
    sys.path.insert(0, str(ROOT))
    from tools.craftmd_eval import CASES, RECORDED, load_cases

    cases = load_cases(folder / CASES)
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for name in RECORDED.values():
        with gzip.open(folder / name, "rt", encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                if row.get("format") != "frq":
                    continue
                case = cases.get(row["case_id"])
                choices = tuple(case.choices) if case else ()
                key = (row["response"], row["correct_answer"], choices)
                if key not in seen:
                    seen.add(key)
                    yield {"text": key[0], "accepted": [key[1]], "choices": list(choices),
                           "asked": True}


def save(path: Path, sets: list[str], datasets: Path) -> int:
    """Write the answers of ``sets`` to ``path``, one JSON object a line; return how many."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for name in sets:
            rows = _recorded_answers(datasets) if name == "recorded" else _library_answers(name)
            for row in rows:
                out.write(json.dumps({"set": name, **row}) + "\n")
                count += 1
    return count


def grade_all(path: Path, policies: list[str], limit: int | None,
              readings: Path | None) -> tuple[int, float]:
    """Grade the answers of ``path`` under each policy; return (answers, CPU seconds of the
    grading alone), and write each reading to ``readings`` when given."""
    from pytest_agentclinic.grading.judging.rules import Policy, grade_text
    from pytest_agentclinic.grading.terms.concepts import default_terminology

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = rows[:limit] if limit else rows
    default_terminology()  # loaded before the clock starts: not grading
    out: list[str] = []
    cpu = 0.0
    for policy in policies:
        started = time.process_time()
        for row in rows:
            extraction, decision = grade_text(row["text"], row["accepted"], row["choices"],
                                              cast(Policy, policy),
                                              diagnosis_asked=row["asked"])
            if readings is not None:
                out.append(json.dumps([row["set"], policy, decision.correct, decision.sure,
                                       decision.reason, extraction.category,
                                       extraction.label, decision.relation]))
        cpu += time.process_time() - started
    if readings is not None:
        readings.write_text("\n".join(out) + "\n", encoding="utf-8")
    return len(rows) * len(policies), cpu


def _child(checkout: Path, args: list[str]) -> float:
    """CPU per answer (ms) of one grading run in a fresh interpreter with ``checkout``'s
    package first on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, __file__, *args], env=env, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split("ms_per_answer=")[1].split()[0])


def interleaved(other: Path, rounds: int, args: list[str]) -> None:
    """Grade in turns with this checkout and ``other``; print the medians and their ratio."""
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        theirs.append(_child(other, args))
        ours.append(_child(ROOT, args))
        print(f"  round: other {theirs[-1]:.3f} ms, this {ours[-1]:.3f} ms", flush=True)
    mine, base = statistics.median(ours), statistics.median(theirs)
    print(f"CPU per answer, median of {rounds} interleaved runs: other checkout {base:.3f} ms, "
          f"this checkout {mine:.3f} ms; ratio this/other {mine / base:.3f} "
          f"({base / mine:.2f}x faster)")


def main(argv: list[str] | None = None) -> int:
    """Build, grade or compare (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the answers to this file")
    parser.add_argument("--sets", default=",".join(SETS), help="the answer sets to save")
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--answers", type=Path, help="grade the answers of this file")
    parser.add_argument("--policies", default="strict", help="comma-separated policies")
    parser.add_argument("--limit", type=int, default=0, help="grade the first N answers")
    parser.add_argument("--readings", type=Path, help="write each reading to this file")
    parser.add_argument("--against", type=Path, help="another checkout to compare CPU with")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.save:
        sets = [s for s in args.sets.split(",") if s]
        print(f"{save(args.save, sets, args.datasets)} answers written to {args.save}")
        return 0
    if args.answers is None:
        parser.error("--answers (or --save) is required")
    if args.against:
        child = ["--answers", str(args.answers), "--policies", args.policies,
                 "--limit", str(args.limit)]
        interleaved(args.against, args.rounds, child)
        return 0
    policies = [p for p in args.policies.split(",") if p]
    count, cpu = grade_all(args.answers, policies, args.limit or None, args.readings)
    print(f"{count} answers graded, CPU {cpu:.2f} s, ms_per_answer={1000 * cpu / count:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
