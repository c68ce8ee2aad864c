"""Report tables and the cost-vs-accuracy plot of the beyond-accuracy measures.

Each measure is a per-encounter value read off ``ResultRecord.measures``; a group's value is
the mean over its encounters with a 95% percentile bootstrap interval that resamples cases
(as for accuracy: the repeats of a case are not independent).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, NamedTuple

from ..core.lazy import numpy as np  # imported on first use (core/lazy.py says why)
from ..core.records import ResultRecord
from .charts import SERIES_COLOURS, card
from .statistics import (
    GroupKey,
    accuracy_table,
    field_value,
    group_rng,
    key_label,
    natural_key,
    per_case,
    ratio_interval,
)


class TableParts(NamedTuple):
    """A table's parts, in :class:`.tables.Table`'s field order (tables.py builds on this
    module, so it makes the Table)."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    data: list[dict[str, Any]]
    note: str


@dataclass(frozen=True)
class Measure:
    """One per-encounter measure: its name in tables and JSON, and how to read it."""

    name: str
    label: str
    read: Callable[[ResultRecord], float | None]
    percent: bool = False


def _field(name: str) -> Callable[[ResultRecord], float | None]:
    def read(r: ResultRecord) -> float | None:
        if r.measures is None:
            return None
        value = getattr(r.measures, name)
        return None if value is None else float(value)

    return read


MEASURES: tuple[Measure, ...] = (
    Measure("fact_share", "facts", _field("fact_share"), True),
    Measure("key_fact_share", "key facts", _field("key_fact_share"), True),
    Measure("questions", "questions", _field("questions")),
    Measure("repeated_questions", "repeated", _field("repeated_questions")),
    Measure("redundant_questions", "redundant", _field("redundant_questions")),
    Measure("tests_ordered", "tests", _field("tests_ordered")),
    Measure("test_spend_usd", "spend $", _field("test_spend_usd")),
    Measure("turns_to_diagnosis", "turns to dx", _field("turns_to_diagnosis")),
    Measure("premature_closure", "premature", _field("premature_closure"), True),
    Measure("missed_closure", "missed", _field("missed_closure"), True),
)
BY_NAME = {m.name: m for m in MEASURES}


@dataclass(frozen=True)
class MeanCI:
    """A group's mean of one measure, its 95% CI and how many encounters had a value."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    def text(self, percent: bool) -> str:
        """``mean [low, high]`` (percentages for shares and rates)."""
        if self.mean is None or self.low is None or self.high is None:
            return "-"
        if percent:
            return f"{self.mean:.0%} [{self.low * 100:.0f}-{self.high * 100:.0f}]"
        return f"{self.mean:.1f} [{self.low:.1f}-{self.high:.1f}]"


def mean_ci(records: Sequence[ResultRecord], measure: Measure, key: GroupKey,
            resamples: int, seed: int = 0) -> MeanCI:
    """Mean of ``measure`` over the records that have it, with a case-clustered 95% CI."""
    pairs = [(r.case_id, v) for r in records if (v := measure.read(r)) is not None]
    if not pairs:
        return MeanCI(None, None, None, 0)
    sums, counts = per_case([c for c, _ in pairs], np.array([v for _, v in pairs], float))
    low, high = ratio_interval(sums, counts, resamples, group_rng(seed, (*key, measure.name)))
    return MeanCI(float(sums.sum() / counts.sum()), low, high, len(pairs))


def gathering_table(records: Sequence[ResultRecord], by: Sequence[str],
                    resamples: int) -> TableParts:
    """Every measure's mean and 95% CI per group of ``by``."""
    groups: dict[GroupKey, list[ResultRecord]] = {}
    for r in records:
        if r.measures is not None:
            groups.setdefault(tuple(field_value(r, f) for f in by), []).append(r)
    rows, data = [], []
    for key in sorted(groups, key=lambda k: tuple(natural_key(v) for v in k)):
        stats = {m.name: mean_ci(groups[key], m, key, resamples) for m in MEASURES}
        rows.append([*key, str(len(groups[key])),
                     *(stats[m.name].text(m.percent) for m in MEASURES)])
        data.append({"group": key_label(key), **dict(zip(by, key, strict=True)),
                     "encounters": len(groups[key]),
                     **{m.name: {"mean": s.mean, "ci_low": s.low, "ci_high": s.high, "n": s.n}
                        for m, s in ((m, stats[m.name]) for m in MEASURES)}})
    title = "information gathering and test cost by " + " and ".join(by)
    note = ("mean per encounter [95% CI, bootstrap over cases]. facts / key facts: share of "
            "the case's (key) facts the patient's or measurement agent's words conveyed "
            "(method elicit-1); repeated / redundant: questions; spend: tests performed, CMS "
            "2024 prices; premature: diagnosis before any key fact; missed: no diagnosis with "
            "every key fact (both only where the case marks key facts). "
            "Definitions: docs/beyond-accuracy.md")
    return TableParts(title, [*by, "n", *(m.label for m in MEASURES)], rows, data, note)


def one_per_conversation(records: Sequence[ResultRecord]) -> list[ResultRecord]:
    """The records with measures, one per conversation: CRAFT-MD's multiturn items of one
    case share one conversation across answer modes, and must not count once per mode."""
    seen: dict[tuple[object, ...], ResultRecord] = {}
    for r in records:
        if r.measures is not None:
            key = (r.protocol, r.dataset, r.case_id, r.sample, tuple(sorted(r.models.items())),
                   r.bias, r.turn_budget, r.experiment, r.image_mode,
                   tuple(sorted(r.conditions.items())))  # a protocol's own conditions
            seen.setdefault(key, r)
    return list(seen.values())


def beyond_tables(records: Sequence[ResultRecord], resamples: int) -> list[TableParts]:
    """The measures by doctor, and by doctor and specialty / bias when those vary."""
    measured = one_per_conversation(records)
    if not measured:
        return []
    tables = [gathering_table(measured, ("doctor",), resamples)]
    for field_name in ("specialty", "bias"):
        if len({field_value(r, field_name) for r in measured}) > 1:
            tables.append(gathering_table(measured, ("doctor", field_name), resamples))
    return tables


def cost_accuracy_chart(records: Sequence[ResultRecord], colours: Mapping[str, str],
                        resamples: int = 2000) -> str:
    """SDBench's frontier view: each doctor model's accuracy (95% CI) against its mean test
    spend per encounter; "" when no record carries measures."""
    measured = [r for r in records if r.measures is not None]
    if not measured:
        return ""
    rows = [row for row in accuracy_table(measured, ("doctor",), resamples)
            if row.accuracy is not None]
    conversations = one_per_conversation(measured)
    spend = {row.key[0]: mean_ci([r for r in conversations if r.doctor == row.key[0]],
                                 BY_NAME["test_spend_usd"], row.key, resamples) for row in rows}
    # No judged row (every measured item an error): no spend, and no chart.
    highest = max([s.high or 0.0 for s in spend.values()] + [s.mean or 0.0
                                                            for s in spend.values()],
                  default=0.0)
    if not rows or highest <= 0:
        return ""  # no test was paid for (CRAFT-MD orders none): a cost axis says nothing
    width, height, left, right, top, bottom = 600, 320, 56, 24, 16, 44
    ticks, decimals = spend_ticks(highest)
    top_spend = ticks[-1]
    pw, ph = width - left - right, height - top - bottom

    def x(usd: float) -> float:
        return left + usd / top_spend * pw

    def y(acc: float) -> float:
        return top + (1 - acc) * ph

    parts = [f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="accuracy against test spend">']
    for frac in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<path class="grid" d="M{left} {y(frac):.1f}H{left + pw}"/>'
                     f'<text class="tick" x="{left - 6}" y="{y(frac) + 4:.1f}" '
                     f'text-anchor="end">{frac:.0%}</text>')
    for usd in ticks:
        parts.append(f'<text class="tick x" x="{x(usd):.1f}" y="{top + ph + 18}" '
                     f'text-anchor="middle">${usd:,.{decimals}f}</text>')
    parts.append(f'<text class="tick" x="{left + pw / 2}" y="{height - 6}" '
                 f'text-anchor="middle">mean test spend per encounter (USD)</text>')
    for i, row in enumerate(rows):
        doctor, s = row.key[0], spend[row.key[0]]
        colour = colours.get(doctor, SERIES_COLOURS[i % len(SERIES_COLOURS)])
        cx, cy = x(s.mean or 0.0), y(row.accuracy or 0.0)
        tip = (f"{doctor}: accuracy {row.accuracy:.1%} [{row.ci_low:.1%}, {row.ci_high:.1%}], "
               f"test spend ${s.mean:.0f} [{s.low:.0f}, {s.high:.0f}] per encounter")
        parts.append(f'<g class="row"><title>{escape(tip)}</title>'
                     f'<path class="ci" d="M{cx:.1f} {y(row.ci_low or 0):.1f}'
                     f'V{y(row.ci_high or 0):.1f}M{x(s.low or 0):.1f} {cy:.1f}'
                     f'H{x(s.high or 0):.1f}"/>'
                     f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6" style="fill:{colour}"/>'
                     f"{_point_label(doctor, cx, cy, width)}</g>")
    parts.append("</svg>")
    return card("Accuracy against test cost, per doctor model", "".join(parts),
                "Each point: a doctor model's accuracy and mean test spend per encounter "
                "(price table: metrics/data/test_prices.csv, CMS fee schedules 2024); "
                "whiskers: 95% CIs. Up and to the left is better.")


def spend_ticks(highest: float, count: int = 4) -> tuple[list[float], int]:
    """Axis ticks from $0 past ``highest`` at a round step (1, 2, 2.5 or 5 x 10^k), and the
    decimals that keep every tick's label distinct ($0.25, $0.50, ...; never $0 $0 $1)."""
    raw = highest / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    ticks = [i * step for i in range(math.ceil(highest / step - 1e-9) + 1)]
    if len(ticks) < 2:
        ticks.append(step)
    decimals = 0
    while len({f"{t:.{decimals}f}" for t in ticks}) < len(ticks):
        decimals += 1
    return ticks, decimals


def _point_label(doctor: str, cx: float, cy: float, width: int) -> str:
    """A point's model name, to its left when it would run past the plot's right edge, below
    it when it would run past the top."""
    right = cx + 9 + 7.6 * len(doctor) > width
    x, anchor = (cx - 9, "end") if right else (cx + 9, "start")
    y = cy - 8 if cy > 30 else cy + 18  # below the point at the top of the plot
    return (f'<text class="label" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">'
            f"{escape(doctor)}</text>")
