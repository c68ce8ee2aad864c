"""Harness CPU per model call, and where it goes: one pytest process (no xdist) playing N
encounters of k doctor calls against the project's fake server (in its own process; answering
at once, or after ``--delay`` s, as a provider would), with the cache on.

    python benchmarks/bench_per_call.py [--cases 300] [--k 2] [--rounds 5] [--delay 0]
                                        [--profile miss|hit] [--profile-out FILE]

Interleaved rounds of three runs each: a fresh cache directory (every call a miss, sent and
stored), the same run again (every call a hit) and the same process collecting only (start-up,
imports, collection). Printed: medians of the CPU per call beyond collection, a miss's and a
hit's. ``--profile`` writes a cProfile of one more run of that kind and prints its top
functions by CPU time (their own and cumulative), to see where a call's CPU goes.
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
from bench_10k import case
from benchlib import Server

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
main = cProfile.Profile(time.thread_time)
main.enable()
try:
    pytest.main(sys.argv[1:])
finally:
    main.disable()
    stats = pstats.Stats(main)
    for profile in profiles:
        profile.disable()
        stats.add(profile)
    stats.dump_stats("run.prof")
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
    parser.add_argument("--profile", choices=("miss", "hit"))
    parser.add_argument("--profile-out", type=Path, help="keep the profile in this file")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentclinic-per-call-") as tmp:
        work = Path(tmp)
        (work / "cases.yaml").write_text(yaml.safe_dump(
            {"dataset": "pc", "cases": [case(i) for i in range(opts.cases)]}, sort_keys=False))
        server = Server(delay=opts.delay, k=opts.k)
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        base = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n0",
                "cases.yaml", "--agent-doctor=openai/bench", f"--agent-api-base={server.url}"]
        calls = opts.cases * opts.k
        cpu: dict[str, list[float]] = {"miss": [], "hit": [], "collect": []}
        try:
            for index in range(opts.rounds):
                cache = f"--agent-cache-dir=cache{index}"
                for kind in ("miss", "hit"):
                    cpu[kind].append(_cpu([sys.executable, *base, cache,
                                           f"--agent-run-name={kind}{index}"], work, env))
                cpu["collect"].append(_cpu([sys.executable, *base, cache, "--collect-only"],
                                           work, env))
                shutil.rmtree(work / "reports", ignore_errors=True)
            if opts.profile:
                cache = "--agent-cache-dir=profiled"
                if opts.profile == "hit":
                    _cpu([sys.executable, *base, cache, "--agent-run-name=warm"], work, env)
                _cpu([sys.executable, "-c", PROFILED, *base[2:], cache,
                      "--agent-run-name=profiled"], work, env)
        finally:
            server.stop()
        med = {kind: statistics.median(values) for kind, values in cpu.items()}
        print(f"{opts.cases} encounters x {opts.k} calls, one process, cache on; CPU per call "
              f"beyond collection ({med['collect']:.2f} s), medians of {opts.rounds} "
              f"interleaved rounds:")
        for kind in ("miss", "hit"):
            per_call = (med[kind] - med["collect"]) * 1000 / calls
            print(f"  {kind}: {per_call:.2f} ms (whole process {med[kind]:.2f} s)")
        if opts.profile:
            if opts.profile_out:
                shutil.copyfile(work / "run.prof", opts.profile_out)
            stats = pstats.Stats(str(work / "run.prof"))
            stats.sort_stats("tottime").print_stats(35)
            stats.sort_stats("cumulative").print_stats(60)


if __name__ == "__main__":
    main()
