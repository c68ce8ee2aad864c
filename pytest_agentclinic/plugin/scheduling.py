"""Which items a process starts ahead of the one pytest runs, and what warms up first."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from ..core.threads import start_thread
from .settings import Settings

#: How many windows of items (see :func:`window`) a process submits ahead of the item pytest
#: waits on. A finished encounter waits in the runner until its item takes it: with every
#: item submitted at once, the offline runner finished all 8,000 while pytest reported the
#: first 1,000, and held every transcript (~30 KB each). Four windows keep the slots full
#: unless one item takes as long as four windows' worth of its neighbours.
LEAD_WINDOWS = 4


class Ahead:
    """Without xdist a process runs its items in order: the items up to ``lead`` places
    after the current one are submitted, each once, half a lead at a time.

    The item is found from where the last one was: looking it up from the start for every
    item made scheduling O(n^2) (13 s at 8,000 items); this keeps it O(n).
    """

    def __init__(self, lead: int) -> None:
        self.lead = lead
        self._next = 0  # where the next item is expected
        self._end = 0  # the items before this index were handed out already

    def __call__(self, session: pytest.Session, item: pytest.Item) -> Sequence[pytest.Item]:
        items = session.items
        start = self._find(items, item)
        if start is None:
            return [item]  # not in the session's list (a plugin ran it): nothing to look at
        self._next = start + 1
        if self._end > start + self.lead // 2:
            return []  # enough are submitted ahead (the session submits the item itself)
        begin, self._end = max(start, self._end), start + 1 + self.lead
        return items[begin:self._end]

    def _find(self, items: Sequence[pytest.Item], item: pytest.Item) -> int | None:
        for guess in (self._next, self._next - 1):  # the next one, or the same one again
            if 0 <= guess < len(items) and items[guess] is item:
                return guess
        return next((i for i, it in enumerate(items) if it is item), None)


def window(settings: Settings, chain: int) -> int:
    """Items kept started: one per call slot, or 4 chains' worth per slot when items wait on
    shared chains of calls (a CRAFT-MD conversation is ~8 calls in a row: a slot's worth of
    conversations left the slots 46% busy)."""
    return settings.concurrency * (1 if chain <= 1 else 4 * chain)


def llm_models(settings: Settings) -> list[str]:
    models = (m.strip() for ms in settings.roles.values() for m in ms.split(","))
    return [m for m in models if m and m != "offline"]


def warm_grader() -> None:
    """Open the offline grader's terminology in a thread now: the first use on a machine
    builds its index (~2 s of CPU; the in-memory fallback takes as long in every process),
    which, left to the first verdict, ran on the runner's event loop with every call in
    flight stalled behind it. The encounters' model calls start meanwhile; grading waits for
    the load without blocking the loop (``grading.terms.concepts.terminology_loaded``)."""
    from ..grading.terms.concepts import default_terminology

    def load() -> None:
        # A failure here resurfaces, with its item, when grading loads the data again.
        with contextlib.suppress(Exception):
            default_terminology()

    start_thread(load, name="agentclinic-grader-warm-up")


def named_case_files(args: Sequence[str]) -> list[Path]:
    """The files of the command line that may hold cases: named, or at the top of a folder
    named (whether they do is decided by parsing them)."""
    from ..cases.loaders import has_case_suffix

    found: list[Path] = []
    for arg in args:
        # Absolute, as pytest hands files to the workers' collectors: a case's own paths
        # (its images) are read relative to the file, and the workers read this parse back.
        path = Path(arg.split("::", 1)[0]).absolute()
        with contextlib.suppress(OSError):
            if path.is_dir():
                found += sorted(Path(e.path) for e in os.scandir(path)
                                if e.is_file() and has_case_suffix(Path(e.path)))
            elif path.is_file() and has_case_suffix(path):
                found.append(path)
    return found


#: The named case files' total size from which :func:`parse_ahead` parses them in a process
#: of its own. Starting that process (an interpreter importing the package and pydantic)
#: costs ~0.25 s of CPU; a case file parses at ~0.15 s a MB (YAML; JSONL twice as fast), so
#: below a MB the worker parses in less time than the process takes to start, and every
#: ``-n N`` run of a small file paid ~0.25 s for nothing (measured: a 3-case file under
#: ``-n 2``, 2.12 -> 1.86 s of CPU for the run, medians of 6 interleaved pairs).
PARSE_AHEAD_BYTES = 1 << 20


def _total_size(files: Sequence[Path]) -> int:
    total = 0
    for path in files:
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


def parse_ahead(args: Sequence[str], cache_dir: Path) -> subprocess.Popen[bytes] | None:
    """Under xdist, parse the case files the command line names in a process of its own
    while the controller starts its workers (each spends a second or more importing): the
    first worker to collect then finds each file parsed, or its parse under way (it waits on
    the file's lock), rather than parsing it while the other workers wait (10,000 cases:
    ~1.5 s on the first request's path).

    A process, not a thread of the controller: parsing YAML holds the interpreter's lock,
    and the controller's thread that starts the workers (one after the other, each over a
    pipe) waited for it at every step; with a parse under way the last of 8 workers started
    1.5-4 s later on a loaded 2-core machine. Should the process fail (or not start), a
    worker parses the file itself, as without it. Nothing waits for it.

    Only for files worth it (:data:`PARSE_AHEAD_BYTES`): a small file parses in the first
    worker in a few ms, and the process would cost more than it saves."""
    files = named_case_files(args)
    if _total_size(files) < PARSE_AHEAD_BYTES:
        return None
    package = __name__.split(".", 1)[0]
    code = (f"import sys; from {package}.cases.parse_cache import load_all; "
            f"load_all(sys.argv[1:])")
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", code, str(cache_dir.absolute()), *map(str, files)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    # Reaped when it ends, whoever ends first (no zombie, no warning of a process left).
    start_thread(process.wait, name="agentclinic-parse-ahead")
    return process


def index_terminology(args: Sequence[str]) -> threading.Thread | None:
    """Build the offline grader's terminology index in a thread from the session's start,
    when the command line names case files (a file, or a folder holding some): a machine's
    first run otherwise built it on the first encounter's path (~1.75 s and 125 MB; the first
    verdict 1.2-3.6 s later under ``-n 8``). Under xdist this is the controller, before its
    workers start: they find the build under way, wait on its lock and open the file. Once
    built, this only checks the file (a few ms). Nothing waits for the thread; should it
    fail, grading builds or loads the terminology as before."""
    if not named_case_files(args):
        return None

    def build() -> None:
        from ..grading.terminology_cache import cache_dirs
        from ..grading.terminology_index import open_index
        from ..grading.terminology_table import DATA_FILE

        with contextlib.suppress(Exception):  # grading meets the failure again, if any
            for directory in cache_dirs() if DATA_FILE.exists() else []:
                if open_index(DATA_FILE, directory) is not None:
                    return

    return start_thread(build, name="agentclinic-terminology-index")
