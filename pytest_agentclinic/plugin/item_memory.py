"""What an encounter's item and its reports hold after they are logged, let go of.

pytest keeps every item and report to the end of the session for its summary; an encounter's
carry its record (on its way to the controller and the JUnit file), its keywords and, on an
xdist worker, a terminal reporter's copy no one reads. These hooks drop those once every
plugin has seen them, freeze the heap collection leaves, and hand the C library's malloc's
free pages back to the system, so that memory per item stays what the summary needs (issue
37). Registered in every process of a run that collects cases.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Generator, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import pytest

from .item import RECORD_PROPERTY, EncounterItem, without_record

#: The fields of a worker's report whose values repeat from item to item (the file's path in
#: its ``location`` too).
_REPEATED = ("outcome", "when", "worker_id", "testrun_uid")
#: What a logged report of an encounter keeps of its item's keywords: nothing (see
#: :meth:`ReleaseReported.pytest_runtest_logreport`).
_NO_KEYWORDS: Mapping[str, Any] = MappingProxyType({})


class ReleaseReported:
    """Drops what an item and its reports carried only to be reported, once they are logged.

    The record's property carries the record from a worker to the controller and into the
    JUnit file, which takes it when the teardown report is logged; pytest keeps every report
    (and item) for its summary. Registered in every process.
    """

    def __init__(self) -> None:
        #: The encounter item this process is running, whose reports are being logged.
        self._running: str | None = None
        #: Whether this process is an xdist worker (set at configuration).
        self._worker = False
        #: This process's terminal reporter's reports by category (see :meth:`_forget`).
        self._stats: dict[str, list[Any]] | None = None
        self._config: pytest.Config | None = None
        #: One string for each value of the reports' repeated fields (see _share_texts).
        self._texts: dict[str, str] = {}

    def pytest_configure(self, config: pytest.Config) -> None:
        self._config = config
        self._worker = hasattr(config, "workerinput")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        """The report's copy of the record, once every plugin has seen the report; and, for
        an encounter's report, its copy of the item's keywords (~1 KB an item over its three
        reports; no one reads a report's keywords once it is logged, the item keeps its own).
        """
        try:
            return (yield)
        finally:
            if any(name == RECORD_PROPERTY for name, _ in report.user_properties):
                # A new list rather than the old one emptied: should a report share its
                # item's list, the item's later reports still need the record.
                report.user_properties = without_record(report.user_properties)
            # The process playing the item knows it; xdist's controller, which plays none,
            # knows an encounter's report by its case file.
            if report.nodeid == self._running:
                report.keywords = _NO_KEYWORDS
                self._forget(report)
            elif self._running is None and not self._worker and _is_case_nodeid(report.nodeid):
                report.keywords = _NO_KEYWORDS
                self._forget(report)
                self._share_texts(report)

    def _share_texts(self, report: pytest.TestReport) -> None:
        """One string for each value of a worker's report's fields that repeat from item to
        item: xdist's controller decodes every string of every report anew, and pytest
        keeps each passed call's report to the end (~0.3 KB of its ~1.4 KB)."""
        fields, texts = report.__dict__, self._texts
        for name in _REPEATED:
            value = fields.get(name)
            if type(value) is str:
                fields[name] = texts.setdefault(value, value)
        location = fields.get("location")
        if type(location) is tuple and location and type(location[0]) is str:
            fields["location"] = (texts.setdefault(location[0], location[0]), *location[1:])

    def _forget(self, report: pytest.TestReport) -> None:
        """The terminal reporter's copy of an encounter's report, where no summary reads it.

        An xdist worker's terminal reporter keeps every report for a summary no one sees (the
        controller shows the run's, from the reports the worker sent it): ~3 KB an encounter
        over its three reports, in each worker for the whole run. Every other process keeps
        the reports of passed setups and teardowns (``""``, two an item, ~1.5 KB each in
        xdist's controller: 30 MB at 10,000 encounters) for one use only, printing a
        teardown's captured output: one without any is let go. The report is the last of
        its category's list."""
        stats = self._terminal_stats()
        if self._worker:
            for reports in stats.values():
                if reports and reports[-1] is report:
                    reports.pop()
                    return
        elif report.passed and report.when != "call" and not report.sections:
            reports = stats.get("", [])
            if reports and reports[-1] is report:
                reports.pop()

    def _terminal_stats(self) -> dict[str, list[Any]]:
        if self._stats is None and self._config is not None:
            reporter = self._config.pluginmanager.getplugin("terminalreporter")
            self._stats = getattr(reporter, "stats", None)
        return self._stats if self._stats is not None else {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        """The item's own state, once its last report is logged."""
        self._running = item.nodeid if isinstance(item, EncounterItem) else None
        try:
            return (yield)
        finally:
            self._running = None
            if isinstance(item, EncounterItem):
                item.release()


def _is_case_nodeid(nodeid: str) -> bool:
    """Whether ``nodeid`` is an item of a case file (a suffix a case format reads)."""
    from ..cases import formats

    return nodeid.split("::", 1)[0].endswith(formats.suffixes())


class FreezeCollected:
    """Moves what exists once the items are collected (the imported code, the items) out of
    the cyclic garbage collector's sight: it lives to the end of the run, and every full
    collection would walk it again (100,000 objects and more; pytest runs one at exit, and
    the run's own allocations trigger more). Registered in every process of a run that
    collects cases: the garbage of what is frozen is never collected, and there is none
    that matters (a module's objects, items the session holds to its end)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Freeze the heap as collection leaves it."""
        del session
        # What collection made and let go of is freed first, not frozen: the young
        # generations hold it (~5 ms). A full collection walked the whole heap to free
        # ~30 more objects of the start: 25-45 ms of every process's collection.
        gc.collect(1)
        gc.freeze()


#: glibc's ``mallopt`` parameter for the most malloc arenas a process makes (``M_ARENA_MAX``
#: in malloc.h).
_M_ARENA_MAX = -8
#: The malloc arenas a process of the run makes at most (see :class:`ReturnFreedMemory`).
ARENAS = 1
#: What glibc reads that limit from when a process starts (see :mod:`.worker_arenas`).
ARENA_ENV = "MALLOC_ARENA_MAX"
#: In a worker's ``workerinput``: its controller started it with :data:`ARENA_ENV` set.
ARENAS_SET_KEY = "agentclinic_arenas_set"
#: glibc's ``mallopt`` parameter for the size from which a block is mapped on its own
#: (``M_MMAP_THRESHOLD``), and the size a process of the run keeps it at: glibc's default.
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024
#: What glibc reads that size from when a process starts (then it is left as it is).
MMAP_ENV = "MALLOC_MMAP_THRESHOLD_"
#: Items this process reports between two trims of the heap.
TRIM_EVERY = 100


class _Malloc(Protocol):
    def mallopt(self, param: int, value: int) -> int: ...

    def malloc_trim(self, pad: int) -> int: ...


def is_glibc() -> bool:
    """Whether the C library is glibc (musl, macOS and Windows have neither its arenas nor
    their controls)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def glibc_malloc() -> _Malloc | None:
    """The C library's malloc controls where it is glibc (None elsewhere: musl, macOS,
    Windows, where neither call exists or means the same)."""
    if not is_glibc():
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        if not (hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim")):
            return None
    except OSError:
        return None
    return libc


class ReturnFreedMemory:
    """Keeps glibc's malloc from holding the pages Python has freed (issue 37).

    glibc gives each thread that allocates while another holds an arena an arena of its
    own (up to eight per core), and keeps freed pages in every arena for later: an xdist
    worker's encounter loop, cache writer and execnet threads each had one, ~12 MB a worker
    of mostly free pages at 2,000 encounters. Each process that plays encounters (an xdist
    worker, or a run without xdist) keeps to :data:`ARENAS` arena (unless the environment
    sets ``MALLOC_ARENA_MAX``; threads that start later share it; an xdist worker is
    started with the limit, see :mod:`.worker_arenas`) and trims its heap once
    collected and every :data:`TRIM_EVERY` items (``malloc_trim``: a few milliseconds, the
    GIL released), handing free pages back. Nothing is done where the C library is not
    glibc.
    """

    def __init__(self, malloc: _Malloc | None = None) -> None:
        self._malloc = malloc
        self._reported = 0
        #: How many times this process's heap was trimmed.
        self.trims = 0

    def pytest_configure(self, config: pytest.Config) -> None:
        """Limit the arenas (registered before the session, so before the run's threads
        start: the grader's warm-up, the encounter loop, the cache's writer, xdist's).
        xdist's controller plays no encounter: it is left as it is (its threads are
        execnet's; limiting them saved it nothing measurable, 129 -> 128 MB at 10,000)."""
        if getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput"):
            self._malloc = None
            return
        if self._malloc is None:
            self._malloc = glibc_malloc()
        if getattr(config, "workerinput", {}).get(ARENAS_SET_KEY):
            # Read at this worker's start (its controller set it: see .worker_arenas), so
            # no subprocess of its tests inherits it.
            os.environ.pop(ARENA_ENV, None)
        elif self._malloc is not None and ARENA_ENV not in os.environ:
            self._malloc.mallopt(_M_ARENA_MAX, ARENAS)
        if self._malloc is not None and MMAP_ENV not in os.environ:
            # glibc raises the threshold to each larger mapped block freed (up to 32 MB):
            # once collection had freed the parse cache's text (~5 MB at 10,000 cases),
            # blocks up to that size came from the heap, and a worker's first encounters
            # (the grader's tables, SQLite's pages) held ~6 MB more there until the next
            # trim, the run's peak. Kept at the default, a large block is its own mapping,
            # handed back when freed.
            self._malloc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_finish(self, session: pytest.Session) -> Generator[None, None, None]:
        """What collection freed, once every plugin has seen the items (after
        :class:`FreezeCollected` freed collection's garbage)."""
        del session
        try:
            return (yield)
        finally:
            self._trim()

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        """Every :data:`TRIM_EVERY` items this process reports."""
        del nodeid, location
        self._reported += 1
        if self._reported % TRIM_EVERY == 0:
            self._trim()

    def _trim(self) -> None:
        if self._malloc is not None:
            self._malloc.malloc_trim(0)
            self.trims += 1
