"""Startup benchmark: what the plugin adds to a pytest run that does not use it, and how soon
an LLM run sends its first request.

    python benchmarks/bench_startup.py [--pairs 15]

(a) ``pytest --collect-only -q`` in an empty directory, with the plugin and with
    ``-p no:agentclinic``, as interleaved pairs (each pair sees the same machine load):
    the median of the pairs' differences, wall and CPU (goal: <= 0.10 s added); twice: with
    no extension installed (the entry points of installed protocols hidden), and as this
    environment is (an installed protocol's options are declared in every run, so its
    distribution is imported, with whatever it imports);
(b) an LLM run of one case against a fake server in its own process: seconds from starting
    pytest to the server receiving the first request (goal: <= 1 s on a quiet machine);
    median of a few runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import Server, write_cases

#: pytest with the installed extensions' entry points hidden.
HIDDEN = ("from pytest_agentclinic.core import extensions; extensions.declared = lambda g: (); "
          "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))")


def timed(args: list[str], cwd: Path, hide: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one ``python -m pytest`` process."""
    started = time.perf_counter()
    runner = ["-c", HIDDEN] if hide else ["-m", "pytest"]
    process = subprocess.Popen([sys.executable, *runner, *args], cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def added(empty: Path, pairs: int, hide: bool) -> None:
    base = ["--collect-only", "-q", "-p", "no:cacheprovider"]
    walls: list[float] = []
    cpus: list[float] = []
    plain: list[float] = []
    timed(base, empty)  # warm the file cache
    for index in range(pairs):
        # Alternate which goes first: a neighbour's burst must not always hit the same side.
        order = [True, False] if index % 2 == 0 else [False, True]
        run: dict[bool, tuple[float, float]] = {}
        for with_plugin in order:
            run[with_plugin] = timed(base if with_plugin else [*base, "-p", "no:agentclinic"],
                                     empty, hide)
        walls.append(run[True][0] - run[False][0])
        cpus.append(run[True][1] - run[False][1])
        plain.append(run[False][0])
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    label = "no extension installed" if hide else "as installed here"
    print(f"(a) pytest --collect-only in an empty directory ({label}), {pairs} interleaved pairs: "
          f"without the plugin {statistics.median(plain):.3f} s (median); the plugin adds "
          f"{wall:.3f} s wall (median of the pairs' differences), {cpu:.3f} s CPU "
          f"(goal <= 0.10 s: {'met' if wall <= 0.10 else 'NOT met'})")


def first_request(work: Path, runs: int) -> None:
    write_cases(work / "one.yaml", 1)
    delays: list[float] = []
    for index in range(runs):
        server = Server(delay=0.0)
        try:
            env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
            started = time.monotonic()  # the server's clock too (CLOCK_MONOTONIC)
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "one.yaml", "--agent-doctor=openai/bench",
                            f"--agent-api-base={server.url}", "--agent-cache=off",
                            f"--agent-run-name=first{index}"], cwd=work, env=env,
                           stdout=subprocess.DEVNULL, check=False)
            served = server.stats()["served"]
        finally:
            server.stop()
        delays.append(min(a for a, _b in served) - started)
    print(f"(b) first request of an LLM run after pytest starts: "
          f"{statistics.median(delays):.2f} s median of {runs} "
          f"({', '.join(f'{d:.2f}' for d in delays)}; goal <= 1 s on a quiet machine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--runs", type=int, default=3, help="LLM runs in (b)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentclinic-startup-") as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        added(empty, opts.pairs, hide=True)
        added(empty, opts.pairs, hide=False)
        work = Path(tmp) / "work"
        work.mkdir()
        first_request(work, opts.runs)


if __name__ == "__main__":
    main()
