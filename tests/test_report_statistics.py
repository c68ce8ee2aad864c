"""Synthetic checks of the statistics: each builds data whose right answer is known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.transcript import Usage
from pytest_agentclinic.report.comparison import (
    bootstrap_p,
    mcnemar_exact,
    pair_records,
    paired_comparison,
)
from pytest_agentclinic.report.rundir import load_records, results_path
from pytest_agentclinic.report.statistics import (
    GROUP_FIELDS,
    accuracy_table,
    cluster_bootstrap,
    per_case,
)


def rec(case: str, outcome: str, sample: int = 0, doctor: str = "model-a",
        **over: Any) -> ResultRecord:
    """A minimal record; ``over`` sets any other field."""
    fields: dict[str, Any] = dict(
        protocol="agentclinic", run="r", nodeid=f"f::{case}[{doctor}-{sample}]", case_id=case,
        dataset="d",
        specialty="Neurology", models={"doctor": doctor, "patient": "offline"}, sample=sample,
        turn_budget=20, outcome=outcome, expected="x", given="y", turns_used=4, duration_s=1.0)
    fields.update(over)
    return ResultRecord(**fields)


def run_pair(concordant_right: int, concordant_wrong: int, a_only: int, b_only: int,
             specialty: str = "Neurology") -> tuple[list[ResultRecord], list[ResultRecord]]:
    """Runs A and B (one item per case) with the given 2x2 table."""
    a: list[ResultRecord] = []
    b: list[ResultRecord] = []
    cells = ([("correct", "correct")] * concordant_right
             + [("incorrect", "incorrect")] * concordant_wrong
             + [("correct", "incorrect")] * a_only + [("incorrect", "correct")] * b_only)
    for i, (oa, ob) in enumerate(cells):
        case = f"{specialty[:4]}-{i}"
        a.append(rec(case, oa, specialty=specialty))
        b.append(rec(case, ob, doctor="model-b", specialty=specialty))
    return a, b


# --- accuracy table ----------------------------------------------------------------------------

def test_errors_are_excluded_from_the_denominator_and_counted_apart() -> None:
    records = [rec("c1", "correct"), rec("c2", "correct"), rec("c3", "correct"),
               rec("c4", "incorrect"), rec("c5", "no_diagnosis"), rec("c6", "error"),
               rec("c7", "error")]
    (row,) = accuracy_table(records)
    assert (row.n, row.correct, row.errors, row.no_diagnosis) == (5, 3, 2, 1)
    assert row.accuracy == pytest.approx(0.6)
    assert row.cases == 5  # the error-only cases are not resampled
    assert row.label == "all"


def test_repeats_of_a_case_move_together_in_the_bootstrap() -> None:
    # 20 cases run 5 times with identical verdicts carry no more information than 20
    # cases run once: the case-clustered interval must be exactly the same.
    verdict = ["correct" if i % 3 else "incorrect" for i in range(20)]
    once = [rec(f"c{i}", v) for i, v in enumerate(verdict)]
    five = [rec(f"c{i}", v, sample=s) for i, v in enumerate(verdict) for s in range(5)]
    (r1,), (r5,) = accuracy_table(once), accuracy_table(five)
    assert (r5.n, r5.cases) == (100, 20)
    assert (r5.ci_low, r5.ci_high) == (r1.ci_low, r1.ci_high)
    # Treating the 100 items as independent would make the interval about sqrt(5) narrower.
    naive = [rec(f"c{i}-{s}", v) for i, v in enumerate(verdict) for s in range(5)]
    (rn,) = accuracy_table(naive)
    assert None not in (rn.ci_low, rn.ci_high, r5.ci_low, r5.ci_high)
    assert rn.ci_high - rn.ci_low < 0.6 * (r5.ci_high - r5.ci_low)  # type: ignore[operator]


def test_cluster_bootstrap_only_produces_whole_case_resamples() -> None:
    sums, counts = per_case(["a"] * 5 + ["b"] * 5, np.array([1.0] * 5 + [0.0] * 5))
    assert sums.tolist() == [5.0, 0.0] and counts.tolist() == [5.0, 5.0]
    boot = cluster_bootstrap(sums, counts, 2000, np.random.default_rng(1))
    assert set(np.round(boot, 9).tolist()) <= {0.0, 0.5, 1.0}


def test_the_interval_is_deterministic_and_groups_do_not_disturb_each_other() -> None:
    records = [rec(f"c{i}", "correct" if i % 2 else "incorrect", specialty=s)
               for i in range(30) for s in ("Neurology", "Dermatology")]
    first = accuracy_table(records, ["specialty"], seed=0)
    assert first == accuracy_table(records, ["specialty"], seed=0)
    assert [r.key for r in first] == [("Dermatology",), ("Neurology",)]
    # The cluster-adjusted Wilson interval does not resample: no seed changes it.
    assert accuracy_table(records, ["specialty"], n_resamples=99, seed=1) == first
    # A group's interval does not depend on which other groups are in the table.
    alone = accuracy_table([r for r in records if r.specialty == "Neurology"], ["specialty"])
    assert (alone[0].ci_low, alone[0].ci_high) == (first[1].ci_low, first[1].ci_high)


def test_groups_usage_and_means() -> None:
    usage = {"doctor": Usage(calls=2, prompt_tokens=10, completion_tokens=5, cost_usd=0.5,
                             cache_hits=1),
             "patient": Usage(calls=1, prompt_tokens=3, completion_tokens=1)}
    records = [rec("c1", "correct", usage=usage, tests_requested=["CBC"], turns_used=6),
               rec("c2", "incorrect", usage=usage, turns_used=2),
               rec("c3", "error", usage=usage, bias="recency", turn_budget=10)]
    rows = accuracy_table(records, ["bias", "turn_budget"])
    assert [r.key for r in rows] == [("none", "20"), ("recency", "10")]
    none = rows[0]
    assert none.tokens == {"doctor": 30, "patient": 8}
    assert none.cost_usd == {"doctor": 1.0, "patient": 0.0}
    assert (none.calls, none.cache_hits, none.mean_turns, none.mean_tests) == (6, 2, 4.0, 0.5)
    recency = rows[1]  # errors only: no accuracy, but its cost is still reported
    assert (recency.n, recency.accuracy, recency.ci_low, recency.errors) == (0, None, None, 1)
    assert recency.tokens == {"doctor": 15, "patient": 4}
    assert recency.to_dict()["group"] == {"bias": "recency", "turn_budget": "10"}


def test_every_group_field_reads_a_record() -> None:
    r = rec("c1", "correct", experiment="multiturn", answer_format="frq")
    values = {name: get(r) for name, get in GROUP_FIELDS.items()}
    assert values == {"doctor": "model-a", "patient": "offline", "bias": "none",
                      "specialty": "Neurology", "dataset": "d", "turn_budget": "20",
                      "experiment": "multiturn", "answer_format": "frq"}
    with pytest.raises(ValueError, match=r"unknown group field.*choose from doctor"):
        accuracy_table([r], ["speciality"])


# --- paired comparison -----------------------------------------------------------------------

def test_mcnemar_exact_matches_the_binomial_by_hand() -> None:
    # 1 vs 8 discordant pairs: p = 2 * (C(9,0) + C(9,1)) / 2**9 = 20 / 512.
    assert mcnemar_exact(1, 8) == pytest.approx(0.0390625, abs=1e-12)
    assert mcnemar_exact(0, 0) == 1.0
    a, b = run_pair(concordant_right=6, concordant_wrong=5, a_only=1, b_only=8)
    (row,) = paired_comparison(a, b)
    assert row.p_mcnemar == pytest.approx(0.0390625, abs=1e-12)
    assert (row.n_pairs, row.to_wrong, row.to_right, row.both_correct, row.both_wrong) == (
        20, 1, 8, 6, 5)
    assert [row.accuracy_a, row.accuracy_b] == pytest.approx([7 / 20, 14 / 20])
    assert row.difference == pytest.approx(7 / 20)
    assert 0 < row.ci_low < row.difference < row.ci_high
    assert row.cases_to_wrong == (("Neur-11", 1),)
    assert row.label == "all"


def test_holm_adjusts_across_the_groups_in_order() -> None:
    a: list[ResultRecord] = []
    b: list[ResultRecord] = []
    for specialty, (a_only, b_only) in {"Cardio": (0, 10), "Derm": (1, 1),
                                        "Neuro": (0, 5)}.items():
        ra, rb = run_pair(3, 3, a_only, b_only, specialty=specialty)
        a += ra
        b += rb
    rows = paired_comparison(a, b, by=["specialty"])
    assert [r.label for r in rows] == ["Cardio", "Derm", "Neuro", "all"]
    raw = {r.label: r.p_mcnemar for r in rows}
    assert raw["Cardio"] == pytest.approx(2 / 1024) and raw["Neuro"] == pytest.approx(0.0625)
    holm = {r.label: r.p_holm_mcnemar for r in rows}
    # Smallest p times 3, next times 2, largest times 1 (capped at 1, kept monotone).
    assert holm["Cardio"] == pytest.approx(3 * 2 / 1024)
    assert holm["Neuro"] == pytest.approx(2 * 0.0625)
    assert holm["Derm"] == 1.0
    # The all row is a test of its own: not adjusted.
    assert rows[-1].p_holm_mcnemar == rows[-1].p_mcnemar
    assert all(r.p_holm_bootstrap >= r.p_bootstrap for r in rows)


def test_pairs_with_an_error_on_either_side_are_dropped() -> None:
    a = [rec("c1", "correct"), rec("c2", "error"), rec("c3", "correct"), rec("c4", "correct")]
    b = [rec("c1", "incorrect", doctor="m"), rec("c2", "correct", doctor="m"),
         rec("c3", "error", doctor="m"), rec("c5", "correct", doctor="m")]
    pairing = pair_records(a, b)
    assert (len(pairing.pairs), pairing.errors, pairing.only_a, pairing.only_b) == (1, 2, 1, 1)
    (row,) = paired_comparison(a, b, by=["doctor"])[:-1]
    assert row.key == ("model-a vs m",) and row.n_pairs == 1


def test_items_pair_only_under_the_same_condition() -> None:
    a = [rec("c1", "correct", experiment="vignette"), rec("c1", "correct", sample=1)]
    b = [rec("c1", "incorrect", experiment="multiturn", doctor="m"),
         rec("c1", "incorrect", sample=1, doctor="m")]
    pairing = pair_records(a, b)
    assert len(pairing.pairs) == 1 and pairing.pairs[0][0].sample == 1
    with pytest.raises(ValueError, match="no judged items pair"):
        paired_comparison(a[:1], b[:1])
    with pytest.raises(ValueError, match="run A has several items for case c1"):
        pair_records([rec("c1", "correct"), rec("c1", "correct", doctor="z")], b)


def test_bootstrap_p_follows_the_papers_formula() -> None:
    boot = np.array([0.1, 0.2, -0.05, 0.0, 0.15])
    # Shifted by the observed 0.1: |boot - 0.1| >= 0.1 for 0.2, -0.05, 0.0 -> (3 + 1) / 6.
    assert bootstrap_p(boot, 0.1) == pytest.approx(4 / 6)
    assert bootstrap_p(boot, 0.0) == 1.0
    assert bootstrap_p(np.full(9999, 0.3), 0.3) == pytest.approx(1 / 10_000)


def test_paired_comparison_is_deterministic() -> None:
    a, b = run_pair(10, 10, 4, 9)
    assert paired_comparison(a, b) == paired_comparison(a, b)
    few = [paired_comparison(a, b, n_resamples=99, seed=s)[0] for s in (0, 0, 3)]
    assert few[0] == few[1] and (few[0].ci_low, few[0].ci_high) != (few[2].ci_low,
                                                                     few[2].ci_high)


# --- loading -----------------------------------------------------------------------------------

def test_load_records_from_dir_file_or_summary(tmp_path: Path) -> None:
    records = [rec(f"c{i}", "correct") for i in range(3)]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in records) + "\n")
    (tmp_path / "summary.json").write_text(json.dumps({}))
    for where in (tmp_path, path, tmp_path / "summary.json", str(tmp_path)):
        assert results_path(where) == path
        assert load_records(where) == records
    with pytest.raises(FileNotFoundError, match="no results file"):
        load_records(tmp_path / "elsewhere")
    path.write_text(records[0].model_dump_json() + "\n{\"run\": 1}\n")
    with pytest.raises(ValueError, match=r"results.jsonl:2: "):
        load_records(path)


def test_holm_equals_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    from pytest_agentclinic.report.comparison import holm

    rng = np.random.default_rng(7)
    for size in (1, 2, 5, 40):
        p = np.concatenate([rng.uniform(0, 0.05, size), rng.uniform(0, 1, size)])
        p[::3] = p[0]  # ties
        assert holm(p.tolist()) == pytest.approx(multipletests(p, method="holm")[1].tolist())


@pytest.mark.parametrize(("a_only", "b_only"), [(1, 8), (0, 10), (5, 0), (3, 3), (573, 472),
                                                (1430, 479), (100_000, 99_000)])
def test_mcnemar_equals_statsmodels_exact(a_only: int, b_only: int) -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    ref = mcnemar([[7, a_only], [b_only, 9]], exact=True).pvalue
    assert mcnemar_exact(a_only, b_only) == pytest.approx(ref, rel=1e-9)


# --- the bootstrap by counts and the analytic interval (issue: reports at 10,000 cases) ---------

class _Recording:
    """A generator that records how many random values each draw makes."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.drawn = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.rng, name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            out = method(*args, **kwargs)
            self.drawn += int(np.size(out))
            return out

        return draw


def test_a_bootstrap_over_few_kinds_of_case_does_not_draw_resamples_times_cases() -> None:
    # 10,000 cases, one verdict each: two kinds of case. Resampling indices drew 10,000 x
    # 10,000 numbers; counts over the kinds draw 10,000 x 2.
    verdicts = (np.arange(10_000) % 3 != 0).astype(np.float64)
    rng = _Recording(3)
    boot = cluster_bootstrap(verdicts, np.ones(10_000), 10_000, rng)  # type: ignore[arg-type]
    assert len(boot) == 10_000
    assert rng.drawn <= 10_000 * 2


@pytest.mark.parametrize("repeats", [1, 3])
def test_the_bootstrap_by_counts_has_the_index_bootstrap_distribution(repeats: int) -> None:
    from pytest_agentclinic.report.statistics import _index_bootstrap

    rng = np.random.default_rng(5)
    values = rng.integers(0, 6, size=(400, repeats)).astype(np.float64)  # e.g. tests ordered
    cases = [f"c{i}" for i in range(400) for _ in range(repeats)]
    sums, counts = per_case(cases, values.ravel())
    by_counts = cluster_bootstrap(sums, counts, 20_000, np.random.default_rng(1))
    by_index = _index_bootstrap(sums, counts, 20_000, np.random.default_rng(2))
    # Same statistic, same resampling scheme: equal up to Monte Carlo error (the standard
    # error of a 20,000-draw mean is ~0.7% of the spread).
    assert by_counts.mean() == pytest.approx(by_index.mean(), abs=0.03 * by_index.std())
    assert by_counts.std() == pytest.approx(by_index.std(), rel=0.03)
    assert np.quantile(by_counts, [0.025, 0.975]) == pytest.approx(
        np.quantile(by_index, [0.025, 0.975]), abs=0.08 * by_index.std())
    # Whole cases only: every resample's mean is a mean over multiples of the cases' sums.
    assert sums.sum() / counts.sum() == pytest.approx(float(np.median(by_counts)), abs=0.05)


def test_the_normal_interval_equals_statsmodels_one_item_per_case() -> None:
    from statsmodels.stats.weightstats import DescrStatsW

    from pytest_agentclinic.report.statistics import cluster_normal_interval

    x = np.random.default_rng(11).gamma(2.0, 30.0, 3_000).round(2)
    ours = cluster_normal_interval(x, np.ones(len(x)))
    assert ours == pytest.approx(DescrStatsW(x).zconfint_mean(alpha=0.05), rel=1e-9)


def test_the_normal_interval_equals_statsmodels_cluster_robust_ols() -> None:
    import statsmodels.api as sm

    from pytest_agentclinic.report.statistics import cluster_normal_interval

    rng = np.random.default_rng(12)
    sizes = rng.integers(1, 5, size=1_500)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(0, 1, len(sizes))[groups] + rng.normal(0, 1, len(groups)) + 4.0
    sums, counts = per_case([str(g) for g in groups], y)
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": groups},
                                         use_t=False)
    assert cluster_normal_interval(sums, counts) == pytest.approx(
        tuple(fit.conf_int(alpha=0.05)[0]), rel=1e-9)


def test_ratio_interval_is_analytic_only_for_many_kinds_over_many_cases() -> None:
    from pytest_agentclinic.report.statistics import (
        ANALYTIC_MIN,
        cluster_normal_interval,
        percentile_ci,
        ratio_interval,
    )

    rng = np.random.default_rng(13)
    spend = rng.gamma(2.0, 30.0, ANALYTIC_MIN).round(2)  # continuous: as many kinds as cases
    ones = np.ones(len(spend))
    assert ratio_interval(spend, ones, 2_000, np.random.default_rng(0)) == (
        cluster_normal_interval(spend, ones))
    few = spend[:200]  # too few cases for the normal interval: the bootstrap
    assert ratio_interval(few, ones[:200], 2_000, np.random.default_rng(0)) == percentile_ci(
        cluster_bootstrap(few, ones[:200], 2_000, np.random.default_rng(0)))
    turns = rng.integers(1, 10, 5_000).astype(np.float64)  # few kinds: the bootstrap by counts
    low, high = ratio_interval(turns, np.ones(5_000), 2_000, np.random.default_rng(0))
    assert (low, high) == percentile_ci(
        cluster_bootstrap(turns, np.ones(5_000), 2_000, np.random.default_rng(0)))
    normal = cluster_normal_interval(turns, np.ones(5_000))
    assert low == pytest.approx(normal[0], abs=0.02) and high == pytest.approx(normal[1],
                                                                              abs=0.02)
