"""Startup benchmark: what the plugin adds to a pytest run that does not use it, and how soon
an LLM run sends its first request.

    python benchmarks/bench_startup.py [--pairs 15] [--runs 3]

(a) ``pytest --collect-only -q`` in an empty directory, with the plugin and with
    ``-p no:agentclinic``, as interleaved pairs (each pair sees the same machine load):
    the median of the pairs' differences, wall and CPU (goal: <= 0.10 s added, both); twice:
    with no extension installed (the installed extensions' entry points read, then hidden),
    and with the example extension (``tests/example_triage``, this checkout's copy, declared
    as installing it declares it: a protocol's options are declared in every run, so its
    module is imported, with whatever it imports);
(c) ``pytest tests`` in a repository that has nothing to do with agents: one test, and data
    fixtures of every kind the plugin reads (JSON, YAML, CSV: ``{}``, ``[]``, zero bytes, a
    header-only CSV, 2,000 small JSON files); the outcome must be that of
    ``-p no:agentclinic`` and the plugin adds <= 0.05 s (median of interleaved pairs);
(b) an LLM run of one case against a fake server in its own process: seconds from starting
    pytest to the server receiving the first request (goal: <= 1 s on a quiet machine);
    median of a few runs, interleaved, with the bytecode cached (as an installed package
    runs: ``PYTHONPYCACHEPREFIX``, a temporary directory warmed by one run first) and with
    none (``PYTHONDONTWRITEBYTECODE``: every module compiled, and pytest's assertion
    rewriting of the plugin's package redone, in every run), and on a machine's first run
    (the grader's terminology index not built yet: ~2 s of CPU, in a thread beside the run).
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

from pytest_agentclinic.grading.terminology_index import ENV as TERMINOLOGY_CACHE
from pytest_agentclinic.testing.fixture_repo import fixture_repository

EXAMPLE = Path(__file__).resolve().parents[1] / "tests" / "example_triage"

#: pytest with the installed extensions' entry points read (as every run reads them) and
#: hidden: an environment with no extension installed.
HIDDEN = """
from pytest_agentclinic.core import extensions
read = extensions.declared
extensions.declared = lambda group: read(group)[:0]
import sys, pytest
sys.exit(pytest.main(sys.argv[1:]))
"""

#: pytest with the example extension's entry points (from its pyproject.toml) declared too,
#: its module imported from this checkout.
WITH_EXAMPLE = """
import sys, tomllib
from importlib.metadata import EntryPoint
from pytest_agentclinic.core import extensions
with open(sys.argv.pop(1), "rb") as f:
    groups = tomllib.load(f)["project"]["entry-points"]
read = extensions.declared
extensions.declared = lambda group: tuple({p.name: p for p in (*read(group), *(
    EntryPoint(n, v, group) for n, v in groups.get(group, {}).items()))}.values())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def timed(args: list[str], cwd: Path, example: bool) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one pytest process."""
    env = dict(os.environ)
    if example:
        runner = ["-c", WITH_EXAMPLE, str(EXAMPLE / "pyproject.toml")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLE),
                                                          env.get("PYTHONPATH")]))
    else:
        runner = ["-c", HIDDEN]
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, *runner, *args], cwd=cwd, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def added(empty: Path, pairs: int, example: bool) -> None:
    base = ["--collect-only", "-q", "-p", "no:cacheprovider"]
    walls: list[float] = []
    cpus: list[float] = []
    plain: list[float] = []
    timed(base, empty, example)  # warm the file cache
    for index in range(pairs):
        # Alternate which goes first: a neighbour's burst must not always hit the same side.
        order = [True, False] if index % 2 == 0 else [False, True]
        run: dict[bool, tuple[float, float]] = {}
        for with_plugin in order:
            run[with_plugin] = timed(base if with_plugin else [*base, "-p", "no:agentclinic"],
                                     empty, example)
        walls.append(run[True][0] - run[False][0])
        cpus.append(run[True][1] - run[False][1])
        plain.append(run[False][0])
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    label = "with the example extension" if example else "no extension installed"
    print(f"(a) pytest --collect-only in an empty directory, {label}, {pairs} interleaved "
          f"pairs: without the plugin {statistics.median(plain):.3f} s (median); the plugin "
          f"adds {wall:.3f} s wall (median of the pairs' differences), {cpu:.3f} s CPU "
          f"(goal <= 0.10 s: {'met' if max(wall, cpu) <= 0.10 else 'NOT met'})")


def outcome(repo: Path, args: list[str]) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=repo,
                          capture_output=True, text=True, check=False)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return done.returncode, last.split(" in ")[0]


def fixtures_run(repo: Path, pairs: int) -> None:
    base = ["tests", "-q", "-p", "no:cacheprovider"]
    plain = [*base, "-p", "no:agentclinic"]
    same = outcome(repo, base) == outcome(repo, plain)
    walls: list[float] = []
    cpus: list[float] = []
    timed(base, repo, False)  # warm the file cache
    for index in range(pairs):
        order = [True, False] if index % 2 == 0 else [False, True]
        run = {w: timed(base if w else plain, repo, False) for w in order}
        walls.append(run[True][0] - run[False][0])
        cpus.append(run[True][1] - run[False][1])
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"(c) pytest tests in a repository of data fixtures (2,000 small JSON files, {{}}, "
          f"[], zero bytes, a header-only CSV), {pairs} interleaved pairs: same outcome as "
          f"-p no:agentclinic: {same}; the plugin adds {wall:.3f} s wall, {cpu:.3f} s CPU "
          f"(goal <= 0.05 s: {'met' if same and max(wall, cpu) <= 0.05 else 'NOT met'})")


def _first_delay(work: Path, name: str, env: dict[str, str]) -> float:
    """Seconds from starting one LLM run to the server receiving its first request."""
    server = Server(delay=0.0)
    try:
        started = time.monotonic()  # the server's clock too (CLOCK_MONOTONIC)
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "one.yaml", "--agent-doctor=openai/bench",
                        f"--agent-api-base={server.url}", "--agent-cache=off",
                        f"--agent-run-name={name}"], cwd=work,
                       env={**env, "OPENAI_API_KEY": "sk-bench"},
                       stdout=subprocess.DEVNULL, check=False)
        served = server.stats()["served"]
    finally:
        server.stop()
    return float(min(a for a, _b in served)) - started


def first_request(work: Path, runs: int) -> None:
    write_cases(work / "one.yaml", 1)
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    cached = {**base, "PYTHONPYCACHEPREFIX": str(work / "pyc")}
    conditions = {"bytecode cached": cached,
                  "no bytecode cache": {**base, "PYTHONDONTWRITEBYTECODE": "1"},
                  # The grader's terminology index is built on a machine's first run.
                  "bytecode cached, no terminology index yet": cached}
    _first_delay(work, "warm", cached)  # fills the bytecode cache
    delays: dict[str, list[float]] = {label: [] for label in conditions}
    for index in range(runs):
        for label, env in conditions.items():
            if "index" in label:
                env = {**env, TERMINOLOGY_CACHE: str(work / f"index{index}")}
            delays[label].append(_first_delay(work, f"first{index}", env))
    for label, seen in delays.items():
        print(f"(b) first request of an LLM run after pytest starts ({label}): "
              f"{statistics.median(seen):.2f} s median of {runs} "
              f"({', '.join(f'{d:.2f}' for d in seen)}; goal <= 1 s on a quiet machine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--runs", type=int, default=3, help="LLM runs in (b), each condition")
    parser.add_argument("--only-fixtures", action="store_true", help="run (c) only")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentclinic-startup-") as tmp:
        if opts.only_fixtures:
            fixtures_run(fixture_repository(Path(tmp) / "fixtures", 2000), opts.pairs)
            return
        empty = Path(tmp) / "empty"
        empty.mkdir()
        added(empty, opts.pairs, example=False)
        added(empty, opts.pairs, example=True)
        fixtures_run(fixture_repository(Path(tmp) / "fixtures", 2000), opts.pairs)
        work = Path(tmp) / "work"
        work.mkdir()
        first_request(work, opts.runs)


if __name__ == "__main__":
    main()
