"""Under xdist, each worker makes the items of its share of the cases only.

Every xdist worker used to collect every item of the run: 10,000 encounters cost each of 8
workers ~1.3 s of CPU and ~130 MB before xdist sent the first item (it waits for every
worker's collection). When the controller splits the run (:mod:`.xdist_split` says when and
schedules it), it tells each worker its share, ``(index, count)``; the worker deals the run's
cases round-robin in collection order, the same on every worker (one parse, one order), and
makes items of its own cases only: all items of a case on one worker (its variants, a
CRAFT-MD conversation's experiments). The user's other tests are collected by every worker,
as ever. Dealt by position, the shares differ by one case at most: the slowest share decides
when the run ends, since no worker can play another's cases.

xdist sends the first item once every worker's collection has reached the controller: the
first request waited for the slowest of eight interpreters to start. A worker of a split run
knows which items it will be sent first, its share's first cases in collection order (the
controller sends a node its own cases before anyone's tests: :mod:`.xdist_split`), so it
starts their encounters as soon as it has collected (:func:`first_encounters`); their items
take the results when they run. Only a worker dealt its share first does: a crashed worker's
replacement is sent what its share has left, which it cannot know.

A *lead* (:mod:`.xdist_stagger`: the first workers, set up while the controller holds the
others back) also tells the controller when it has started them (:func:`signal_started`),
and starts more of its share ahead: enough to keep its pace of calls busy while the held
workers start (:func:`lead_ahead`).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from ..cases.shard import shard_of
from ..core.threads import start_thread

#: The worker's share in xdist's ``workerinput``: ``[index, count]`` (0-based index).
SHARE_KEY = "agentclinic_share"
#: How many of its share's first encounters a worker starts once it has collected, before
#: its controller sends them (``workerinput``; absent: none).
START_AHEAD_KEY = "agentclinic_start_ahead"
#: A lead's part of the staggered start (``workerinput``; absent: not a lead):
#: ``[signal file, its calls per second or None, held workers per lead]``.
LEAD_KEY = "agentclinic_lead"
#: How often a lead looks whether its first call went out, and for how long at most.
SIGNAL_POLL_S = 0.005
SIGNAL_WAIT_S = 60.0


class WorkerShare:
    """Which cases this worker makes items of: every ``count``-th case from ``index``, in
    collection order, among the cases of the run's ``--agent-shard`` (another machine's
    cases are deselected there anyway: this worker need not make them)."""

    def __init__(self, index: int, count: int,
                 shard: tuple[int, int] | None = None) -> None:
        if not 0 <= index < count:
            raise ValueError(f"share {index} of {count}")
        self.index = index
        self.count = count
        self.shard = shard
        self._dealt = 0  # cases dealt so far, over the run's files in collection order

    @property
    def by_position(self) -> bool:
        """Whether the share goes by the cases' positions alone (no ``--agent-shard``): then
        :meth:`deal` chooses without the cases' names."""
        return self.shard is None

    def takes(self, dataset: str, case_id: str) -> bool:
        """Whether the next case of the run, ``case_id`` of ``dataset``, is this worker's."""
        if self.shard is not None and shard_of(dataset, case_id, self.shard[1]) != self.shard[0]:
            return False
        return self.deal()

    def deal(self) -> bool:
        """Whether the next case of the run's shard is this worker's."""
        mine = self._dealt % self.count == self.index
        self._dealt += 1
        return mine


_share_key = pytest.StashKey["WorkerShare | None"]()


def share_of(config: pytest.Config, shard: tuple[int, int] | None) -> WorkerShare | None:
    """This process's share of the cases (None: it makes every case's items)."""
    if _share_key not in config.stash:
        given = getattr(config, "workerinput", {}).get(SHARE_KEY)
        config.stash[_share_key] = (None if given is None
                                    else WorkerShare(int(given[0]), int(given[1]), shard))
    return config.stash[_share_key]


def first_encounters(config: pytest.Config, items: Sequence[pytest.Item],
                     is_encounter: Callable[[pytest.Item], bool]) -> list[pytest.Item]:
    """The encounter items this worker's controller will send it first, to start now: the
    first ``START_AHEAD_KEY`` encounter items of its collection (empty: not a worker told
    to start ahead)."""
    given = getattr(config, "workerinput", {})
    ahead = int(given.get(START_AHEAD_KEY, 0))
    lead = given.get(LEAD_KEY)
    if ahead > 0 and lead is not None:
        ahead = lead_ahead(ahead, lead[1], float(lead[2]), time.process_time())
    return list(itertools.islice(filter(is_encounter, items), ahead)) if ahead > 0 else []


def lead_ahead(ahead: int, calls_per_s: float | None, held_per_lead: float,
               start_cpu_s: float) -> int:
    """How many encounters a lead starts ahead: at least ``ahead`` (enough to fill its call
    slots), and enough to keep its pace (``calls_per_s``, its share of the run's RPM) busy
    until every held worker has collected and the controller sends items.

    The held workers start once the leads have started theirs, ``held_per_lead`` of them for
    each lead's core; each costs about what this lead's own start cost (``start_cpu_s``, its
    CPU to now, spent with a core to itself): they are done some ``start_cpu_s x
    held_per_lead`` seconds later. Every encounter makes at least one call, so one encounter
    per call of that time keeps the pace busy (more than enough when an encounter makes
    several: the extra ones are the lead's own next items, which it plays anyway)."""
    if calls_per_s is None:
        return ahead
    return max(ahead, math.ceil(calls_per_s * start_cpu_s * held_per_lead))


def signal_started(config: pytest.Config, ready: Callable[[], bool] | None = None) -> None:
    """A lead tells the controller, which holds the other workers' setup until its leads
    have, that it has started its first encounters: once ``ready()`` says their first model
    call went out (or an encounter ended: one played from the cache, or offline), from a
    thread that looks every :data:`SIGNAL_POLL_S`; at once when it started none. Until then
    the lead's first request's path (its encounter loop starting, the first agents and
    prompts) has the cores to itself. (The controller stops waiting after its own timeout
    and removes the folder: a later signal goes nowhere.)"""
    lead = getattr(config, "workerinput", {}).get(LEAD_KEY)
    if lead is None:
        return
    signal = Path(lead[0])
    if ready is None:
        _touch(signal)
        return

    def wait() -> None:
        deadline = time.monotonic() + SIGNAL_WAIT_S
        while not ready() and time.monotonic() < deadline:
            time.sleep(SIGNAL_POLL_S)
        _touch(signal)

    start_thread(wait, name="agentclinic-lead-signal")


def _touch(signal: Path) -> None:
    with contextlib.suppress(OSError):
        signal.touch()
