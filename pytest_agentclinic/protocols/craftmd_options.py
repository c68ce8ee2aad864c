"""The options of a CRAFT-MD item: none for free response, the case's four for the MCQ, and
for the many-choice MCQ the case's diagnosis among other diagnoses of its specialty.

The order is a hash of the case and the name, so every run and every worker asks the same
options in the same order (a cached reply stays valid).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..core.case import Case


def specialty_pools(cases: Sequence[Case]) -> dict[str, tuple[str, ...]]:
    """Every diagnosis and option seen in each specialty: the many-choice distractors."""
    pools: dict[str, dict[str, None]] = {}
    for case in cases:
        names = pools.setdefault(case.specialty, {})
        names.update(dict.fromkeys([case.diagnosis, *case.choices]))
    return {k: tuple(v) for k, v in pools.items()}


def item_options(case: Case, answer: str, by_specialty: dict[str, tuple[str, ...]],
             size: int) -> tuple[str, ...] | None:
    """The options of an item: () for free response, None when the item cannot be asked."""
    if answer == "frq":
        return ()
    if answer == "mcq":
        return tuple(case.choices) if case.diagnosis in case.choices else None
    others = [n for n in by_specialty.get(case.specialty, ())
              if n.lower() != case.diagnosis.lower()]
    # A deterministic, case-specific order: the same options on every run and worker.
    others.sort(key=lambda n: hashlib.sha256(f"{case.id}|{n}".encode()).hexdigest())
    options = sorted([case.diagnosis, *others[: size - 1]],
                     key=lambda n: hashlib.sha256(f"{case.id}|order|{n}".encode()).hexdigest())
    return tuple(options) if len(options) > 1 else None
