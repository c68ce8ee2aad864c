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
"""

from __future__ import annotations

import pytest

from ..cases.shard import shard_of

#: The worker's share in xdist's ``workerinput``: ``[index, count]`` (0-based index).
SHARE_KEY = "agentclinic_share"


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

    def takes(self, dataset: str, case_id: str) -> bool:
        """Whether the next case of the run, ``case_id`` of ``dataset``, is this worker's."""
        if self.shard is not None and shard_of(dataset, case_id, self.shard[1]) != self.shard[0]:
            return False
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
