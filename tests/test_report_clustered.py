"""Case-level statistics: the gate's sign-flip test (simulated rates) and the Wilson intervals."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_agentclinic.report.clustered import (
    cluster_wilson,
    effective_n,
    sign_flip_pvalues,
    sign_flip_two_sided,
    wilson,
)

ALPHA = 0.05
CASES, REPEATS, SIMULATIONS = 30, 5, 1000


def simulate(drop: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-case mean correctness of a baseline run and a candidate run, one row per pair.

    Each case has its own difficulty (accuracy between 0.2 and 0.95); each run plays every
    case ``REPEATS`` times with a stochastic doctor; the candidate is ``drop`` worse on every
    case (a drop spread over cases, not concentrated in a few).
    """
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.2, 0.95, size=(SIMULATIONS, CASES))
    before = rng.binomial(REPEATS, p) / REPEATS
    after = rng.binomial(REPEATS, np.clip(p - drop, 0.0, 1.0)) / REPEATS
    return before, after


def gate_fires(before: np.ndarray, after: np.ndarray, max_drop: float) -> np.ndarray:
    """The gate's decision for each simulated pair (the same test the gate runs)."""
    p = sign_flip_pvalues(after - before, flips=2000, seed=1)
    fires: np.ndarray = ((before.mean(axis=1) - after.mean(axis=1)) > max_drop) & (p < ALPHA)
    return fires


def test_false_alarm_rate_under_the_null_is_at_most_alpha() -> None:
    before, after = simulate(0.0, seed=11)
    rate = gate_fires(before, after, max_drop=0.0).mean()
    print(f"false-alarm rate over {SIMULATIONS} null pairs ({CASES} cases x {REPEATS} "
          f"repeats): {rate:.3f} (alpha {ALPHA})")
    assert rate <= ALPHA + 0.02


def test_power_against_a_fifteen_point_drop() -> None:
    before, after = simulate(0.15, seed=12)
    rate = gate_fires(before, after, max_drop=0.05).mean()
    print(f"power against a 15-point drop over {SIMULATIONS} pairs: {rate:.3f}")
    assert rate >= 0.80


def test_two_lost_cases_of_six_are_not_significant_however_many_repeats() -> None:
    diffs = np.array([[-1.0, -1.0, 0.0, 0.0, 0.0, 0.0]])
    # 2 differing cases: 4 sign patterns, the observed one is the lowest: p = 1/4.
    assert sign_flip_pvalues(diffs)[0] == pytest.approx(0.25)
    assert sign_flip_two_sided(diffs[0]) == pytest.approx(0.5)


def test_exact_and_monte_carlo_agree() -> None:
    rng = np.random.default_rng(3)
    diffs = rng.normal(-0.1, 0.3, size=(1, 16))
    exact = sign_flip_pvalues(diffs)[0]
    wider = np.concatenate([diffs, np.full((1, 1), 1e-13)], axis=1)  # still 16 non-zero
    assert sign_flip_pvalues(wider)[0] == exact
    many = np.concatenate([diffs, diffs * 0 + 0.0001], axis=1)  # 32 non-zero: Monte Carlo
    approx = sign_flip_pvalues(many, flips=50_000)[0]
    assert approx == pytest.approx(exact, abs=0.02)


def test_no_difference_gives_p_one() -> None:
    assert sign_flip_pvalues(np.zeros((2, 5))).tolist() == [1.0, 1.0]


@pytest.mark.parametrize(("correct", "sizes", "low", "high"), [
    ([0] * 6, [1] * 6, 0.0, 0.39),   # 0% of 6 cases: [0%, 39%], never [0%, 0%]
    ([1], [1], 0.207, 1.0),          # 100% of 1 case: [20.7%, 100%]
    ([10] * 6, [10] * 6, 0.61, 1.0),  # 60 items all right, but only 6 cases of evidence
])
def test_intervals_never_collapse(correct: list[int], sizes: list[int], low: float,
                                  high: float) -> None:
    lo, hi = cluster_wilson(np.array(correct, float), np.array(sizes, float))
    assert lo == pytest.approx(low, abs=0.005) and hi == pytest.approx(high, abs=0.005)
    assert hi - lo > 0.2


def test_effective_n_lies_between_cases_and_items() -> None:
    # Cases that are all-or-nothing: the repeats add nothing, n_eff = cases.
    assert effective_n(np.array([5.0, 0, 5, 0]), np.array([5.0, 5, 5, 5])) == 4
    # Cases that are alike: the repeats are as good as independent items.
    assert effective_n(np.array([3.0, 2, 3, 2]), np.array([5.0, 5, 5, 5])) == 20


def test_wilson_matches_the_textbook_value() -> None:
    # Wilson 95% for 8/10: (0.490, 0.943) (Newcombe 1998, table I style).
    lo, hi = wilson(0.8, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
