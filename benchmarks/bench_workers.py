"""What xdist's workers cost in a run of the plugin: the CPU of ``pytest cases.yaml -n N``
beyond the same run in one process (``-n 0``), against plain pytest-xdist's (a test file of
as many trivial tests, ``-p no:agentclinic``).

    python benchmarks/bench_workers.py [--workers 2,8] [--rounds 7] [--cases 8]
                                       [--against OTHER_PYTHON]

Every run is a fresh process tree (its CPU: user + system of the processes it waited for);
the runs of a round are interleaved, so each round sees the same machine load, and the
figures are medians over the rounds. Printed per ``N``: each run's CPU, the CPU a worker
adds (``(-n N) - (-n 0)``, divided by ``N``) for the plugin and for plain pytest-xdist, and
their ratio. ``--against`` times the plugin's runs with another interpreter too (another
checkout's environment, e.g. ``../main/.venv/bin/python``), interleaved with this one's, and
prints this one's CPU over that one's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from benchlib import write_cases
from proc_usage import tree_cpu

#: As many trivial tests as cases, for plain pytest-xdist.
PLAIN_TESTS = """import pytest


@pytest.mark.parametrize("i", range({n}))
def test_x(i):
    pass
"""


def pytest_command(python: str, *args: str) -> list[str]:
    return [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def one_round(folder: Path, workers: list[int], pythons: dict[str, str],
              cpu: dict[str, list[float]]) -> None:
    """Each run once, in turn."""
    for n in [0, *workers]:
        for label, python in pythons.items():
            cpu[f"{label} plugin -n {n}"].append(tree_cpu(
                pytest_command(python, "cases.yaml", "-n", str(n)), folder))
        cpu[f"plain xdist -n {n}"].append(tree_cpu(
            pytest_command(sys.executable, "test_plain.py", "-n", str(n),
                           "-p", "no:agentclinic"), folder))


def report(cpu: dict[str, list[float]], workers: list[int], labels: list[str]) -> None:
    med = {name: statistics.median(values) for name, values in cpu.items()}
    rounds = len(next(iter(cpu.values())))
    print(f"CPU (user + system of the process tree), medians of {rounds} interleaved rounds:")
    for name in sorted(med):
        print(f"  {name:28} {med[name]:6.2f} s")
    for n in workers:
        plain = (med[f"plain xdist -n {n}"] - med["plain xdist -n 0"]) / n
        for label in labels:
            plugin = (med[f"{label} plugin -n {n}"] - med[f"{label} plugin -n 0"]) / n
            print(f"-n {n}, {label}: a worker adds {plugin:.2f} s of CPU, plain pytest-xdist's "
                  f"{plain:.2f} s: {plugin / plain:.2f}x")
        if len(labels) == 2:
            a, b = (med[f"{label} plugin -n {n}"] for label in labels)
            print(f"-n {n}: the run's CPU, {labels[0]} / {labels[1]}: {a / b:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="2,8")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--against", help="another interpreter whose plugin to time too")
    args = parser.parse_args()
    workers = [int(n) for n in args.workers.split(",")]
    pythons = {"this": sys.executable}
    if args.against:
        pythons["against"] = args.against
    cpu: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_cases(folder / "cases.yaml", args.cases)
        (folder / "test_plain.py").write_text(PLAIN_TESTS.format(n=args.cases))
        one_round(folder, workers, pythons, defaultdict(list))  # warm: bytecode, index
        for _ in range(args.rounds):
            one_round(folder, workers, pythons, cpu)
    report(cpu, workers, list(pythons))


if __name__ == "__main__":
    main()
