"""Scale benchmark of the runner: scheduling time and peak memory against the number of items.

    python benchmarks/bench_scale.py [--sizes 1000,8000]

(a) scheduling alone, in this process, on 8,000 stand-in items: the lookahead that walked the
    rest of the session for every item (``items.index`` then a slice: O(n^2)) against the
    session's, which submits each item once, a bounded lead ahead (O(n)); the ratio is
    measured in this run;
(b) whole offline runs (``pytest cases.yaml``, one subprocess per size) of 1,000 and 8,000
    items: wall time, time spent in the session's ``_schedule`` (wall and CPU), and peak RSS;
    then the growth from the smallest to the largest: the exponent of the schedule's CPU
    (goal <= 1.05) and the peak RSS added per item (goal <= 2 KB).
    What no longer grows with the items: transcripts (written when an item finishes, at most
    four windows of finished encounters wait for their items, and the HTML page is written a
    transcript at a time), the case file's YAML node graph (built a case at a time), an
    item's case and its record's JSON property (released once the item is reported), and the
    records for the final tables (read back from results.jsonl at the end, sharing their
    equal parts). What still grows: pytest's own items and reports (~3 KB an item), those
    records (~2.6 KB each), and the offline agents' and the grader's text caches, bounded by
    their sizes (~6 KB an item in this range: their keys are each case's own text).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import yaml

from pytest_agentclinic.plugin.session import _Ahead

# Run as a child: time _schedule inside a real pytest session, print JSON on the last line.
CHILD = """
import json, resource, sys, time
import pytest
from pytest_agentclinic.plugin.session import AgentClinicSession

spent = [0.0, 0.0]
original = AgentClinicSession._schedule
def timed(self, item):
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        return original(self, item)
    finally:
        spent[0] += time.perf_counter() - start
        spent[1] += time.thread_time() - cpu
AgentClinicSession._schedule = timed
start = time.perf_counter()
status = pytest.main(sys.argv[1:])
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"status": int(status), "wall": wall, "schedule": spent[0],
                  "schedule_cpu": spent[1], "rss_mb": rss}))
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
    session, ahead = SimpleNamespace(items=items), _Ahead(lead=64)
    start = time.perf_counter()
    for item in items:  # the session's: a bounded lead ahead, each item handed out once
        for upcoming in ahead(session, item):  # type: ignore[arg-type]
            if id(upcoming) not in submitted:
                submitted.add(id(upcoming))
    return old, time.perf_counter() - start


def whole_run(n: int, workdir: Path) -> dict[str, float]:
    """One offline pytest run of ``n`` items in a fresh interpreter."""
    folder = workdir / f"n{n}"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,8000", help="item counts (default 1000,8000)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    old, new = lookahead_ratio(max(sizes))
    print(f"(a) scheduling lookahead, {max(sizes)} items: O(n^2) {old:.2f} s, "
          f"O(n) {new * 1000:.1f} ms, ratio {old / new:.0f}x")
    print("(b) whole offline runs:")
    # _schedule's wall time includes waiting for the GIL while the runner's thread plays the
    # offline encounters (pure CPU); its CPU time is what scheduling itself costs.
    print(f"{'items':>7} {'wall s':>8} {'_schedule s':>12} {'(CPU s)':>8} {'peak RSS MB':>12}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            r = whole_run(n, Path(tmp))
            rows.append((n, r))
            print(f"{n:>7} {r['wall']:>8.1f} {r['schedule']:>12.3f} {r['schedule_cpu']:>8.3f} "
                  f"{r['rss_mb']:>12.0f}")
    if len(rows) > 1:
        (n0, r0), (n1, r1) = rows[0], rows[-1]
        per_item = (r1["rss_mb"] - r0["rss_mb"]) / (n1 - n0) * 1024
        exponent = math.log(r1["schedule_cpu"] / r0["schedule_cpu"]) / math.log(n1 / n0)
        print(f"peak RSS grows {per_item:.1f} KB per item from {n0} to {n1} items "
              f"(ratio {r1['rss_mb'] / r0['rss_mb']:.2f} for {n1 / n0:.0f}x the items; "
              f"goal <= 2 KB)")
        print(f"schedule CPU grows as n^{exponent:.2f} from {n0} to {n1} items (goal <= 1.05)")
    print(f"this process's peak RSS: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
