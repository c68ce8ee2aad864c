"""What a process tree spends, for ``bench_10k.py``: its CPU and memory.

Read from /proc while it runs (its processes, their RSS, PSS and CPU, each thread's CPU),
sampled by :class:`TreePeak` (peaks, and the CPU over time: the CPU per call in a run's full
swing, by process and thread), or from ``wait4``/``RUSAGE_CHILDREN`` once a command has
ended. No benchmark of its own: bench_10k.py's run and parts measure with it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from pathlib import Path

from mem_probe import breakdown


def process_tree(pid: int) -> list[int]:
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


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def pss_kb(pid: int) -> int:
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
            tree = process_tree(self.pid)
            rss = [rss_kb(p) for p in tree]
            if sum(rss) > self.peak_kb:  # who held it: the controller's, then the others'
                self.at_peak = (rss[0], sorted(rss[1:], reverse=True))
                self._read_smaps(tree, sum(rss))
            self.peak_kb = max(self.peak_kb, sum(rss))
            self.peak_one_kb = max(self.peak_one_kb, *rss)
            self.peak_pss_kb = max(self.peak_pss_kb, sum(pss_kb(p) for p in tree))
            self.cpu.append((time.monotonic(), sum(cpu_s(p) for p in tree)))
            if self.threads is not None:
                self.threads.append((time.monotonic(), {p: threads_cpu_s(p) for p in tree}))

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


def threads_cpu_s(pid: int) -> dict[int, float]:
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


def cpu_s(pid: int) -> float:
    """A live process's CPU seconds (user + system), with its children's that it waited for
    (a process that ended, e.g. the controller's parse of the case files, still counts),
    from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def installed_env(env: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``env`` (this process's by default) and ``extra``, with bytecode written: measured as
    installed, since an installed package has its bytecode and no user pays the compile."""
    out = {**(env or os.environ), **extra}
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def command_cpu(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    env = installed_env(env)
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def tree_cpu(command: list[str], cwd: Path) -> float:
    """The CPU of ``command``'s process and of every descendant it waited for."""
    env = installed_env()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def full_swing(served: list[list[float]]) -> tuple[float, float, int] | None:
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
    swing, samples = full_swing(served), peak.threads
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


def steady_cpu(peak: TreePeak, served: list[list[float]]) -> str:
    """The process tree's CPU per call while the run is in full swing: between the moments
    a quarter and three quarters of the calls had been answered (sampled CPU), over the
    calls answered between. Neither the start (interpreters, imports, collection), nor each
    process's first encounter (the grader's and the HTTP client's imports), nor the end
    (reports, exits) is in it: what each further call costs the harness, xdist included."""
    swing = full_swing(served)
    if swing is None:
        return "steady CPU per call: too few calls"
    low, high, calls = swing
    cpu = peak.cpu_at(high) - peak.cpu_at(low)
    return (f"CPU per call in full swing (the tree's CPU from a quarter to three quarters of "
            f"the calls answered, {high - low:.1f} s): {cpu:.1f} s / {calls:,} calls = "
            f"{cpu * 1000 / max(calls, 1):.2f} ms")
