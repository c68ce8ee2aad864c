"""Report benchmark: wall times of the statistics on the CRAFT-MD recorded runs, one run.

    python benchmarks/bench_report.py [--out DIR]

(a) ``agentclinic import-craftmd`` of recorded_gpt4_1106 and recorded_gpt3_1106 (~40,000
    FRQ records each), as a subprocess: what a user waits for, interpreter start included;
(b) ``agentclinic compare`` GPT-4 vs GPT-3.5, ``--by experiment`` and ``--by specialty``
    (loading both runs, pairing, 10,000 case-clustered bootstrap resamples per group);
(c) ``agentclinic report`` of the GPT-4 run: every table, summary.md/json and report.html;
(d) in this process: ``load_records`` of one run, then ``accuracy_table`` by experiment and
    by specialty (what ``agentclinic report`` calls), 10,000 resamples per group.

Target: each under 10 s of wall time (CPU time printed beside it). Needs ../shared/datasets/craftmd.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
CRAFTMD = ROOT.parent / "shared" / "datasets" / "craftmd"
MODELS = ("gpt4_1106", "gpt3_1106")
TARGET_S = 10.0
T = TypeVar("T")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(args: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU time of one ``agentclinic`` command; output discarded, failure raises."""
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", *args], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, _children_cpu() - cpu


def timed(fn: Callable[[], T]) -> tuple[T, tuple[float, float]]:
    """``fn()`` with its wall and CPU time."""
    cpu, start = time.process_time(), time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start, time.process_time() - cpu)


Row = tuple[str, tuple[float, float], str]


def bench(out: Path) -> list[Row]:
    """Every measurement as (what, (wall s, CPU s), note)."""
    from pytest_agentclinic.report.rundir import load_records
    from pytest_agentclinic.report.statistics import accuracy_table

    runs = {m: out / f"craftmd-{m}" for m in MODELS}
    rows: list[Row] = []
    for model, run in runs.items():
        times = command(["import-craftmd", str(CRAFTMD / f"recorded_{model}.jsonl.gz"),
                           "--out", str(run)])
        rows.append((f"agentclinic import-craftmd recorded_{model}", times, ""))
    for by in ("experiment", "specialty"):
        times = command(["compare", str(runs["gpt4_1106"]), str(runs["gpt3_1106"]),
                         "--by", by])
        rows.append((f"agentclinic compare gpt4 gpt3 --by {by}", times, ""))
    times = command(["report", str(runs["gpt4_1106"])])
    rows.append(("agentclinic report (gpt4 run: tables, summary, report.html)", times, ""))
    records, times = timed(partial(load_records, runs["gpt4_1106"]))
    rows.append(("load_records (gpt4 run)", times, f"{len(records)} records"))
    for by in ("experiment", "specialty"):
        table, times = timed(partial(accuracy_table, records, [by]))
        rows.append((f"accuracy_table by {by}", times, f"{len(table)} groups"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the imported runs here (default: a temporary directory)")
    args = parser.parse_args()
    if not (CRAFTMD / "recorded_gpt4_1106.jsonl.gz").is_file():
        print(f"CRAFT-MD recorded answers not found at {CRAFTMD}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        rows = bench(args.out or Path(tmp))
    from tabulate import tabulate

    # CPU time beside wall time: on a shared machine the wall time includes waiting for a core.
    print(tabulate([(what, f"{wall:.2f}", f"{cpu:.2f}", "yes" if wall < TARGET_S else "NO",
                     note) for what, (wall, cpu), note in rows],
                   headers=["measured", "wall s", "CPU s", f"wall < {TARGET_S:.0f} s", ""],
                   tablefmt="github"))
    return 0 if all(wall < TARGET_S for _, (wall, _), _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
