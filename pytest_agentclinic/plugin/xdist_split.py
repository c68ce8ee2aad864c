"""A run split between xdist's workers: each worker collects its share of the cases
(:mod:`.shares`), and the controller schedules collections that differ.

xdist's own schedulers require every worker to collect the same items. Here an item every
worker collected (the user's ordinary tests) is load-balanced as xdist does, whole
``xdist_group`` groups at a time under ``--dist loadgroup``; an item one worker collected (a
case of its share) runs on that worker. Any other difference is xdist's "different tests
collected" error. The run's count is the union of the collections.

The controller splits a run under ``--dist load`` or ``loadgroup`` only (the other modes keep
every worker collecting everything), and not when a plugin selects among all the run's items
on each worker (``--lf``/``--ff``, ``--sw``: each worker would judge its share alone;
``--agent-limit``/``--agent-sample``: they choose among all cases). A run that collects no
case file installs none of this (the plugin's xdist hooks exist only in a run of cases).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from .shares import SHARE_KEY

#: pytest's options under which a worker's plugins choose among all the run's items.
_WHOLE_RUN_OPTIONS = ("lf", "failedfirst", "stepwise", "stepwise_skip")


def split_wanted(config: pytest.Config, subset: bool) -> bool:
    """Whether the controller of this run splits the cases between its workers."""
    if hasattr(config, "workerinput") or config.getvalue("dist") not in ("load", "loadgroup"):
        return False
    return not subset and not any(getattr(config.option, name, False)
                                  for name in _WHOLE_RUN_OPTIONS)


class Shares:
    """The controller's dealing of shares to worker nodes: the first ones in order, and a
    crashed worker's replacement (xdist gives it a new id) the share it played."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._held: dict[int, Any] = {}  # share -> the node playing it
        self._dealt: set[int] = set()  # shares dealt once: a node for them is a replacement
        #: Whether the share :meth:`assign` dealt last had been played by a node now gone.
        self.replacing = False

    def assign(self, node: Any) -> list[int] | None:
        """The share for a new ``node`` (its ``workerinput``'s :data:`~.shares.SHARE_KEY`);
        None when every share is held (the node then collects everything, and runs
        everyone's tests only)."""
        free = next((i for i in range(self.count) if i not in self._held), None)
        if free is None:
            return None
        self._held[free] = node
        self.replacing = free in self._dealt
        self._dealt.add(free)
        return [free, self.count]

    def release(self, node: Any) -> None:
        """``node`` is down: its share goes to the next node set up."""
        for index, held in list(self._held.items()):
            if held is node:
                del self._held[index]


def _share(node: Any) -> int:
    return int(node.workerinput[SHARE_KEY][0]) if SHARE_KEY in node.workerinput else -1


class SplitScheduling:
    """xdist's scheduler (its ``Scheduling`` protocol) for collections that differ by the
    workers' shares of the cases.

    ``depth``: items kept queued on a worker while it plays cases (it plays its queue
    concurrently; see ``xdist_hooks._encounter_scheduling``). ``is_case``: whether a node id is
    a case's item. ``on_collected``: told the union of the collections once every node has
    collected (and again when a crashed node's replacement has: xdist then resets the count).
    """

    def __init__(self, config: pytest.Config, log: Any, depth: int,
                 is_case: Callable[[str], bool],
                 on_collected: Callable[[list[str]], None]) -> None:
        from xdist.workermanage import parse_tx_spec_config

        self.numnodes = len(parse_tx_spec_config(config))
        self.config = config
        self.log = log.splitsched if log is not None else (lambda *args: None)
        self.depth = max(depth, 2)
        self.is_case = is_case
        self.on_collected = on_collected
        self.node2collection: dict[Any, list[str]] = {}
        self.node2pending: dict[Any, list[int]] = {}
        self._index: dict[Any, dict[str, int]] = {}
        #: The union of the collections (None until every node has collected).
        self.collection: list[str] | None = None
        self._aborted = False
        #: Items every node collected, as units sent whole (an ``xdist_group`` group).
        self._shared: deque[list[str]] = deque()
        #: Each share's items not yet sent (a case item runs on its share's node only).
        self._owned: dict[int, deque[str]] = {}
        #: The share of each item one node collected.
        self._owner: dict[str, int] = {}
        self._deep = False  # the run has cases: queue ``depth`` on each node
        self._scheduled = False
        self._groups = config.getvalue("dist") == "loadgroup"

    # -- the protocol's properties
    @property
    def nodes(self) -> list[Any]:
        """The nodes taking part."""
        return list(self.node2pending)

    @property
    def collection_is_completed(self) -> bool:
        """Every initial node has collected (the union is then built, once: xdist shows the
        count as soon as this holds)."""
        done = len(self.node2collection) >= self.numnodes
        if done and self.collection is None and not self._aborted:
            self._build()
        return done

    @property
    def tests_finished(self) -> bool:
        """Every item sent and all but the last of each node's run."""
        if not self.collection_is_completed:
            return False
        if self._aborted:
            return True
        if self._shared or any(self._owned.values()):
            return False
        return all(len(pending) < 2 for pending in self.node2pending.values())

    @property
    def has_pending(self) -> bool:
        """Items sent and not run, or to send once scheduling began (xdist shows the
        collection's count only while this is false)."""
        return self._scheduled and bool(self._shared or any(self._owned.values())
                    or any(self.node2pending.values()))

    # -- nodes and their collections
    def add_node(self, node: Any) -> None:
        """A node is up (it collects next)."""
        assert node not in self.node2pending
        self.node2pending[node] = []

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        """A node's collection: its share's cases and everyone's tests."""
        assert node in self.node2pending
        self.node2collection[node] = list(collection)
        self._index[node] = {nodeid: i for i, nodeid in enumerate(collection)}
        if self.collection is not None:  # a crashed node's replacement: the count stays
            self.on_collected(self.collection)

    def _build(self) -> None:
        """The union, which ids run anywhere and which on one share's node only; a difference
        the split does not explain is xdist's collection error."""
        collections = list(self.node2collection.items())
        holders: dict[str, int] = {}
        for _node, ids in collections:
            for nodeid in dict.fromkeys(ids):
                holders[nodeid] = holders.get(nodeid, 0) + 1
        everyone = len(collections)
        odd = [i for i, n in holders.items()
               if n != everyone and not (n == 1 and self.is_case(i))]
        if odd:
            self._abort(odd)
            return
        self.collection = list(holders)
        units: dict[str, list[str]] = {}
        for nodeid in collections[0][1]:
            if holders[nodeid] == everyone:
                units.setdefault(self._scope(nodeid), []).append(nodeid)
        self._shared.extend(units.values())
        if everyone > 1:  # one node alone has collected everything: all is everyone's
            for node, ids in collections:
                share = _share(node)
                mine = [i for i in ids if holders[i] == 1]
                self._owned.setdefault(share, deque()).extend(mine)
                self._owner.update(dict.fromkeys(mine, share))
        self._deep = any(map(self.is_case, self.collection))
        self.on_collected(self.collection)

    def _scope(self, nodeid: str) -> str:
        # What is sent whole: an xdist_group's tests under loadgroup (xdist suffixes their
        # ids with "@group"), otherwise the test. As xdist reads it: an "@" before the id's
        # last "]" is a parameter's ("user@host"), no group.
        if self._groups and nodeid.rfind("@") > nodeid.rfind("]"):
            return nodeid.rsplit("@", 1)[-1]
        return nodeid

    def _abort(self, odd: list[str]) -> None:
        """As xdist's schedulers do when collections differ: a collection error, no item run."""
        self._aborted = True
        shown = "\n".join(f"  {nodeid}" for nodeid in odd[:20])
        more = f"\n  ... and {len(odd) - 20} more" if len(odd) > 20 else ""
        message = (f"Different tests were collected between the workers, beyond their shares "
                   f"of the cases: {len(odd)} tests collected by some workers only:\n"
                   f"{shown}{more}")
        self.log(message)
        self.config.hook.pytest_collectreport(report=pytest.CollectReport(
            nodeid="", outcome="failed", longrepr=message, result=[]))

    # -- running
    def schedule(self) -> None:
        """Start (or, with nodes added, go on) sending items."""
        assert self.collection_is_completed
        if self.collection is None:
            return  # aborted: collections differ
        self._scheduled = True
        for node in self.nodes:
            self.check_schedule(node)

    def check_schedule(self, node: Any, duration: float = 0) -> None:
        """Top up ``node``'s queue from its share's items, then from everyone's; shut it down
        when nothing is left for it."""
        del duration
        if node.shutting_down or self.collection is None:
            return
        own = self._owned.get(_share(node))
        if not own and not self._shared:
            node.shutdown()
            return
        pending = self.node2pending[node]
        if self._deep:
            missing = self.depth - len(pending)
        else:  # xdist's load heuristics: fill to half a node's part when under a quarter
            left = sum(map(len, self._shared))
            low, high = (max(2, left // len(self.node2pending) // d) for d in (4, 2))
            missing = high - len(pending) if len(pending) < low else 0
        ids: list[str] = []
        while missing > len(ids) and own:
            ids.append(own.popleft())
        while missing > len(ids) and self._shared:
            ids.extend(self._shared.popleft())
        self._send(node, ids)

    def _send(self, node: Any, ids: list[str]) -> None:
        if ids:
            index = self._index[node]
            indices = [index[nodeid] for nodeid in ids]
            self.node2pending[node].extend(indices)
            node.send_runtest_some(indices)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        """A node ran an item."""
        self.node2pending[node].remove(item_index)
        self.check_schedule(node, duration)

    def mark_test_pending(self, item: str) -> None:
        """Run ``item`` again (a plugin's rerun of a crashed item)."""
        self._put_back([item])
        for node in self.nodes:
            self.check_schedule(node)

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        """Only work stealing takes items back; this scheduler steals none."""
        raise NotImplementedError

    def remove_node(self, node: Any) -> str | None:
        """A node is gone: what it had not run goes back (its share's items wait for its
        replacement); returns the item it crashed in, if any."""
        pending = self.node2pending.pop(node)
        if not pending:
            return None
        ids = [self.node2collection[node][i] for i in pending]
        self._put_back(ids[1:])
        for other in self.nodes:
            self.check_schedule(other)
        return ids[0]

    def _put_back(self, ids: list[str]) -> None:
        """Items sent but not run, first in line again: a share's with its share."""
        for nodeid in reversed(ids):
            share = self._owner.get(nodeid)
            if share is None:
                self._shared.appendleft([nodeid])
            else:
                self._owned.setdefault(share, deque()).appendleft(nodeid)


def fix_counts(config: pytest.Config, session: pytest.Session | None, total: int) -> None:
    """The run's count is the union's: pytest's (its exit status when nothing was collected)
    and xdist's "N workers [M items]" line, which takes the first worker's."""
    if session is not None:
        session.testscollected = total
    reporter = config.pluginmanager.getplugin("terminaldistreporter")
    with contextlib.suppress(AttributeError, TypeError, ValueError):
        status = reporter._status  # xdist's own record (no public way to set it)
        for key, (state, _count) in list(status.items()):
            status[key] = (state, total)
