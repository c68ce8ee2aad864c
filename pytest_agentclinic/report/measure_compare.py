"""Paired comparison of two runs on the beyond-accuracy measures (``compare --measures``).

Pairs are those of the accuracy comparison (same case, sample and condition, errors
dropped), grouped by ``--by`` as accuracy is; each measure uses the pairs where both sides
have a value. The difference B - A of
the means gets a paired bootstrap 95% CI resampling cases and a two-sided bootstrap p, as
accuracy does; Holm's correction runs across the measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .beyond import MEASURES
from .comparison import Pair, bootstrap_p, holm
from .comparison import _pair_group as pair_group  # the accuracy comparison's own grouping
from .statistics import (
    GroupKey,
    check_fields,
    cluster_bootstrap,
    condition_names,
    group_rng,
    key_label,
    natural_key,
    per_case,
    percentile_ci,
)


@dataclass(frozen=True)
class MeasureDiff:
    """One measure's paired difference B - A."""

    group: str
    measure: str
    label: str
    percent: bool
    pairs: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_bootstrap: float | None
    p_holm: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)


def compare_measures(pairs: Sequence[Pair], by: Sequence[str] = (), n_resamples: int = 10_000,
                     seed: int = 0) -> list[MeasureDiff]:
    """Every measure's paired difference per group of ``by`` (then over all pairs when
    grouped); measures no pair of a group has are left out. Holm runs over one group's
    measures."""
    fields = check_fields(by, condition_names(r for pair in pairs for r in pair))
    groups: dict[GroupKey, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(pair_group(pair, fields), []).append(pair)
    keys = sorted(groups, key=lambda k: tuple(natural_key(v) for v in k)) if fields else []
    rows = [row for key in keys for row in _group(key_label(key), groups[key], n_resamples,
                                                   seed)]
    return rows + _group("all", pairs, n_resamples, seed)


def _group(label: str, pairs: Sequence[Pair], n_resamples: int,
           seed: int) -> list[MeasureDiff]:
    rows = []
    for m in MEASURES:
        values = [(ra.case_id, va, vb) for ra, rb in pairs
                  if (va := m.read(ra)) is not None and (vb := m.read(rb)) is not None]
        if not values:
            continue
        a = np.array([v for _, v, _ in values], float)
        b = np.array([v for _, _, v in values], float)
        diff = b - a
        observed = float(diff.mean())
        sums, counts = per_case([c for c, _, _ in values], diff)
        boot = cluster_bootstrap(sums, counts, n_resamples, group_rng(seed, (label, m.name)))
        low, high = percentile_ci(boot)
        p = bootstrap_p(boot, observed) if np.any(diff) else 1.0
        rows.append(MeasureDiff(label, m.name, m.label, m.percent, len(values), float(a.mean()),
                                float(b.mean()), observed, low, high, p))
    adjusted = holm([r.p_bootstrap or 1.0 for r in rows])
    return [MeasureDiff(**{**asdict(r), "p_holm": p}) for r, p in zip(rows, adjusted,
                                                                      strict=True)]


def format_measures(rows: Sequence[MeasureDiff]) -> str:
    """The comparison table of the measures."""
    from tabulate import tabulate

    def num(value: float | None, percent: bool, sign: bool = False) -> str:
        if value is None:
            return "-"
        return f"{value:{'+' if sign else ''}.{'1%' if percent else '2f'}}"

    body = [[r.group, r.label, r.pairs, num(r.mean_a, r.percent), num(r.mean_b, r.percent),
             num(r.difference, r.percent, True),
             f"({num(r.ci_low, r.percent, True)}, {num(r.ci_high, r.percent, True)})",
             "-" if r.p_bootstrap is None else f"{r.p_bootstrap:.4f}",
             "-" if r.p_holm is None else f"{r.p_holm:.4f}"] for r in rows]
    headers = ["group", "measure", "pairs", "mean A", "mean B", "B - A", "95% CI", "p boot",
               "Holm"]
    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)
