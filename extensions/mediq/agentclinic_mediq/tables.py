"""MediQ's report tables, one per measure, each by doctor model and setting.

* accuracy (option letter, exact), with a 95% Wilson interval over items;
* questions asked per encounter (mean, median, max);
* how often the budget ran out (the answer was forced; interactive settings only);
* facts the patient revealed (mean count, and share of the case's facts).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pytest_agentclinic import api

from .state import BASELINES, EXPERTS


def _setting(r: api.ResultRecord) -> str:
    return r.conditions.get("setting", "-")


def _order(setting: str) -> tuple[int, str]:
    kind = setting.split("-")[0]
    rank = (BASELINES + EXPERTS).index(kind) if kind in BASELINES + EXPERTS else 99
    return rank, setting


def _groups(records: Sequence[api.ResultRecord]
            ) -> list[tuple[tuple[str, str, str], list[api.ResultRecord]]]:
    """The judged records by (doctor, dataset, setting), in the paper's order of settings."""
    groups: dict[tuple[str, str, str], list[api.ResultRecord]] = {}
    for r in records:
        if r.outcome != "error":
            groups.setdefault((r.doctor, r.dataset, _setting(r)), []).append(r)
    return [(key, groups[key]) for key in sorted(groups, key=lambda k: (k[0], k[1],
                                                                        _order(k[2])))]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def ran_out(r: api.ResultRecord) -> bool:
    """Whether the budget forced the item's answer (every budgeted question was asked)."""
    asked = r.measures.questions if r.measures is not None else 0
    return r.turn_budget > 0 and asked >= r.turn_budget


def tables(records: Sequence[api.ResultRecord]) -> list[api.Table]:
    """The four MediQ tables of ``records`` (errors left out: an error is no answer)."""
    acc, asked, out, facts = [], [], [], []
    for key, mine in _groups(records):
        n, row = len(mine), [*key, str(len(mine))]
        right = sum(r.outcome == "correct" for r in mine)
        low, high = wilson(right, n)
        acc.append([*row, f"{right / n:.3f}", f"[{low:.3f}, {high:.3f}]"])
        if key[2].split("-")[0] not in EXPERTS:
            continue  # a baseline asks nothing and reveals nothing
        counts = [r.measures.questions if r.measures else 0 for r in mine]
        asked.append([*row, f"{statistics.fmean(counts):.2f}",
                      f"{statistics.median(counts):g}", str(max(counts))])
        forced = sum(ran_out(r) for r in mine)
        out.append([*row, str(mine[0].turn_budget), str(forced), f"{forced / n:.3f}"])
        got = [(r.measures.facts_elicited, r.measures.facts) for r in mine if r.measures]
        shown, total = sum(g for g, _ in got), sum(t for _, t in got)
        facts.append([*row, f"{shown / len(got):.2f}" if got else "-",
                      f"{shown / total:.3f}" if total else "-"])
    return [_table("accuracy by setting (option letter)", ["accuracy", "95% CI"], acc),
            _table("questions asked by setting", ["mean", "median", "max"], asked),
            _table("budget ran out by setting (answer forced)",
                   ["budget", "ran out", "rate"], out),
            _table("facts revealed by setting", ["facts revealed (mean)", "share of facts"],
                   facts)]


def _table(title: str, measures: list[str], rows: list[list[str]]) -> api.Table:
    headers = ["doctor", "dataset", "setting", "n", *measures]
    return api.Table(f"mediq: {title}", headers, rows,
                     data=[dict(zip(headers, row, strict=True)) for row in rows], keys=3)
