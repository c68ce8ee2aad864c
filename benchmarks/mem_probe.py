"""What a process's memory is: ``bench_10k.py --probe memory`` and ``--probe tracemalloc``.

``breakdown(pid)`` sums ``/proc/PID/smaps`` by kind of mapping (its RSS, PSS and anonymous
pages): the brk heap (glibc's main malloc arena, and pymalloc's arenas that fit there),
anonymous mappings (other malloc arenas, a thread's own, pymalloc's 1 MB arenas, large
blocks, thread stacks), the response cache's SQLite files (``cache.db``, ``-wal``,
``-shm``: what SQLite's memory map brings in), the interpreter's and extensions' shared
objects, other files, and the main stack. Loaded with ``-p mem_probe`` (``--probe
tracemalloc``, with ``PYTHONTRACEMALLOC`` set), each process writes the allocations it holds
at its session's finish (a worker: after its last item; the controller: before its final
reports), the largest by source line, to ``MEM_PROBE_DIR``. A worker also writes its growth
from its ``MEM_PROBE_FIRST``-th item's end (default 100) to its last item's: its RSS, the
source lines whose held allocations grew most (under tracemalloc) and each per-text cache's
size, hits and misses (``core.text.bounded_cache``; read before the session's finish empties
them). ``--probe caches`` writes the growth without tracemalloc (the run at its own speed).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

KINDS = ("heap", "anon", "cache.db", "python", "extensions", "libs", "files", "stack")


def _kind(name: str) -> str:
    if name == "[heap]":
        return "heap"
    if not name or name.startswith("[anon"):
        return "anon"
    if name.startswith("[stack"):
        return "stack"
    if name.startswith("["):
        return "files"  # [vdso], [vvar]: small
    if "/cache.db" in name:
        return "cache.db"
    if "/libpython" in name or "/bin/python" in name:
        return "python"
    if ".so" in name and ("site-packages" in name or "lib-dynload" in name):
        return "extensions"
    if ".so" in name:
        return "libs"
    return "files"


def breakdown(pid: int) -> dict[str, dict[str, int]]:
    """Per kind of mapping: {"rss", "pss", "anon"} in KB; and "threads": {"n": count}."""
    found = {kind: {"rss": 0, "pss": 0, "anon": 0} for kind in KINDS}
    kind = "anon"
    try:
        with open(f"/proc/{pid}/smaps") as fh:
            for line in fh:
                head = line.split(None, 5)
                if "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                    kind = _kind(head[5].strip() if len(head) > 5 else "")
                elif head[0] == "Rss:":
                    found[kind]["rss"] += int(head[1])
                elif head[0] == "Pss:":
                    found[kind]["pss"] += int(head[1])
                elif head[0] == "Anonymous:":
                    found[kind]["anon"] += int(head[1])
        with open(f"/proc/{pid}/status") as fh:
            threads = next(int(line.split()[1]) for line in fh if line.startswith("Threads:"))
    except (OSError, StopIteration):
        return {}
    return {**found, "threads": {"n": threads}}


def print_breakdowns(at_peak: dict[int, dict[str, dict[str, int]]], controller: int) -> None:
    """The table of each process's memory by kind at the tree's peak (MB of RSS; anonymous
    and PSS in totals)."""
    if not at_peak:
        return
    print("  memory at the peak by kind of mapping (MB RSS; heap = brk arena, anon = other "
          "anonymous mappings, python = interpreter, extensions = site-packages .so):")
    print("    " + "process".ljust(12) + "".join(k.rjust(11) for k in KINDS)
          + "   total    anon     PSS threads")
    for pid in sorted(at_peak, key=lambda p: (p != controller, p)):
        parts = at_peak[pid]
        if not parts:
            continue
        rss = sum(parts[k]["rss"] for k in KINDS)
        if not rss:  # a process that had ended (the controller's parse of the case files)
            continue
        anon = sum(parts[k]["anon"] for k in KINDS)
        pss = sum(parts[k]["pss"] for k in KINDS)
        name = "controller" if pid == controller else str(pid)
        print("    " + name.ljust(12)
              + "".join(f"{parts[k]['rss'] / 1024:11.1f}" for k in KINDS)
              + f"{rss / 1024:8.1f}{anon / 1024:8.1f}{pss / 1024:8.1f}"
              + f"{parts['threads']['n']:8d}")


# --- loaded with -p mem_probe: tracemalloc's view at each process's session finish ---

try:
    import pytest
except ImportError:  # imported by bench_10k.py for breakdown() alone
    pytest = None  # type: ignore[assignment]


def _write_top(name: str, top: int = 25) -> None:
    import gc
    import tracemalloc

    if not tracemalloc.is_tracing():
        return
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)])
    stats = snapshot.statistics("lineno")
    rows: list[dict[str, Any]] = [
        {"where": f"{s.traceback[0].filename}:{s.traceback[0].lineno}", "kb": s.size / 1024,
         "blocks": s.count} for s in stats[:top]]
    current, peak = tracemalloc.get_traced_memory()
    with open(os.path.join(os.environ["MEM_PROBE_DIR"], name + ".json"), "w") as out:
        files = [{"where": s.traceback[0].filename, "kb": s.size / 1024, "blocks": s.count}
                 for s in snapshot.statistics("filename")[:top]]
        json.dump({"traced_mb": current / 2**20, "peak_mb": peak / 2**20, "top": rows,
                   "files": files,
                   "modules": _modules_by_package()}, out)
    keep = os.environ.get("MEM_PROBE_KEEP")
    if keep:  # the module lists, kept past the bench's temporary folder
        with open(os.path.join(keep, name + ".modules"), "w") as out:
            out.write("\n".join(sorted(sys.modules)))


def _modules_by_package() -> dict[str, list[float]]:
    """The imported modules by top-level package: [modules, KB of their compiled code on
    disk] (a module's code objects in memory are a few times its .pyc)."""
    import importlib.util
    import sys

    found: dict[str, list[float]] = {}
    for name, module in list(sys.modules.items()):
        entry = found.setdefault(name.partition(".")[0], [0, 0.0])
        entry[0] += 1
        source = getattr(module, "__file__", None) or ""
        if source.endswith(".py"):
            with contextlib.suppress(OSError, ValueError, NotImplementedError):
                entry[1] += os.path.getsize(importlib.util.cache_from_source(source)) / 1024
    return found


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        return next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)


def _caches() -> list[dict[str, Any]]:
    """Each per-text cache's entries, hits and misses (the process's own)."""
    from pytest_agentclinic.core.text import _CACHES

    found = []
    for cache in list(_CACHES):
        info = cache.cache_info()
        func = getattr(cache, "__wrapped__", cache)
        found.append({"name": f"{getattr(func, '__module__', '?').rsplit('.', 1)[-1]}."
                              f"{getattr(func, '__qualname__', '?')}",
                      "hits": info.hits, "misses": info.misses, "size": info.currsize,
                      "maxsize": info.maxsize})
    return found


#: With ``MEM_PROBE_KEYS`` set: each per-text cache's calls (hashes of their arguments) in
#: order, to replay through caches of other sizes (:func:`_replayed`).
_CALLS: dict[str, list[int]] = {}
#: The sizes the calls are replayed at.
SIZES = (64, 128, 256, 512, 1024, 2048, 4096, 16384)


def _record_calls() -> None:
    """Make every per-text cache record its calls: ``core.text.bounded_cache`` is replaced
    before the modules that use it are imported (``-p mem_probe`` loads before the
    plugin's entry point), and the two caches it made on import are wrapped."""
    import functools

    from pytest_agentclinic.core import text

    made = text.bounded_cache

    def recording(cached: Any, name: str) -> Any:
        calls = _CALLS.setdefault(name, [])

        @functools.wraps(cached)
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(hash((args, tuple(kwargs.items()))))
            return cached(*args, **kwargs)

        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return call

    def bounded_cache(func: Any, maxsize: int = text.CACHE_ENTRIES) -> Any:
        name = f"{func.__module__.rsplit('.', 1)[-1]}.{func.__qualname__}"
        return recording(made(func, maxsize), name)

    text.bounded_cache = bounded_cache
    text.tokens = recording(text.tokens, "text.tokens")
    text.content = recording(text.content, "text.content")


def _replayed() -> dict[str, dict[str, Any]]:
    """Each cache's hits had it held each of :data:`SIZES` entries (least recently used
    out), and its calls and distinct calls."""
    from collections import OrderedDict

    found: dict[str, dict[str, Any]] = {}
    for name, calls in _CALLS.items():
        hits = {}
        for size in SIZES:
            held: OrderedDict[int, None] = OrderedDict()
            count = 0
            for key in calls:
                if key in held:
                    count += 1
                    held.move_to_end(key)
                else:
                    held[key] = None
                    if len(held) > size:
                        held.popitem(last=False)
            hits[str(size)] = count
        found[name] = {"calls": len(calls), "distinct": len(set(calls)), "hits": hits}
    return found


class _Growth:
    """A worker's memory at its ``MEM_PROBE_FIRST``-th item's end and at its last's."""

    def __init__(self) -> None:
        self.first = int(os.environ.get("MEM_PROBE_FIRST", "100"))
        self.items = self.done = 0
        self.at_first: Any = None
        self.rss_first = 0
        self.caches_first: list[dict[str, Any]] = []

    def finished(self, name: str) -> None:
        import tracemalloc

        self.done += 1
        if self.done == self.first:
            import gc
            gc.collect()
            self.rss_first, self.caches_first = _rss_kb(), _caches()
            self.at_first = tracemalloc.take_snapshot() if tracemalloc.is_tracing() else None
        elif self.done == self.items and self.done > self.first:
            self._write(name)

    def _write(self, name: str) -> None:
        import gc
        import tracemalloc

        gc.collect()
        rows: list[dict[str, Any]] = []
        if self.at_first is not None and tracemalloc.is_tracing():
            ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
            now = tracemalloc.take_snapshot().filter_traces(ignore)
            diff = now.compare_to(self.at_first.filter_traces(ignore), "lineno")
            rows = [{"where": f"{d.traceback[0].filename}:{d.traceback[0].lineno}",
                     "kb": d.size_diff / 1024, "blocks": d.count_diff} for d in diff[:25]]
        with open(os.path.join(os.environ["MEM_PROBE_DIR"], name + ".growth.json"), "w") as out:
            json.dump({"items": [self.first, self.done], "rss_kb": [self.rss_first, _rss_kb()],
                       "top": rows, "caches_first": self.caches_first, "caches": _caches(),
                       "replayed": _replayed()}, out)


_growth = _Growth()


if pytest is not None:
    if os.environ.get("MEM_PROBE_KEYS"):
        _record_calls()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(session: Any) -> None:
        worker = getattr(session.config, "workerinput", None)
        _write_top(worker["workerid"] if worker else "controller")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session: Any) -> None:
        _growth.items = len(session.items)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(nodeid: str) -> None:
        del nodeid
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        if worker:  # the controller plays nothing
            _growth.finished(worker)


def print_growth(folder: str) -> None:
    """Each worker's growth from its first items to its last (``--probe tracemalloc`` and
    ``caches``): RSS, the lines that grew most (first two workers), the caches summed."""
    names = sorted(n for n in os.listdir(folder) if n.endswith(".growth.json"))
    if not names:
        return
    totals: dict[str, dict[str, int]] = {}
    for index, name in enumerate(names):
        with open(os.path.join(folder, name)) as fh:
            data = json.load(fh)
        first, last = data["items"]
        rss = data["rss_kb"]
        grown = (rss[1] - rss[0]) / max(last - first, 1)
        print(f"  {name.split('.')[0]}: RSS {rss[0] / 1024:.1f} MB at item {first}, "
              f"{rss[1] / 1024:.1f} MB at item {last} ({grown:.1f} KB an item)")
        if index < 2 and data["top"]:
            print("    grown most by line (KB, blocks):")
            for row in data["top"][:15]:
                print(f"    {row['kb']:9.1f} KB {row['blocks']:8d} blocks  {row['where']}")
        before = {c["name"]: c for c in data["caches_first"]}
        for cache in data["caches"]:
            total = totals.setdefault(cache["name"], {"hits": 0, "misses": 0, "size": 0,
                                                      "late_hits": 0, "late_misses": 0,
                                                      "maxsize": cache["maxsize"] or 0})
            old = before.get(cache["name"], {"hits": 0, "misses": 0})
            total["hits"] += cache["hits"]
            total["misses"] += cache["misses"]
            total["late_hits"] += cache["hits"] - old["hits"]
            total["late_misses"] += cache["misses"] - old["misses"]
            total["size"] = max(total["size"], cache["size"])
    _print_replayed(folder, names)
    print(f"  per-text caches over the {len(names)} workers (hits / calls; 'late': from the "
          f"first items' end on; size: the largest worker's entries / its bound):")
    for name, t in sorted(totals.items(), key=lambda kv: -(kv[1]["hits"] + kv[1]["misses"])):
        calls, late = t["hits"] + t["misses"], t["late_hits"] + t["late_misses"]
        print(f"    {name:45s} {t['hits']:8d} / {calls:8d} = {t['hits'] / max(calls, 1):6.1%}"
              f"  late {t['late_hits'] / max(late, 1):6.1%}  size {t['size']:6d} / "
              f"{t['maxsize']}")


def print_traced(folder: str) -> None:
    """The controller's and the first worker's top allocations (``--probe tracemalloc``)."""
    names = sorted(os.listdir(folder))
    for name in [n for n in names if n == "controller.json"] + [
            n for n in names if n.startswith("gw") and not n.endswith(".growth.json")][:2]:
        with open(os.path.join(folder, name)) as fh:
            data = json.load(fh)
        print(f"  {name[:-5]}: traced {data['traced_mb']:.1f} MB held at its session's finish "
              f"(peak {data['peak_mb']:.1f} MB); largest by line:")
        for row in data["top"]:
            print(f"    {row['kb']:9.1f} KB {row['blocks']:8d} blocks  {row['where']}")
        print("    largest by file: " + ", ".join(
            f"{os.path.basename(r['where'])} {r['kb'] / 1024:.1f}" for r in data["files"]))
        packages = sorted(data["modules"].items(), key=lambda kv: -kv[1][1])
        print(f"    {sum(n for n, _kb in data['modules'].values()):.0f} modules; largest "
              f"packages by compiled code on disk (KB): " + ", ".join(
                  f"{name} {n:.0f}/{kb:.0f}" for name, (n, kb) in packages[:20]))


def _print_replayed(folder: str, names: list[str]) -> None:
    """The caches' hit rates at each of :data:`SIZES`, the workers' calls summed
    (``MEM_PROBE_KEYS``)."""
    totals: dict[str, dict[str, Any]] = {}
    for name in names:
        with open(os.path.join(folder, name)) as fh:
            replayed = json.load(fh).get("replayed") or {}
        for cache, data in replayed.items():
            total = totals.setdefault(cache, {"calls": 0, "distinct": 0,
                                              "hits": dict.fromkeys(data["hits"], 0)})
            total["calls"] += data["calls"]
            total["distinct"] += data["distinct"]
            for size, hits in data["hits"].items():
                total["hits"][size] += hits
    if not totals:
        return
    print("  per-text caches replayed at other sizes (hit rate, the workers' calls summed; "
          "distinct: calls that no cache could answer, summed per worker):")
    print("    " + "cache".ljust(45) + "calls".rjust(9) + "distinct".rjust(9)
          + "".join(str(size).rjust(8) for size in SIZES))
    for cache, t in sorted(totals.items(), key=lambda kv: -kv[1]["calls"]):
        if not t["calls"]:
            continue
        print("    " + cache.ljust(45) + f"{t['calls']:9d}{t['distinct']:9d}" + "".join(
            f"{t['hits'][str(size)] / t['calls']:8.1%}" for size in SIZES))
