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
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from benchlib import Server, records
from mem_probe import print_breakdowns, print_growth, print_traced
from proc_usage import TreePeak, command_cpu, print_cpu_by_process, steady_cpu
from start_phases import print_phases
from tenk_parts import (
    PAGE_GOAL_KB,
    PYTEST,
    case,
    collection,
    final_report,
    floor_start,
    start_phase,
    xdist_floor,
)


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
        start_up = command_cpu([*pytest_, "-n0", *agent, "--collect-only"], work, env)
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
        print(f"  {steady_cpu(peak, stats['served'])}")
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
