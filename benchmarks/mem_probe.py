"""What a process's memory is: ``bench_10k.py --probe memory`` and ``--probe tracemalloc``.

``breakdown(pid)`` sums ``/proc/PID/smaps`` by kind of mapping (its RSS, PSS and anonymous
pages): the brk heap (glibc's main malloc arena, and pymalloc's arenas that fit there),
anonymous mappings (other malloc arenas, a thread's own, pymalloc's 1 MB arenas, large
blocks, thread stacks), the response cache's SQLite files (``cache.db``, ``-wal``,
``-shm``: what SQLite's memory map brings in), the interpreter's and extensions' shared
objects, other files, and the main stack. Loaded with ``-p mem_probe`` (``--probe
tracemalloc``, with ``PYTHONTRACEMALLOC`` set), each process writes the allocations it holds
at its session's finish (a worker: after its last item; the controller: before its final
reports), the largest by source line, to ``MEM_PROBE_DIR``.
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


if pytest is not None:
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(session: Any) -> None:
        worker = getattr(session.config, "workerinput", None)
        _write_top(worker["workerid"] if worker else "controller")


def print_traced(folder: str) -> None:
    """The controller's and the first worker's top allocations (``--probe tracemalloc``)."""
    names = sorted(os.listdir(folder))
    for name in [n for n in names if n == "controller.json"] + [
            n for n in names if n.startswith("gw")][:2]:
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
