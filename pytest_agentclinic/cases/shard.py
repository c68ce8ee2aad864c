"""Which shard of a many-machine run a case belongs to."""

from __future__ import annotations

import hashlib


def shard_of(dataset: str, case_id: str, shards: int) -> int:
    """The 1-based shard of case ``case_id`` of ``dataset`` among ``shards``.

    A hash of the case's identity, never of its position or of the item: every machine
    computes the same shard, whatever files it was given in whatever order, and every variant
    of a case (models, biases, budgets, repeats, CRAFT-MD experiments) lands in the same shard,
    so a case's shared conversation and the case-clustered statistics stay whole.
    """
    digest = hashlib.sha256(f"{dataset}\x1f{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards + 1
