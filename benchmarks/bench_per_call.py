"""Harness CPU per model call, and where it goes: one pytest process (no xdist) playing N
encounters of k doctor calls against the project's fake server (in its own process; answering
at once, or after ``--delay`` s, as a provider would), with the cache on.

    python benchmarks/bench_per_call.py [--cases 300] [--k 2] [--rounds 5] [--delay 0] [--rpm R]
                                        [--profile miss|hit] [--profile-out FILE]
                                        [--profile-diff miss|hit]

Interleaved rounds of five runs each: N encounters with a fresh cache directory (every call
a miss, sent and stored), the same run again (every call a hit), the same two with 2N
encounters, and the process collecting N only (start-up, imports, collection). Printed,
medians of the rounds, a miss's and a hit's:

* CPU per call beyond collection: (the N run - the collect-only run) / calls. It still holds
  what a process pays once, at its first encounter and not per call: importing the grader,
  the HTTP client and the protocol's code, the cache's database, the final reports (~0.5 s
  of CPU, ~0.8 ms per call at N = 300);
* CPU per call, marginal: (the 2N run - the N run) / N's calls, what one more call costs
  once the process is warm: the figure a long run's CPU per call tends to.

``--rpm R`` paces the calls as a provider's limit does (the server refuses above R, the run
is given ``--agent-rpm R``): the same calls, woken one at a time, cost more CPU than calls
played back to back. ``BENCH_KEEP_PROFILES=DIR`` keeps ``--profile-diff``'s two profiles.

``--profile`` writes a cProfile of one more run of that kind and prints its top functions by
CPU time (their own and cumulative), to see where a call's CPU goes; ``--profile-diff`` profiles
N and 2N encounters and prints the difference per function, per item: where the marginal
CPU goes, without the imports and other once-per-process costs (cProfile's own overhead
inflates pure-Python functions several times against C ones and system calls).
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from benchlib import Server
from tenk_parts import case

#: pytest under a profile that counts CPU time, not wall-clock time (which, on a shared
#: machine, is mostly the neighbours' and the disk's).
PROFILED = """
import cProfile, pstats, sys, threading, time
import pytest

profiles = []
_run = threading.Thread.run

def profiled_run(self):  # every thread's own profile (the runner's loop makes the calls)
    profile = cProfile.Profile(time.thread_time)
    profiles.append(profile)
    profile.enable()
    try:
        _run(self)
    finally:
        profile.disable()

threading.Thread.run = profiled_run
out = sys.argv[1]
main = cProfile.Profile(time.thread_time)
main.enable()
try:
    pytest.main(sys.argv[2:])
finally:
    main.disable()
    stats = pstats.Stats(main)
    for profile in profiles:
        profile.disable()
        stats.add(profile)
    stats.dump_stats(out)
"""


def _cpu(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--k", type=int, default=2, help="doctor calls per encounter")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--rpm", type=float, default=None,
                        help="the server's limit and --agent-rpm: calls paced as a "
                             "provider's limit paces them (default: unlimited)")
    parser.add_argument("--profile", choices=("miss", "hit"))
    parser.add_argument("--profile-out", type=Path, help="keep the profile in this file")
    parser.add_argument("--profile-diff", choices=("miss", "hit"),
                        help="profile N and 2N encounters; print the difference per item")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentclinic-per-call-") as tmp:
        work = Path(tmp)
        for name, n in (("cases.yaml", opts.cases), ("cases2.yaml", 2 * opts.cases)):
            (work / name).write_text(yaml.safe_dump(
                {"dataset": "pc", "cases": [case(i) for i in range(n)]}, sort_keys=False))
        server = Server(delay=opts.delay, k=opts.k, rpm=opts.rpm)
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        base = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n0",
                "--agent-doctor=openai/bench", f"--agent-api-base={server.url}"]
        if opts.rpm:
            base.append(f"--agent-rpm={opts.rpm:g}")
        calls = opts.cases * opts.k
        cpu: dict[str, list[float]] = {"miss": [], "hit": [], "miss2": [], "hit2": [],
                                       "collect": []}
        try:
            for index in range(opts.rounds):
                for size, name in (("", "cases.yaml"), ("2", "cases2.yaml")):
                    cache = f"--agent-cache-dir=cache{size}-{index}"
                    for kind in ("miss", "hit"):
                        cpu[kind + size].append(_cpu(
                            [sys.executable, *base, name, cache,
                             f"--agent-run-name={kind}{size}-{index}"], work, env))
                cpu["collect"].append(_cpu([sys.executable, *base, "cases.yaml",
                                            f"--agent-cache-dir=cache-{index}",
                                            "--collect-only"], work, env))
                shutil.rmtree(work / "reports", ignore_errors=True)
            if opts.profile:
                _profile(work, env, base, opts.profile, "cases.yaml", "profiled")
            if opts.profile_diff:
                for name in ("cases.yaml", "cases2.yaml"):
                    _profile(work, env, base, opts.profile_diff, name, name[:-5])
        finally:
            server.stop()
        med = {kind: statistics.median(values) for kind, values in cpu.items()}
        print(f"{opts.cases} encounters x {opts.k} calls, one process, cache on; medians of "
              f"{opts.rounds} interleaved rounds (collect-only {med['collect']:.2f} s):")
        for kind in ("miss", "hit"):
            beyond = (med[kind] - med["collect"]) * 1000 / calls
            marginal = (med[kind + "2"] - med[kind]) * 1000 / calls
            print(f"  {kind}: {beyond:.2f} ms per call beyond collection (whole process "
                  f"{med[kind]:.2f} s); marginal {marginal:.2f} ms per call ({2 * opts.cases} "
                  f"encounters {med[kind + '2']:.2f} s)")
        if opts.profile:
            if opts.profile_out:
                shutil.copyfile(work / "profiled.prof", opts.profile_out)
            stats = pstats.Stats(str(work / "profiled.prof"))
            stats.sort_stats("tottime").print_stats(35)
            stats.sort_stats("cumulative").print_stats(60)
        if opts.profile_diff:
            if keep := os.environ.get("BENCH_KEEP_PROFILES"):  # a folder to copy them to
                for name in ("cases.prof", "cases2.prof"):
                    shutil.copyfile(work / name, Path(keep) / name)
            print_difference(work / "cases.prof", work / "cases2.prof", opts.cases)


def _profile(work: Path, env: dict[str, str], base: list[str], kind: str, cases: str,
             name: str) -> None:
    """A cProfile of one run of ``cases`` (a miss or a hit) in ``work / name``.prof."""
    cache = f"--agent-cache-dir=profiled-{name}"
    if kind == "hit":
        _cpu([sys.executable, *base, cases, cache, f"--agent-run-name=warm-{name}"], work, env)
    _cpu([sys.executable, "-c", PROFILED, f"{name}.prof", *base[2:], cases, cache,
          f"--agent-run-name=profiled-{name}"], work, env)


def print_difference(small: Path, large: Path, items: int, rows: int = 45) -> None:
    """Per function, the large profile's CPU less the small one's, per added item: its own
    time, its cumulative time and its calls."""
    before, after = pstats.Stats(str(small)).stats, pstats.Stats(str(large)).stats  # type: ignore[attr-defined]
    table = []
    for func, (_cc, calls, own, cumulative, _callers) in after.items():
        _c, old_calls, old_own, old_cumulative, _x = before.get(func, (0, 0, 0.0, 0.0, {}))
        table.append((own - old_own, cumulative - old_cumulative, calls - old_calls, func))
    total = sum(row[0] for row in table)
    print(f"profiled CPU per added item: {total * 1000 / items:.3f} ms (cProfile's overhead "
          f"included); per item, ms own / ms cumulative / calls:")
    for order in (0, 1):
        table.sort(key=lambda row: -row[order])
        for own, cumulative, calls, (file, line, function) in table[:rows]:
            print(f"  {own * 1000 / items:8.4f} {cumulative * 1000 / items:8.4f} "
                  f"{calls / items:7.2f}  {file}:{line}({function})")
        print()


if __name__ == "__main__":
    main()
