"""Scale benchmark of the runner: scheduling time and peak memory against the number of items.

    python benchmarks/bench_scale.py [--sizes 1000,8000] [--repeat 2]

(a) scheduling alone, in this process, on 8,000 stand-in items: the lookahead that walked the
    rest of the session for every item (``items.index`` then a slice: O(n^2)) against the
    session's, which submits each item once, a bounded lead ahead (O(n)); the ratio is
    measured in this run;
(b) whole offline runs (``pytest cases.yaml``, one subprocess per run) of 1,000 and 8,000
    items, and beside each a plain pytest run (without this plugin) of as many trivial
    parametrized tests: pytest's own items and reports, the floor. Sizes are interleaved and
    repeated; the medians give the growth from the smallest size to the largest: the exponent
    of the schedule's CPU (goal <= 1.05), and the peak RSS added per item, whole and beyond
    plain pytest's (goal <= 2 KB for what the plugin adds), each also as a ratio to its goal.
    What no longer grows with the items: transcripts (written when an item finishes, at most
    four windows of finished encounters wait for their items, and the HTML page is written a
    transcript at a time), the case file's YAML node graph (built a case at a time), an
    item's case, transcript path and record's JSON property (released once the item is
    reported), its reports' copies of its keywords, and the grader's, the metrics' and the
    offline agents' text caches (2,048 entries each, emptied before the final reports),
    one set of given field names and a copy of each repeated string per case (equal ones
    shared: the case models are frozen)
    and each transcript's strings in pydantic's table of parsed strings. What still grows:
    pytest's own items and reports, and the records the final tables read back from
    results.jsonl (~2 KB each, their equal parts shared) while the reports are written.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import yaml

from pytest_agentclinic.plugin.scheduling import Ahead

# What both children start with: their imports and their own peak memory.
PRELUDE = """
import json, resource, sys, time
import pytest
def peak_mb():
    # This process's own high-water mark: ru_maxrss also counts what the parent held when it
    # forked this process (Linux keeps it across exec), which floored small runs at the
    # benchmark's own RSS.
    try:
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

# Run as a child: time _schedule inside a real pytest session, print JSON on the last line.
CHILD = PRELUDE + """
from pytest_agentclinic.plugin.executor import EncounterExecutor
from pytest_agentclinic.plugin.reports import FinalReports

spent = [0.0, 0.0]
original = EncounterExecutor._schedule
def timed(self, *args):
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        return original(self, *args)
    finally:
        spent[0] += time.perf_counter() - start
        spent[1] += time.thread_time() - cpu
EncounterExecutor._schedule = timed
before_reports = [0.0]
judge = FinalReports.judge
def reports(self, session, started):
    before_reports[0] = peak_mb()
    return judge(self, session, started)
FinalReports.judge = reports
start = time.perf_counter()
status = pytest.main(sys.argv[1:])
wall = time.perf_counter() - start
rss = peak_mb()
print(json.dumps({"status": int(status), "wall": wall, "schedule": spent[0],
                  "schedule_cpu": spent[1], "rss_mb": rss, "run_rss_mb": before_reports[0]}))
"""


def case(i: int) -> dict[str, object]:
    """A small case the offline agents can play (a few turns, one test)."""
    return {
        "id": f"s-{i:05d}", "specialty": "Dermatology",
        "objective": f"Evaluate and diagnose the patient presenting with complaint {i}.",
        "patient": {"demographics": "40-year-old woman",
                    "history": f"I have had problem number {i} for two weeks.",
                    "symptoms": {"primary": "Itchy rash", "secondary": ["Fatigue"]}},
        "physical_exam": {"Skin": "Scaly plaques."},
        "tests": {"Skin Biopsy": f"Findings typical of condition{i} disease."},
        "diagnosis": f"Condition{i} disease",
        "choices": [f"Condition{i} disease", "Other thing", "Third option", "Fourth one"],
    }


def lookahead_ratio(n: int) -> tuple[float, float]:
    """Seconds to schedule ``n`` items with the old O(n^2) lookahead and with the session's."""
    items = [object() for _ in range(n)]
    submitted: set[int] = set()
    start = time.perf_counter()
    for item in items:  # the old lookahead: find the item, then walk everything after it
        for upcoming in items[items.index(item):]:
            if id(upcoming) not in submitted:
                submitted.add(id(upcoming))
    old = time.perf_counter() - start
    submitted.clear()
    session, ahead = SimpleNamespace(items=items), Ahead(lead=64)
    start = time.perf_counter()
    for item in items:  # the session's: a bounded lead ahead, each item handed out once
        for upcoming in ahead(session, item):  # type: ignore[arg-type]
            if id(upcoming) not in submitted:
                submitted.add(id(upcoming))
    return old, time.perf_counter() - start


# The plain run's child: no module of this plugin imported, nothing patched.
PLAIN_CHILD = PRELUDE + """
start = time.perf_counter()
status = pytest.main(sys.argv[1:])
rss = peak_mb()
print(json.dumps({"status": int(status), "wall": time.perf_counter() - start, "schedule": 0.0,
                  "schedule_cpu": 0.0, "rss_mb": rss, "run_rss_mb": rss}))
"""

PLAIN = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_trivial(i):
    assert i >= 0
"""


def whole_run(n: int, workdir: Path) -> dict[str, float]:
    """One offline pytest run of ``n`` items in a fresh interpreter."""
    folder = workdir / f"n{n}"
    if not folder.exists():
        folder.mkdir()
        (folder / "cases.yaml").write_text(yaml.safe_dump(
            {"dataset": "scale", "cases": [case(i) for i in range(n)]}, sort_keys=False))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "cases.yaml", "-q", "-p", "no:cacheprovider",
         "--agent-run-name=scale", "--agent-turns=4", "-x"],
        cwd=folder, capture_output=True, text=True, check=False)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    records = (folder / "reports" / "scale" / "results.jsonl").read_text().count("\n")
    if result["status"] not in (0, 1) or records != n:
        raise SystemExit(f"the {n}-item run failed (status {result['status']}, "
                         f"{records} records):\n{out.stdout[-2000:]}")
    return result


def plain_run(n: int, workdir: Path) -> dict[str, float]:
    """A plain pytest run (this plugin off) of ``n`` trivial tests: pytest's own floor."""
    folder = workdir / f"plain{n}"
    if not folder.exists():
        folder.mkdir()
        (folder / "test_plain.py").write_text(PLAIN.format(n=n))
    out = subprocess.run(
        [sys.executable, "-c", PLAIN_CHILD, "test_plain.py", "-q", "-p", "no:cacheprovider",
         "-p", "no:agentclinic", "-p", "no:randomly", "-p", "no:xdist"],
        cwd=folder, capture_output=True, text=True, check=False)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if result["status"] != 0:
        raise SystemExit(f"the plain {n}-test run failed:\n{out.stdout[-2000:]}")
    return result


def growth(rows: dict[int, dict[str, float]], plain: dict[int, dict[str, float]]) -> None:
    """The growth from the smallest size to the largest, and each figure against its goal."""
    n0, n1 = min(rows), max(rows)
    r0, r1 = rows[n0], rows[n1]
    per_item = (r1["rss_mb"] - r0["rss_mb"]) / (n1 - n0) * 1024
    running = (r1["run_rss_mb"] - r0["run_rss_mb"]) / (n1 - n0) * 1024
    floor = (plain[n1]["rss_mb"] - plain[n0]["rss_mb"]) / (n1 - n0) * 1024
    exponent = math.log(r1["schedule_cpu"] / r0["schedule_cpu"]) / math.log(n1 / n0)
    print(f"schedule CPU grows as n^{exponent:.2f} from {n0} to {n1} items "
          f"(goal <= 1.05: ratio {exponent / 1.05:.2f})")
    print(f"peak RSS grows {per_item:.1f} KB per item from {n0} to {n1} items (ratio "
          f"{r1['rss_mb'] / r0['rss_mb']:.2f} for {n1 / n0:.0f}x the items; whole, against "
          f"2 KB: ratio {per_item / 2:.2f})")
    print(f"  of which while the items run: {running:.1f} KB per item (the final tables' "
          f"records read back add the rest)")
    print(f"plain pytest's own floor: {floor:.1f} KB per test; our growth beyond pytest's "
          f"own: {per_item - floor:.1f} KB per item (goal <= 2 KB: ratio "
          f"{(per_item - floor) / 2:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,8000", help="item counts (default 1000,8000)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs of each size, interleaved; medians are shown (default 2)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    old, new = lookahead_ratio(max(sizes))
    print(f"(a) scheduling lookahead, {max(sizes)} items: O(n^2) {old:.2f} s, "
          f"O(n) {new * 1000:.1f} ms, ratio {old / new:.0f}x")
    print(f"(b) whole offline runs, and plain pytest runs of as many trivial tests "
          f"(median of {args.repeat}):")
    # _schedule's wall time includes waiting for the GIL while the runner's thread plays the
    # offline encounters (pure CPU); its CPU time is what scheduling itself costs.
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    plains: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for n in sizes:  # interleaved: a load that comes and goes touches every size
                runs[n].append(whole_run(n, Path(tmp)))
                plains[n].append(plain_run(n, Path(tmp)))
    rows = {n: {k: statistics.median(r[k] for r in runs[n]) for k in runs[n][0]} for n in sizes}
    plain = {n: {k: statistics.median(r[k] for r in plains[n]) for k in plains[n][0]}
             for n in sizes}
    # "before reports": the peak while the items ran, before the final tables read the
    # records back.
    print(f"{'items':>7} {'wall s':>8} {'_schedule s':>12} {'(CPU s)':>8} {'peak RSS MB':>12} "
          f"{'(before reports)':>17} {'plain pytest MB':>16}")
    for n in sizes:
        r = rows[n]
        print(f"{n:>7} {r['wall']:>8.1f} {r['schedule']:>12.3f} {r['schedule_cpu']:>8.3f} "
              f"{r['rss_mb']:>12.0f} {r['run_rss_mb']:>17.0f} {plain[n]['rss_mb']:>16.0f}")
    if len(sizes) > 1:
        growth(rows, plain)
    print(f"this process's peak RSS: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
