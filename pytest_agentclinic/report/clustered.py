"""Case-level statistics: the unit of evidence is a case, never a repeat of one.

Repeats of a case (``--agent-repeat``, CRAFT-MD trials) share the case's difficulty, so ten
repeats of one lost case are one piece of evidence, not ten. Everything here first reduces a
case's items to the case's mean correctness, then tests or bounds those means:

* :func:`sign_flip_pvalues` -- the paired drop test of the gate: a one-sided sign-flip
  permutation test over cases of the per-case differences. Under "no change" each case's
  difference is as likely positive as negative (the two runs are exchangeable within a case),
  so flipping signs at random gives the exact null distribution whatever the case
  difficulties or the number of repeats; it is exact (full enumeration) when at most
  :data:`EXACT_MAX` cases differ, and a seeded Monte Carlo otherwise.
* :func:`cluster_wilson` -- the accuracy interval: a Wilson score interval on the effective
  sample size ``n / design effect`` (cluster-adjusted Wilson). At 0% or 100%, where the design
  effect cannot be estimated, it takes the number of cases, the most conservative choice.
  Unlike a percentile bootstrap it never collapses to a point at 0%, 100% or small n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.lazy import numpy as np  # imported on first use (core/lazy.py says why)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    FloatArray = NDArray[np.float64]

#: Up to this many non-zero case differences the sign-flip test enumerates all 2^m flips.
EXACT_MAX = 16
#: Monte Carlo sign flips beyond :data:`EXACT_MAX` (the p-value's resolution is 1/(B + 1)).
DEFAULT_FLIPS = 20_000
#: Random sign flips drawn at once (flips x cases doubles): 2 MB.
_BLOCK_ELEMENTS = 1 << 18
#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054


def _all_signs(m: int) -> FloatArray:
    """Every one of the 2^m sign vectors, as rows of +-1."""
    bits = (np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1
    return (1.0 - 2.0 * bits).astype(np.float64)


def sign_flip_pvalues(diffs: FloatArray, flips: int = DEFAULT_FLIPS,
                      seed: int = 0) -> FloatArray:
    """One-sided p-values that the per-case differences are centred below zero.

    ``diffs`` has one row per comparison and one column per case (after - before, per case).
    The statistic is the sum of a row (the mean, up to the constant number of cases); p is
    the share of sign flips whose sum is as low or lower. A row with at most
    :data:`EXACT_MAX` non-zero cases is enumerated exactly (zero differences flip to
    themselves, so they are left out); the others share one seeded matrix of random flips
    (the observed signs counted once, so p >= 1/(flips + 1)).
    """
    diffs = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    out = np.ones(diffs.shape[0])
    nonzero = np.abs(diffs) > 1e-12
    counts = nonzero.sum(axis=1)
    observed = diffs.sum(axis=1)
    for m in np.unique(counts[(counts > 0) & (counts <= EXACT_MAX)]):
        rows = np.flatnonzero(counts == m)
        values = np.stack([diffs[r][nonzero[r]] for r in rows])  # (rows, m)
        sums = _all_signs(int(m)) @ np.abs(values).T  # (2^m, rows)
        out[rows] = (sums <= observed[rows][None, :] + 1e-9).mean(axis=0)
    big = np.flatnonzero(counts > EXACT_MAX)
    if big.size:
        rng = np.random.default_rng(seed)
        magnitudes = np.abs(diffs[big]).T
        extreme = np.zeros(big.size)
        # The flips in blocks of rows (the same draws as one matrix): a matrix of all of them
        # held flips x cases doubles, 1.6 GB for 10,000 cases, in every comparison.
        block = max(1, _BLOCK_ELEMENTS // int(diffs.shape[1]))
        for start in range(0, flips, block):
            signs = rng.choice(np.array([-1.0, 1.0]), size=(min(block, flips - start),
                                                            int(diffs.shape[1])))
            sums = signs @ magnitudes  # (block, rows)
            extreme += (sums <= observed[big][None, :] + 1e-9).sum(axis=0)
        out[big] = (extreme + 1) / (flips + 1)
    return out


def sign_flip_two_sided(diffs: Sequence[float], flips: int = DEFAULT_FLIPS,
                        seed: int = 0) -> float:
    """Two-sided p of a zero mean case difference (twice the smaller one-sided p, <= 1)."""
    d = np.asarray(diffs, dtype=np.float64)[None, :]
    low = float(sign_flip_pvalues(d, flips, seed)[0])
    high = float(sign_flip_pvalues(-d, flips, seed)[0])
    return min(1.0, 2.0 * min(low, high))


def wilson(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed over ``n`` (may be fractional)."""
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def effective_n(successes: FloatArray, sizes: FloatArray) -> float:
    """Items divided by the design effect of clustering them in cases, within [cases, items].

    The design effect is the ratio of the cluster-robust (ratio estimator) variance of the
    accuracy to the binomial one. When every item agrees (0% or 100%) it cannot be estimated,
    and the number of cases is used: as if every repeat merely copied its case.
    """
    n, k = float(sizes.sum()), len(sizes)
    p = float(successes.sum()) / n
    if k < 2 or p <= 0.0 or p >= 1.0:
        return float(k)
    robust = k / (k - 1) * float(((successes - p * sizes) ** 2).sum()) / n ** 2
    binomial = p * (1 - p) / n
    if robust <= 0.0:
        return n
    return min(n, max(float(k), n * binomial / robust))


def cluster_wilson(successes: FloatArray, sizes: FloatArray,
                   z: float = Z95) -> tuple[float, float]:
    """The cluster-adjusted Wilson interval from per-case correct counts and item counts."""
    n = float(sizes.sum())
    return wilson(float(successes.sum()) / n, effective_n(successes, sizes), z)
