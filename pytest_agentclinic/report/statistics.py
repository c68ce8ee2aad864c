"""Accuracy with case-clustered bootstrap intervals, and paired comparisons of two runs.

Pure functions over :class:`ResultRecord`. Errors (infrastructure failures) never count as
wrong answers: they are left out of every denominator and reported apart.

Items are not independent: the repeats of one case (``--agent-repeat``, CRAFT-MD trials) share
the case's difficulty. Every bootstrap here therefore resamples *cases*, carrying all of a
case's items together, so an interval does not shrink merely because a case was run 5 times.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..core.errors import InputError
from ..core.lazy import numpy as np  # imported on first use (core/lazy.py says why)
from ..core.records import ResultRecord
from .clustered import Z95, cluster_wilson

if TYPE_CHECKING:
    from numpy.typing import NDArray

    FloatArray = NDArray[np.float64]

GroupKey = tuple[str, ...]

#: What an item is besides its conditions: who played the doctor, and the case's specialty
#: and dataset.
_ITEM_FIELDS: Mapping[str, Callable[[ResultRecord], str]] = {
    "doctor": lambda r: r.models.get("doctor", "?"),
    "specialty": lambda r: r.specialty,
    "dataset": lambda r: r.dataset,
}


def _condition(name: str) -> Callable[[ResultRecord], str]:
    """Read condition ``name`` through the items' one accessor (``ItemHeader.condition``),
    as a protocol's own conditions are read: built-in and protocol conditions group alike."""
    return lambda r: r.condition(name)


#: How to read each built-in grouping field off a record (values are strings so tables can
#: print them): the item's fields, and every built-in condition through the one accessor.
#: A protocol's own conditions (MediQ's setting) are read the same way by
#: :func:`field_value`.
GROUP_FIELDS: Mapping[str, Callable[[ResultRecord], str]] = MappingProxyType({
    name: _ITEM_FIELDS.get(name) or _condition(name)
    # The order of --help and of the tables; a test keeps it to the item fields and
    # core.transcript.BUILTIN_CONDITIONS.
    for name in ("doctor", "patient", "bias", "specialty", "dataset", "turn_budget",
                 "experiment", "answer_format")})


def field_value(record: ResultRecord, name: str) -> str:
    """The record's value of ``name``: an item field, or a condition, built-in or a
    protocol's own (``-`` where the record has none), through one accessor."""
    get = _ITEM_FIELDS.get(name)
    return get(record) if get is not None else record.condition(name)


#: Label of the row over all records (an empty group key).
ALL = "all"
#: The bootstrap draws counts over kinds of cluster when each kind holds this many clusters
#: on average (a multinomial's draw of one kind costs what gathering ~30 clusters does).
_KINDS_PER_CLUSTER = 32
#: From this many clusters of many kinds, an interval is the normal one (see
#: :func:`ratio_interval`).
ANALYTIC_MIN = 1_000
#: Bootstrap index chunk size in elements: about 1 MB of int32, which keeps the gather in
#: cache; larger chunks measured slower, smaller ones pay Python overhead per chunk.
_CHUNK_ELEMENTS = 1 << 18


def check_fields(by: Sequence[str], extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Return ``by`` as a tuple; raise an InputError (a ValueError) naming the allowed fields
    on a bad one.
    ``extra``: the protocol conditions the records carry (:func:`condition_names`)."""
    allowed = (*GROUP_FIELDS, *(f for f in dict.fromkeys(extra) if f not in GROUP_FIELDS))
    bad = [f for f in by if f not in allowed]
    if bad:
        raise InputError(f"unknown group field(s) {', '.join(bad)}; "
                         f"choose from {', '.join(allowed)}")
    return tuple(by)


def condition_names(records: Iterable[ResultRecord]) -> tuple[str, ...]:
    """The names of the protocols' own conditions ``records`` carry (a MediQ setting)."""
    return tuple(dict.fromkeys(name for r in records for name in r.conditions))


def group_key(record: ResultRecord, by: Sequence[str]) -> GroupKey:
    """The record's values of the ``by`` fields (a protocol's own conditions included)."""
    return tuple(field_value(record, f) for f in by)


def key_label(key: GroupKey) -> str:
    """A printable label of a group key (``all`` for the empty key)."""
    return " / ".join(key) if key else ALL


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting ``case_2`` before ``case_10``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p)


# --- bootstrap core ------------------------------------------------------------------------

def group_rng(seed: int, key: GroupKey) -> np.random.Generator:
    """A generator seeded by ``seed`` and the group, so a group's interval is the same
    whichever other groups are in the table."""
    return np.random.default_rng([seed, zlib.crc32(key_label(key).encode("utf-8"))])


def cluster_bootstrap(num: FloatArray, den: FloatArray, n_resamples: int,
                      rng: np.random.Generator) -> FloatArray:
    """``sum(num[idx]) / sum(den[idx])`` for ``n_resamples`` resamples of cluster indices.

    ``num`` and ``den`` hold one value per cluster (case), e.g. correct items and items, so
    a resample carries whole cases. ``den`` must be positive everywhere.

    Clusters with equal ``(num, den)`` are interchangeable in a resample: drawing n clusters
    with replacement is drawing how many of each *kind* from a multinomial (n trials, each
    kind's share of the clusters). Where there are few kinds (a correct/incorrect verdict,
    a count of turns or tests: tens of kinds however many cases) that draw is made instead,
    ``n_resamples`` x kinds rather than ``n_resamples`` x cases: the same bootstrap
    distribution, at 10,000 cases a thousand times cheaper.
    """
    kinds, shares = cluster_kinds(num, den)
    if len(kinds) * _KINDS_PER_CLUSTER <= len(num):
        counts = rng.multinomial(len(num), shares, size=n_resamples).astype(np.float64)
        result: FloatArray = (counts @ kinds[:, 0]) / (counts @ kinds[:, 1])
        return result
    return _index_bootstrap(num, den, n_resamples, rng)


def cluster_kinds(num: FloatArray, den: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The distinct ``(num, den)`` pairs of the clusters, and the share of clusters of each."""
    kinds, counts = np.unique(np.column_stack([num, den]), axis=0, return_counts=True)
    return kinds.astype(np.float64), counts / counts.sum()


def ratio_interval(num: FloatArray, den: FloatArray, n_resamples: int,
                   rng: np.random.Generator) -> tuple[float, float]:
    """The 95% interval of ``sum(num) / sum(den)`` over clusters, chosen by the data.

    * few kinds of cluster (see :func:`cluster_bootstrap`): the percentile interval of the
      case-clustered bootstrap, drawn by counts;
    * many kinds and at least :data:`ANALYTIC_MIN` clusters (a continuous measure, e.g. a
      test spend, over thousands of cases): the normal interval of the ratio with its
      cluster-robust (linearised) standard error, which the bootstrap approximates at such
      n (the central limit theorem) at the cost of ``n_resamples`` x clusters;
    * otherwise the bootstrap, resampling cluster indices.
    """
    n = len(num)
    kinds, _shares = cluster_kinds(num, den)
    if len(kinds) * _KINDS_PER_CLUSTER > n and n >= ANALYTIC_MIN:
        return cluster_normal_interval(num, den)
    return percentile_ci(cluster_bootstrap(num, den, n_resamples, rng))


def cluster_normal_interval(num: FloatArray, den: FloatArray) -> tuple[float, float]:
    """``R +- z * se`` for the ratio ``R = sum(num) / sum(den)``: ``se`` is the cluster-robust
    standard error with the ``G / (G - 1)`` correction (the mean's ``s / sqrt(n)`` when every
    cluster holds one item; statsmodels' OLS on a constant with ``cov_type="cluster"``)."""
    n = len(num)
    total = float(den.sum())
    ratio = float(num.sum()) / total
    residual = num - ratio * den
    se = float(np.sqrt(n / (n - 1) * float(residual @ residual))) / total if n > 1 else 0.0
    return ratio - Z95 * se, ratio + Z95 * se


def _index_bootstrap(num: FloatArray, den: FloatArray, n_resamples: int,
                     rng: np.random.Generator) -> FloatArray:
    n = len(num)
    out = np.empty(n_resamples)
    chunk = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, size=(size, n), dtype=np.int32)
        out[start:start + size] = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    return out


def per_case(case_ids: Sequence[str], values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Sum of ``values`` and item count per case, in first-seen case order."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in case_ids), dtype=np.intp,
                        count=len(case_ids))
    sums = np.bincount(codes, weights=values, minlength=len(index)).astype(np.float64)
    counts = np.bincount(codes, minlength=len(index)).astype(np.float64)
    return sums, counts


def percentile_ci(samples: FloatArray) -> tuple[float, float]:
    """The 95% percentile interval."""
    low, high = np.quantile(samples, [0.025, 0.975])
    return float(low), float(high)


# --- accuracy table ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Row:
    """What every table row has: the grouping fields and this row's values of them."""

    by: tuple[str, ...]
    key: GroupKey

    @property
    def label(self) -> str:
        """The group's printable name."""
        return key_label(self.key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, with the group as ``{field: value}`` and its label."""
        data = asdict(self)
        # The all row has an empty key under a non-empty ``by``: its group is {}.
        data["group"] = dict(zip(self.by, self.key, strict=True)) if self.key else {}
        data["label"] = self.label
        return data


@dataclass(frozen=True)
class GroupRow(_Row):
    """Accuracy and resource use of one group; ``n`` counts judged items (errors apart)."""

    n: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    cases: int
    errors: int
    no_diagnosis: int
    mean_turns: float | None
    mean_tests: float | None
    #: Encounters stopped by a per-encounter budget (judged, never correct).
    limit: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: dict[str, float] = field(default_factory=dict)
    calls: int = 0
    cache_hits: int = 0


def accuracy_table(records: Iterable[ResultRecord], by: Sequence[str] = (),
                   n_resamples: int = 10_000, seed: int = 0) -> list[GroupRow]:
    """One row per group of ``by`` (one ``all`` row when ``by`` is empty), sorted by key.

    The 95% interval is a cluster-adjusted Wilson interval over cases (see
    :mod:`.clustered`): it never collapses at 0%, 100% or small n, and repeats of a case do
    not shrink it. ``n_resamples`` and ``seed`` are kept for callers' signatures (the
    interval no longer resamples).
    """
    fields = check_fields(by, condition_names(records))
    groups: dict[GroupKey, list[ResultRecord]] = {}
    for r in records:
        groups.setdefault(group_key(r, fields), []).append(r)
    del n_resamples, seed
    return [_group_row(fields, key, groups[key])
            for key in sorted(groups, key=lambda k: tuple(natural_key(v) for v in k))]


def _group_row(by: tuple[str, ...], key: GroupKey, rows: Sequence[ResultRecord]) -> GroupRow:
    judged = [r for r in rows if r.outcome != "error"]
    n = len(judged)
    correct = np.fromiter((r.outcome == "correct" for r in judged), dtype=np.float64, count=n)
    accuracy = ci_low = ci_high = None
    cases = 0
    if n:
        accuracy = float(correct.mean())
        sums, counts = per_case([r.case_id for r in judged], correct)
        cases = len(sums)
        ci_low, ci_high = cluster_wilson(sums, counts)
    tokens, cost, calls, hits = _usage(rows)
    return GroupRow(
        by=by, key=key, n=n, correct=int(correct.sum()), accuracy=accuracy,
        ci_low=ci_low, ci_high=ci_high, cases=cases, errors=len(rows) - n,
        no_diagnosis=sum(r.outcome == "no_diagnosis" for r in judged),
        limit=sum(r.outcome == "limit" for r in judged),
        mean_turns=sum(r.turns_used for r in judged) / n if n else None,
        mean_tests=sum(len(r.tests_requested) for r in judged) / n if n else None,
        tokens=tokens, cost_usd=cost, calls=calls, cache_hits=hits)


def _usage(rows: Sequence[ResultRecord]) -> tuple[dict[str, int], dict[str, float], int, int]:
    """Tokens and cost per role, calls and cache hits, over every record (errors included:
    a failed encounter still spent what it spent)."""
    tokens: Counter[str] = Counter()
    cost: dict[str, float] = {}
    calls = hits = 0
    for r in rows:
        for role, u in r.usage.items():
            tokens[role] += u.prompt_tokens + u.completion_tokens
            cost[role] = cost.get(role, 0.0) + u.cost_usd
            calls += u.calls
            hits += u.cache_hits
    return dict(sorted(tokens.items())), dict(sorted(cost.items())), calls, hits
