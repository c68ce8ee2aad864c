"""Terminology load: the per-user SQLite index against the table loaded into memory.

    python benchmarks/bench_terminology.py [--runs 9]

Every figure is measured in this run, each in a fresh ``python`` process: (1) the cold start,
building the index into an empty temporary cache directory; (2) ``--runs`` warm processes
that open that index, interleaved with as many that load the table into memory
(``AGENTCLINIC_TERMINOLOGY_CACHE=off``), each calling ``default_terminology()`` and grading one
answer. Medians of CPU (``time.process_time``), wall and peak RSS, and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Run in each process: the figures of one load and one graded answer.
_CHILD = """
import json, resource, time
cpu0, wall0 = time.process_time(), time.perf_counter()
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
grader = CraftMDGrader()
cpu1, wall1 = time.process_time(), time.perf_counter()
terms = default_terminology()
cpu2, wall2 = time.process_time(), time.perf_counter()
verdict = grader.grade_frq("**Final Diagnosis:** heart attack", "myocardial infarction")
cpu3, wall3 = time.process_time(), time.perf_counter()
print(json.dumps({
    "backend": type(terms.backend).__name__, "verdict": verdict.record(),
    "load_cpu": cpu2 - cpu1, "load_wall": wall2 - wall1,
    "grade_cpu": cpu3 - cpu2, "grade_wall": wall3 - wall2,
    # The whole process: interpreter, imports, load and the graded answer.
    "process_cpu": cpu3, "process_wall": wall3 - wall0,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
FIGURES = [("load_cpu", "s"), ("load_wall", "s"), ("grade_cpu", "s"), ("process_cpu", "s"),
           ("process_wall", "s"), ("rss_mb", "MB")]


def child(cache: str) -> dict[str, Any]:
    """One fresh process with ``AGENTCLINIC_TERMINOLOGY_CACHE=cache``."""
    env = {**os.environ, "AGENTCLINIC_TERMINOLOGY_CACHE": cache}
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True,
                         capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The median of each figure."""
    return {name: statistics.median(r[name] for r in runs) for name, _ in FIGURES}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        cold = [child(str(Path(work) / f"cold{i}")) for i in range(3)]
        cache = str(Path(work) / "cold0")
        warm: list[dict[str, Any]] = []
        memory: list[dict[str, Any]] = []
        for _ in range(args.runs):  # interleaved: drifts in machine load hit both alike
            warm.append(child(cache))
            memory.append(child("off"))
        size = sum(f.stat().st_size for f in Path(cache).iterdir()) / 2**20
    assert {r["backend"] for r in cold + warm} == {"SqliteIndex"}
    assert {r["backend"] for r in memory} == {"MemoryIndex"}
    assert len({json.dumps(r["verdict"]) for r in cold + warm + memory}) == 1, "verdicts differ"
    table = {"cold (build)": medians(cold), "warm (index)": medians(warm),
             "in memory": medians(memory)}
    print(f"index file {size:.1f} MB; medians of 3 cold and {args.runs} + {args.runs} "
          "interleaved warm / in-memory processes")
    print(f"  {'':<14}" + "".join(f"{n + ' ' + u:>16}" for n, u in FIGURES))
    for label, row in table.items():
        print(f"  {label:<14}" + "".join(f"{row[n]:>16.3f}" for n, _ in FIGURES))
    for label in ("cold (build)", "warm (index)"):
        print(f"  {label + ' / in memory':<28}" + "  ".join(
            f"{n} {table[label][n] / table['in memory'][n]:.3f}x" for n, _ in FIGURES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
