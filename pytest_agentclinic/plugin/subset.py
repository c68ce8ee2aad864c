"""Try it on a few cases first: ``--agent-limit N`` and ``--agent-sample N --agent-seed S``.

Both select *cases*, after ``-k``/``-m`` and the shard: every item of a chosen case (each
doctor model, budget, bias and repeat) stays, so a smoke run compares conditions on the same
cases. ``--agent-limit`` keeps the first N cases in collection order; ``--agent-sample``
keeps a random N stratified by specialty (each specialty's share of N follows its share of
the cases, by largest remainder), reproducible from the seed. Every xdist worker collects
the same items and so makes the same choice.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from .item import EncounterItem
from .settings import Subset

CaseKey = tuple[str, str]


def _key(item: EncounterItem) -> CaseKey:
    return item.case_key


def stratified(cases: dict[CaseKey, str], n: int, seed: int) -> set[CaseKey]:
    """``n`` of ``cases`` (key -> specialty) chosen at random within specialties."""
    if n >= len(cases):
        return set(cases)
    strata: dict[str, list[CaseKey]] = defaultdict(list)
    for key, specialty in cases.items():
        strata[specialty].append(key)
    quotas = {s: n * len(keys) / len(cases) for s, keys in strata.items()}
    counts = {s: int(q) for s, q in quotas.items()}
    # Largest remainder: the seats left go to the specialties closest to their next one.
    left = n - sum(counts.values())
    for s in sorted(quotas, key=lambda s: (counts[s] - quotas[s], s))[:left]:
        counts[s] += 1
    rng = random.Random(seed)
    chosen: set[CaseKey] = set()
    for s in sorted(strata):
        chosen.update(rng.sample(strata[s], counts[s]))
    return chosen


class SubsetPlugin:
    """Deselects the items of the cases a limited or sampled run leaves out."""

    def __init__(self, subset: Subset) -> None:
        self.subset = subset

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """Keep the chosen cases' items (runs after -k/-m and the shard)."""
        cases: dict[CaseKey, str] = {}
        for item in items:
            if isinstance(item, EncounterItem):
                cases.setdefault(_key(item), item.specialty)
        if self.subset.sample is not None:
            chosen = stratified(cases, self.subset.sample, self.subset.seed)
        else:
            chosen = set(list(cases)[: self.subset.limit])
        keep = [i for i in items if not isinstance(i, EncounterItem) or _key(i) in chosen]
        drop = [i for i in items if isinstance(i, EncounterItem) and _key(i) not in chosen]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
