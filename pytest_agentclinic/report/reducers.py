"""Reducers over K trials of a case: mean, pass@k, majority vote and all-k consistency.

With ``--agent-repeat K`` every case is played K times under each condition. One accuracy
hides what a release team asks of those trials, so each reducer turns a case's K verdicts
into one number per case, and the run's figure is the mean over cases:

* ``mean``: the share of trials right (the item accuracy), the default;
* ``pass@k``: the chance that at least one of k trials drawn from the case's n is right,
  by the unbiased estimator ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021); k is the
  smallest number of judged trials of any case in the cell, so every case is reduced alike;
* ``majority``: the case is right when more than half of its trials are (a tie is no
  majority: a coin toss is not a decision);
* ``all``: all-k consistency, the case is right only when every trial is.

Intervals are clustered by case: a reducer yields one value per case, and the interval is
a Wilson score interval over the cases (never over trials, which share the case's
difficulty); for ``mean`` it is the cluster-adjusted Wilson interval the other tables use.
Errors are left out of every reducer (they are no verdict), as everywhere in the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.lazy import numpy as np  # imported on first use (core/lazy.py says why)
from ..core.records import ResultRecord
from .clustered import cluster_wilson, wilson
from .reducer_names import REDUCERS as _NAMES

#: The reducers, in the order the report shows them; ``--agent-gate-reducer`` takes one.
REDUCERS = _NAMES


@dataclass(frozen=True)
class Reduced:
    """One reducer's figure over a set of cases."""

    reducer: str
    value: float
    ci: tuple[float, float]
    cases: int
    #: The k of pass@k and all-k (the smallest trial count of any case), else the trials.
    k: int


def trials_by_case(records: Sequence[ResultRecord]) -> dict[tuple[str, str], list[bool]]:
    """Each case's judged verdicts (correct or not), errors left out."""
    out: dict[tuple[str, str], list[bool]] = {}
    for r in records:
        if r.outcome != "error":
            out.setdefault((r.dataset, r.case_id), []).append(r.outcome == "correct")
    return out


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of a case with ``c`` right out of ``n`` trials (k <= n)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _per_case(reducer: str, trials: list[bool], k: int) -> float:
    n, c = len(trials), sum(trials)
    if reducer == "pass@k":
        return pass_at_k(n, c, k)
    if reducer == "majority":
        return float(c * 2 > n)
    if reducer == "all":
        return float(c == n)
    return c / n


def reduce(records: Sequence[ResultRecord], reducer: str) -> Reduced | None:
    """``reducer``'s figure over ``records`` (None when no item was judged)."""
    if reducer not in REDUCERS:
        raise ValueError(f"unknown reducer {reducer!r} (one of: {', '.join(REDUCERS)})")
    cases = trials_by_case(records)
    if not cases:
        return None
    k = min(len(t) for t in cases.values())
    if reducer == "mean":
        sums = np.array([sum(t) for t in cases.values()], dtype=np.float64)
        sizes = np.array([len(t) for t in cases.values()], dtype=np.float64)
        value = float(sums.sum() / sizes.sum())
        return Reduced(reducer, value, cluster_wilson(sums, sizes), len(cases), k)
    values = [_per_case(reducer, t, k) for t in cases.values()]
    value = sum(values) / len(values)
    return Reduced(reducer, value, wilson(value, len(values)), len(values), k)


def _group_key(r: ResultRecord) -> tuple[str, ...]:
    return (r.doctor, r.models.get("patient", "?"), r.bias, str(r.turn_budget),
            r.experiment or "", r.answer_format or "")


def _label(key: tuple[str, ...], varied: Sequence[int]) -> str:
    names = ("doctor", "patient", "bias", "turns", "experiment", "answer")
    extra = ", ".join(f"{names[i]}={key[i]}" for i in varied if i > 0)
    return f"{key[0]} ({extra})" if extra else key[0]


def reducer_table(records: Sequence[ResultRecord]
                  ) -> tuple[str, list[str], list[list[str]], list[dict[str, Any]], str] | None:
    """The reducers of every doctor model x condition, or None when the run has no repeats."""
    # Trials are repeats (``--agent-repeat``, CRAFT-MD's K): samples numbered past 0.
    if not any(r.sample > 0 for r in records):
        return None
    groups: dict[tuple[str, ...], list[ResultRecord]] = {}
    for r in records:
        groups.setdefault(_group_key(r), []).append(r)
    varied = [i for i in range(6) if len({key[i] for key in groups}) > 1]
    rows: list[list[str]] = []
    data: list[dict[str, Any]] = []
    for key in sorted(groups):
        reduced = [reduce(groups[key], name) for name in REDUCERS]
        if any(x is None for x in reduced):
            continue
        figures = [x for x in reduced if x is not None]
        rows.append([_label(key, varied), str(figures[0].cases), str(figures[1].k),
                     *(f"{x.value:.1%} [{x.ci[0]:.0%}, {x.ci[1]:.0%}]" for x in figures)])
        data.append({"group": _label(key, varied), "cases": figures[0].cases,
                     "k": figures[1].k,
                     **{x.reducer: {"value": x.value, "ci": list(x.ci)} for x in figures}})
    note = ("over K trials per case: mean = share of trials right; pass@k = unbiased chance "
            "that one of k trials is right; majority = more than half right; all = every "
            "trial right; 95% CI over cases (clustered by case)")
    headers = ["doctor (condition)", "cases", "k", "mean", "pass@k", "majority", "all-k"]
    return "accuracy over trials (reducers)", headers, rows, data, note
