"""Hooks that exist only under pytest-xdist; registered only when xdist is installed."""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from ..cases import formats
from ..core.threads import start_thread
from .events import WORKER_KEY as EVENTS_KEY
from .session import CACHE_FILLED_KEY, AgentClinicSession
from .shares import SHARE_KEY, START_AHEAD_KEY
from .xdist_split import Shares, SplitScheduling, fix_counts, split_wanted
from .xdist_stagger import Stagger, cores, lead_calls_per_s

WORKER_KEY = "agentclinic_run_name"


class XdistHooks:
    """Hands the controller's run name to every worker so all write one run directory."""

    #: The workers that have finished (or crashed).
    down = 0

    def __init__(self, state: AgentClinicSession) -> None:
        self.state = state
        #: Whether the cases are split between the workers (see :mod:`.xdist_split`).
        self.split = split_wanted(state.config, state.settings.subset.description is not None)
        #: The split run's shares, dealt as the workers are set up.
        self.shares: Shares | None = None
        #: The split run's staggered start (see :mod:`.xdist_stagger`).
        self.stagger: Stagger | None = None
        self.session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_KEY] = self.state.run_name
        node.workerinput[CACHE_FILLED_KEY] = self.state.cache_filled
        if self.split:
            if self.shares is None:
                workers = int(node.workerinput["workercount"])
                self.shares = Shares(workers)
                leads = min(cores(), workers)
                self.stagger = Stagger(workers, leads, lead_calls_per_s(
                    self.state.settings, workers, leads))
            share = self.shares.assign(node)
            if share is not None:
                node.workerinput[SHARE_KEY] = share
                if not self.shares.replacing:  # what SplitScheduling sends a node first
                    node.workerinput[START_AHEAD_KEY] = max(self.state.settings.concurrency, 2)
                    assert self.stagger is not None  # made with the shares
                    self.stagger.configure(node, share[0])

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        del error
        # The worker's run-level events (plugin.events), sent with its last word.
        self.state.events.add_json(getattr(node, "workeroutput", {}).get(EVENTS_KEY))
        if self.shares is not None:
            self.shares.release(node)
        self.down += 1
        if (self.state.reports is not None and self.shares is not None
                and self.down == leaving_point(self.shares.count)):
            # A split run's workers finish over seconds: once half have, the tree is past
            # its peak (other modes' workers end together: their session's finish does it).
            self.state.reports.workers_leaving()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        # Every node collects the same items; the first to finish tells the plan (a split
        # run's plan is the union: see _collected).
        if not self.split:
            self._collected(ids)

    def _collected(self, ids: Sequence[str]) -> None:
        self.state.start_run(sum(map(_is_case_item, ids)))
        warm_report_imports()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.stagger is not None:
            self.stagger.close()  # a run that ended while it held its workers
        if self.state.is_worker:
            # What the worker wrote outside its tests goes where it would have gone.
            capture = config.pluginmanager.getplugin("capturemanager")
            if capture is not None:
                with contextlib.suppress(Exception):
                    capture.stop_global_capturing()
            exit_without_teardown()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        settings = self.state.settings
        if self.split:
            return SplitScheduling(config, log, settings.concurrency, _is_case_item,
                                   self._split_collected)
        if config.getvalue("dist") != "load":
            return None  # the user chose a distribution mode: keep it
        chains = self.state.protocol.items_per_chain(settings.options) > 1
        return _encounter_scheduling(config, log, settings.concurrency, chains)


    def _split_collected(self, ids: list[str]) -> None:
        """The union of a split run's collections: the plan, and the counts shown."""
        fix_counts(self.state.config, self.session, len(ids))
        status = self.state.config.pluginmanager.getplugin("agentclinic-status-line")
        if status is not None:
            status.total = sum(map(_is_case_item, ids))
        self._collected(ids)


def leaving_point(workers: int) -> int:
    """How many of a split run's ``workers`` must have finished before the controller
    parses the records it holds and warms the final tables (numpy, ~12.5 MB; the records
    ~2 KB each once parsed, 20 MB at 10,000): half of them, two at least. At the first, the
    worker that had finished was still exiting and seven held their items, so the
    controller's growth was the run's peak (+16 MB at 10,000 encounters with ``-n 8``)."""
    return max(2, (workers + 1) // 2)


_warming: list[threading.Thread] = []


def warm_report_imports() -> None:
    """While the workers play and the controller is idle, in a thread, once: freeze the
    heap (``gc.freeze``) as the workers do once they have collected. The end phase, from
    the last answer to exit, then pays no full collections walking every imported object
    (the final reports' allocations trigger them; pytest runs one more at exit). numpy,
    which the final reports compute with, waits for half the workers to finish
    (:func:`leaving_point`, ``FinalReports.workers_leaving``): imported now, it added
    ~12.5 MB to the controller while every worker held its items, the process tree's
    peak."""
    if not _warming:
        _warming.append(start_thread(_warm, name="agentclinic-warm-reports"))


def _warm() -> None:
    gc.collect()
    gc.freeze()


def exit_without_teardown() -> None:
    """End this worker process now, once it has unconfigured, without the interpreter's
    teardown and without waiting for xdist to let it go.

    A worker holds every item of the run (10,000 encounters: ~130 MB of objects); freeing
    them one by one at exit took 8 workers 7-10 s on two busy cores, while the controller
    waited for them to write its reports (xdist kills a worker still there after 10 s).
    Waiting for the controller's word to go cost another 1-2.5 s on a loaded machine: the
    controller sends it only once its own loop has seen every worker finish, and each
    worker then needs the CPU to wake and leave. The run is over by then: the worker has
    sent xdist its last report and "finished" (a closed connection after that is no error),
    records, transcripts and the cache are closed, every plugin has unconfigured. What
    pytest would still do is clean up for a process that ends (a garbage collection that
    only reports leaks, restoring hooks and warning filters). The exit handlers registered
    so far still run, then the process ends (``os._exit``) with its output flushed.
    """
    atexit._run_exitfuncs()  # everyone's handlers, as they would have run
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            stream.flush()  # type: ignore[union-attr]
    os._exit(0)


def _is_case_item(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0].endswith(formats.suffixes())


def case_of(nodeid: str) -> str:
    """The case an item plays (``c.yaml::t-01`` of ``c.yaml::t-01[...]``); any other test
    is its own."""
    if _is_case_item(nodeid) and nodeid.endswith("]"):
        return nodeid.rsplit("[", 1)[0]
    return nodeid


def _encounter_scheduling(config: pytest.Config, log: Any, depth: int, chains: bool) -> Any:
    """xdist's load scheduling, but with ``depth`` items queued on each worker when the run
    holds encounters: a worker runs its queue concurrently, and xdist's default of a few
    items at a time would leave it one or two encounters in flight.

    With ``chains`` (a protocol whose items share a chain of model calls, e.g. a CRAFT-MD
    case's experiments one conversation) a case's items all go to one worker: split over
    two, each worker played the conversation again (twice the calls, and with a sampling
    model the experiments of one case rested on different conversations).
    """
    from xdist.scheduler import LoadScheduling

    class EncounterScheduling(LoadScheduling):  # type: ignore[misc]
        deep = False
        #: Each collected item's case, by index (``chains`` only; built on the first send).
        case_at: list[str] | None = None

        def _send_tests(self, node: Any, num: int) -> None:
            if chains and self.collection:
                if self.case_at is None:
                    # The first send, with every item pending: put each case's items next
                    # to each other (cases in their first item's order, items in theirs).
                    cases = self.case_at = [case_of(nodeid) for nodeid in self.collection]
                    first: dict[str, int] = {}
                    for index in self.pending:
                        first.setdefault(cases[index], index)
                    self.pending.sort(key=lambda index: first[cases[index]])
                # Never split a case: the batch runs to the end of its last case.
                pending, case_at = self.pending, self.case_at
                if 0 < num < len(pending):
                    last = case_at[pending[num - 1]]
                    while num < len(pending) and case_at[pending[num]] == last:
                        num += 1
            super()._send_tests(node, num)

        def schedule(self) -> None:
            first = self.collection is None
            super().schedule()
            if first and self.collection and any(map(_is_case_item, self.collection)):
                self.deep = True
                for node in self.nodes:
                    self.check_schedule(node)

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            if not self.deep or node.shutting_down:
                super().check_schedule(node, duration)
            elif self.pending:
                # A worker runs an item only once it holds the next one (pytest's
                # ``nextitem``): with one item queued it would wait for ever.
                missing = max(depth, 2) - len(self.node2pending[node])
                if missing > 0:
                    self._send_tests(node, min(missing, len(self.pending)))
            else:
                node.shutdown()

    return EncounterScheduling(config, log)


def worker_lookahead(config: pytest.Config) -> Any:
    """A lookahead over the worker's pending queue, so a worker runs its items concurrently.

    xdist gives a worker its items in batches; the queue is internal to xdist, so any change
    there degrades to running the current item only (still correct, just less concurrent).
    """
    interactor = next((p for p in config.pluginmanager.get_plugins()
                       if type(p).__name__ == "WorkerInteractor"), None)

    def lookahead(session: pytest.Session, item: pytest.Item) -> Sequence[pytest.Item]:
        try:
            with interactor.torun.lock() as queue:  # type: ignore[union-attr]
                pending = [i for i in queue if isinstance(i, int)]
            following = interactor.nextitem_index  # type: ignore[union-attr]
        except AttributeError:
            return [item]
        indices = ([following] if isinstance(following, int) else []) + pending
        return [item, *(session.items[i] for i in indices)]

    return lookahead
