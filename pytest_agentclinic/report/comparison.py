"""Paired comparison of two runs: paired bootstrap, exact McNemar, Holm-Bonferroni.

Items of run A and run B are paired by case, sample and condition; every bootstrap resamples
*cases* (see :mod:`.statistics`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.errors import InputError
from ..core.lazy import numpy as np  # imported on first use (core/lazy.py says why)
from ..core.records import ResultRecord
from ..core.transcript import BUILTIN_CONDITIONS
from .clustered import sign_flip_two_sided
from .statistics import (
    GroupKey,
    _Row,
    check_fields,
    cluster_bootstrap,
    condition_names,
    group_key,
    group_rng,
    natural_key,
    per_case,
    percentile_ci,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .statistics import FloatArray

# --- paired comparison ---------------------------------------------------------------------

#: The built-in conditions items of runs A and B pair on by default (with dataset, case and
#: sample): all but the patient model, so runs made with different patient models compare.
#: A protocol's own conditions pair by default too (:func:`pair_fields`); ``--pair-on``
#: picks any of them, e.g. to pair runs made with different turn budgets.
PAIRED_BY_DEFAULT = tuple(f for f in BUILTIN_CONDITIONS if f != "patient")

PairKey = tuple[str, ...]
Pair = tuple[ResultRecord, ResultRecord]


def pair_fields(records: Iterable[ResultRecord]) -> tuple[str, ...]:
    """The conditions items pair on by default: :data:`PAIRED_BY_DEFAULT`, then every
    protocol condition ``records`` carry (items under different ones are not repeats)."""
    return (*PAIRED_BY_DEFAULT, *condition_names(records))


def check_pair_fields(fields: Sequence[str],
                      records: Iterable[ResultRecord] = ()) -> tuple[str, ...]:
    """Return ``fields``; raise InputError naming the allowed ones on a bad one (any
    condition: a built-in one or a protocol's own that ``records`` carry)."""
    allowed = (*BUILTIN_CONDITIONS, *condition_names(records))
    bad = [f for f in fields if f not in allowed]
    if bad:
        raise InputError(f"--pair-on: unknown field(s) {', '.join(bad)}; choose from "
                         f"{', '.join(allowed)} (dataset, case and sample always pair)")
    return tuple(fields)


def pair_key(r: ResultRecord, on: Sequence[str]) -> PairKey:
    """Dataset, case, sample and the item's values of the ``on`` conditions."""
    return (r.dataset, r.case_id, str(r.sample), *(r.condition(f) for f in on))


@dataclass(frozen=True)
class Pairing:
    """The judged pairs of two runs, and what could not be paired."""

    pairs: list[Pair]
    only_a: int
    only_b: int
    #: Pairs dropped because either side is an error (no verdict to compare).
    errors: int
    #: Why items did not pair: one line per field whose values differ between the runs.
    why_unpaired: tuple[str, ...] = ()


def pair_records(a_records: Iterable[ResultRecord], b_records: Iterable[ResultRecord],
                 on: Sequence[str] | None = None) -> Pairing:
    """Pair the items of two runs by :func:`pair_key` over the ``on`` conditions (by
    default :func:`pair_fields` of both runs' records).

    Raises ValueError when a run holds one key twice (e.g. several doctors in one run),
    naming the field the duplicates differ in: such a pairing would be ambiguous.
    """
    a_list, b_list = list(a_records), list(b_records)
    on = pair_fields([*a_list, *b_list]) if on is None else on
    a, b = _index(a_list, "A", on), _index(b_list, "B", on)
    pairs: list[Pair] = []
    errors = 0
    for key, ra in a.items():
        rb = b.get(key)
        if rb is None:
            continue
        if "error" in (ra.outcome, rb.outcome):
            errors += 1
        else:
            pairs.append((ra, rb))
    common = len(pairs) + errors
    why = unpaired_reasons(a_list, b_list, on) if common < max(len(a), len(b)) else ()
    return Pairing(pairs, only_a=len(a) - common, only_b=len(b) - common, errors=errors,
                   why_unpaired=why)


def _values(records: Sequence[ResultRecord], field: str) -> set[str]:
    return {str(getattr(r, field)) if field in _ITEM_FIELDS else r.condition(field)
            for r in records}


#: What tells items apart besides their conditions.
_ITEM_FIELDS = ("case_id", "sample", "doctor", "image_mode")


def _show(values: set[str], limit: int = 4) -> str:
    shown = sorted(values, key=natural_key)
    return ", ".join(shown[:limit]) + (f" (+{len(shown) - limit} more)" if len(shown) > limit
                                       else "")


def unpaired_reasons(a: Sequence[ResultRecord], b: Sequence[ResultRecord],
                     on: Sequence[str]) -> tuple[str, ...]:
    """One line per pairing field whose values differ between the runs, saying how."""
    lines = []
    for field in ("case_id", "sample", *on):
        va, vb = _values(a, field), _values(b, field)
        if va == vb:
            continue
        name = {"case_id": "cases", "sample": "samples"}.get(field, field)
        hint = (f"; to pair across {field}, leave it out: --pair-on "
                f"{','.join(f for f in on if f != field) or '(none)'}"
                if field in on else "")
        lines.append(f"{name}: only in A {_show(va - vb) or '-'}; only in B "
                     f"{_show(vb - va) or '-'}{hint}")
    return tuple(lines)


def _index(records: Iterable[ResultRecord], name: str,
           on: Sequence[str]) -> dict[PairKey, ResultRecord]:
    index: dict[PairKey, ResultRecord] = {}
    for r in records:
        key = pair_key(r, on)
        if key in index:
            other = index[key]
            differ = [f for f in ("doctor", *BUILTIN_CONDITIONS, *condition_names([r, other]),
                                  "image_mode") if _values([r], f) != _values([other], f)]
            how = (f"they differ in {', '.join(differ)}" if differ
                   else "they are the same item twice")
            raise InputError(
                f"run {name} has several items for case {r.case_id} sample {r.sample} "
                f"({other.nodeid} and {r.nodeid}): {how}; keep one doctor with "
                f"--doctor-a/--doctor-b, or pair on the field with --pair-on")
        index[key] = r
    return index


@dataclass(frozen=True)
class ComparisonRow(_Row):
    """Run B against run A over the paired items of one group; ``difference`` is B - A."""

    n_pairs: int
    cases: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    p_mcnemar: float
    p_holm_bootstrap: float
    p_holm_mcnemar: float
    #: Two-sided sign-flip permutation p over cases (each case's mean difference): the
    #: gate's test, two-sided. Repeats of a case are one piece of evidence here.
    p_cases: float
    both_correct: int
    both_wrong: int
    #: Pairs right in A and wrong in B, and the reverse.
    to_wrong: int
    to_right: int
    #: The same, per case: ``(case_id, pairs)``, most pairs first.
    cases_to_wrong: tuple[tuple[str, int], ...] = ()
    cases_to_right: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; flipped cases as ``{case_id: pairs}``."""
        data = super().to_dict()
        data["cases_to_wrong"] = dict(self.cases_to_wrong)
        data["cases_to_right"] = dict(self.cases_to_right)
        return data


def paired_comparison(a_records: Iterable[ResultRecord], b_records: Iterable[ResultRecord],
                      by: Sequence[str] = (), n_resamples: int = 10_000,
                      seed: int = 0) -> list[ComparisonRow]:
    """Compare run B with run A per group of ``by``, then over all pairs (the last row).

    A group's value of a field that differs between the sides (``doctor``, say) reads
    ``A-value vs B-value``. Holm's correction runs over the groups (the ``all`` row is its
    own single test, adjusted p = p). Raises ValueError when nothing pairs.
    """
    return compare_pairs(pair_records(a_records, b_records).pairs, by, n_resamples, seed)


def compare_pairs(pairs: Sequence[Pair], by: Sequence[str] = (), n_resamples: int = 10_000,
                  seed: int = 0) -> list[ComparisonRow]:
    """:func:`paired_comparison` over already paired items."""
    if not pairs:
        raise InputError("no judged items pair between the two runs (same dataset, case, "
                         "sample and --pair-on fields)")
    fields = check_fields(by, condition_names(r for pair in pairs for r in pair))
    groups: dict[GroupKey, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(_pair_group(pair, fields), []).append(pair)
    keys = sorted(groups, key=lambda k: tuple(natural_key(v) for v in k)) if fields else []
    rows = [_compare(fields, k, groups[k], n_resamples, seed) for k in keys]
    rows = _holm(rows)
    rows.append(_compare(fields, (), pairs, n_resamples, seed))
    return rows


def _pair_group(pair: Pair, by: tuple[str, ...]) -> GroupKey:
    a, b = group_key(pair[0], by), group_key(pair[1], by)
    return tuple(x if x == y else f"{x} vs {y}" for x, y in zip(a, b, strict=True))


def _compare(by: tuple[str, ...], key: GroupKey, pairs: Sequence[Pair], n_resamples: int,
             seed: int) -> ComparisonRow:
    n = len(pairs)
    a = np.fromiter((ra.outcome == "correct" for ra, _ in pairs), dtype=bool, count=n)
    b = np.fromiter((rb.outcome == "correct" for _, rb in pairs), dtype=bool, count=n)
    diff = b.astype(np.float64) - a
    observed = float(diff.mean())
    case_ids = [ra.case_id for ra, _ in pairs]
    sums, counts = per_case(case_ids, diff)
    boot = cluster_bootstrap(sums, counts, n_resamples, group_rng(seed, key))
    ci_low, ci_high = percentile_ci(boot)
    worse, better = a & ~b, ~a & b
    p_boot = bootstrap_p(boot, observed)
    p_mcnemar = mcnemar_exact(int(worse.sum()), int(better.sum()))
    p_cases = sign_flip_two_sided((sums / counts).tolist(), seed=seed)
    return ComparisonRow(
        by=by, key=key, n_pairs=n, cases=len(sums), accuracy_a=float(a.mean()),
        accuracy_b=float(b.mean()), difference=observed, ci_low=ci_low, ci_high=ci_high,
        p_bootstrap=p_boot, p_mcnemar=p_mcnemar, p_holm_bootstrap=p_boot,
        p_holm_mcnemar=p_mcnemar, p_cases=p_cases, both_correct=int((a & b).sum()),
        both_wrong=int((~a & ~b).sum()), to_wrong=int(worse.sum()), to_right=int(better.sum()),
        cases_to_wrong=_flips(case_ids, worse), cases_to_right=_flips(case_ids, better))


def bootstrap_p(boot: FloatArray, observed: float) -> float:
    """Two-sided bootstrap p of a zero difference, as CRAFT-MD computes it.

    The resampled statistics shifted by ``-observed`` approximate the null distribution; p
    is (as-extreme count + 1) / (resamples + 1), so it is never 0 (smallest 1/(B+1)).
    """
    extreme = np.abs(boot - observed) >= abs(observed) - 1e-12
    return float((extreme.sum() + 1) / (len(boot) + 1))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact (binomial) McNemar p from the discordant counts; 1.0 when there are none.

    statsmodels' ``mcnemar(table, exact=True)`` formula, 2 x Binom(n, 1/2).cdf(min), capped
    at 1 (a test checks they agree): importing statsmodels costs over 2 s (it pulls pandas),
    more than a whole comparison, while ``scipy.special`` costs a tenth of that.
    """
    if a_only + b_only == 0:
        return 1.0
    from scipy.special import bdtr

    return min(1.0, 2.0 * float(bdtr(min(a_only, b_only), a_only + b_only, 0.5)))


def _flips(case_ids: Sequence[str], mask: NDArray[np.bool_]) -> tuple[tuple[str, int], ...]:
    counts = Counter(c for c, m in zip(case_ids, mask.tolist(), strict=True) if m)
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], natural_key(kv[0]))))


def _holm(rows: list[ComparisonRow]) -> list[ComparisonRow]:
    """Holm-Bonferroni adjusted p-values across the groups, for both tests."""
    boot = holm([r.p_bootstrap for r in rows])
    mcn = holm([r.p_mcnemar for r in rows])
    return [replace(r, p_holm_bootstrap=pb, p_holm_mcnemar=pm)
            for r, pb, pm in zip(rows, boot, mcn, strict=True)]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the given order.

    The same numbers as ``statsmodels.stats.multitest.multipletests(method="holm")`` (a test
    checks it), written out because statsmodels' Holm branch calls ``gc.collect()``: with
    80,000 records in memory that is over half a second per table.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    # k-th smallest p times (m - k), made monotone so a smaller p never gets a larger value.
    scaled = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(scaled, 1.0)
    return [float(x) for x in adjusted]
