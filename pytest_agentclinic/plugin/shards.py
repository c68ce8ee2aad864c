"""``--agent-shard K/N``: keeps the items of the cases that hash to shard K (see
:func:`~.cases.shard.shard_of`); ``agentclinic merge`` joins the shards' runs."""

from __future__ import annotations

import pytest

from ..cases.shard import shard_of
from .item import EncounterItem


class ShardFilter:
    """Deselects the items of the cases other shards play."""

    def __init__(self, shard: tuple[int, int]) -> None:
        self.shard = shard

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """Keep this shard's cases (after ``-k``/``-m``, so every machine selects alike)."""
        index, count = self.shard
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            mine = not isinstance(item, EncounterItem) or shard_of(
                *item.case_key, count) == index
            (keep if mine else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
