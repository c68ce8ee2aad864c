"""The report's tables, built once from result records and rendered anywhere.

The terminal summary, ``summary.md``, ``summary.json``, the HTML report and ``agentclinic
report`` all show these same tables. Which tables appear depends on what the run varied:
specialties, biases, patient models, image modes, turn budgets, CRAFT-MD experiments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.records import ResultRecord
from .beyond import beyond_tables
from .conditions import condition_label, gate_cells, varied_fields
from .reducers import reducer_table
from .statistics import (
    GROUP_FIELDS,
    GroupRow,
    accuracy_table,
    field_value,
    group_rng,
    per_case,
    ratio_interval,
)


@dataclass(frozen=True)
class Table:
    """A titled table: printable cells plus JSON-able rows (for summary.json and plots)."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    data: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    #: How many leading columns name a row: a table too wide for the terminal is shown in
    #: parts, each repeating these columns.
    keys: int = 1


def pct(value: float | None) -> str:
    """A proportion as a percentage, or '-'."""
    return "-" if value is None else f"{value:.1%}"


def ci(row: GroupRow) -> str:
    """``[low, high]`` of a row's 95% interval."""
    if row.ci_low is None or row.ci_high is None:
        return "-"
    return f"[{row.ci_low:.1%}, {row.ci_high:.1%}]"


def cell(row: GroupRow | None) -> str:
    """Accuracy, interval and n in one compact cell (for pivots)."""
    if row is None or row.accuracy is None:
        return "-"
    return f"{row.accuracy:.1%} {ci(row)} n={row.n}"


def _plot_row(row: GroupRow, label: str) -> dict[str, Any]:
    return {"group": label, "n": row.n, "correct": row.correct, "accuracy": row.accuracy,
            "ci_low": row.ci_low, "ci_high": row.ci_high, "errors": row.errors,
            "no_diagnosis": row.no_diagnosis, "limit": row.limit}


def overview(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy by doctor model with everything else a release decision needs."""
    rows, data = [], []
    for r in accuracy_table(records, ("doctor",), resamples):
        tokens, cost = sum(r.tokens.values()), sum(r.cost_usd.values())
        rows.append([r.label, str(r.n), str(r.correct), pct(r.accuracy), ci(r), str(r.errors),
                     str(r.no_diagnosis), _num(r.mean_turns), _num(r.mean_tests), str(tokens),
                     f"{cost:.4f}", f"{r.cache_hits}/{r.calls}"])
        data.append({**_plot_row(r, r.label), "tokens": r.tokens, "cost_usd": r.cost_usd,
                     "mean_turns": r.mean_turns, "mean_tests": r.mean_tests,
                     "calls": r.calls, "cache_hits": r.cache_hits})
    headers = ["doctor", "n", "correct", "accuracy", "95% CI", "errors", "no dx", "turns",
               "tests", "tokens", "cost $", "cache hits"]
    note = "accuracy = correct / (items - errors); errors are infrastructure failures"
    if any(r.outcome == "limit" for r in records):
        note += ("; 'limit' encounters (stopped by a per-encounter budget) count as not "
                 f"correct: {sum(r.outcome == 'limit' for r in records)}")
    pooled = pooled_over(records)
    return Table("accuracy by doctor model" + (f" ({pooled})" if pooled else ""), headers,
                 rows, data, note + INTERVAL_NOTE)


#: What every accuracy interval is (said once under the first table).
INTERVAL_NOTE = ("; 95% CI: cluster-adjusted Wilson over cases (repeats of a case do not "
                 "narrow it)")


def pooled_over(records: Sequence[ResultRecord], exclude: Sequence[str] = ()) -> str:
    """``pooled over 13 bias values, 2 turn_budget values``, or '' when nothing varies
    (``exclude``: fields the table shows, so does not pool)."""
    parts = [f"{len({field_value(r, f) for r in records})} {f} values"
             for f in varied_fields(records) if f not in exclude]
    return "pooled over " + ", ".join(parts) if parts else ""


def condition_table(records: Sequence[ResultRecord]) -> Table:
    """Accuracy of each doctor model under each condition the run varies (the gate's cells)."""
    rows, data = [], []
    for c in gate_cells(records, ("all",)):
        (row,) = accuracy_table(c.records, (), 1)
        label = condition_label(c.condition)
        rows.append([c.doctor, label, str(row.n), str(row.cases), pct(row.accuracy), ci(row),
                     str(row.errors)])
        data.append({**_plot_row(row, f"{label} | {c.doctor}"), "doctor": c.doctor,
                     "condition": c.condition, "cases": row.cases})
    return Table("accuracy by condition", ["doctor", "condition", "n", "cases", "accuracy",
                                           "95% CI", "errors"], rows, data,
                 "each doctor model under each combination of the conditions the run varied",
                 keys=2)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def pivot(records: Sequence[ResultRecord], field_name: str, title: str,
          resamples: int) -> Table:
    """Rows: values of ``field_name``; columns: doctor models (readable with many of both)."""
    rows_by = {(r.key[0], r.key[1]): r
               for r in accuracy_table(records, ("doctor", field_name), resamples)}
    doctors = sorted({d for d, _ in rows_by})
    values = sorted({v for _, v in rows_by}, key=lambda v: (v == "unspecified", v))
    rows = [[v, *(cell(rows_by.get((d, v))) for d in doctors)] for v in values]
    data = [{**_plot_row(row, f"{v} | {d}" if len(doctors) > 1 else v), "doctor": d,
             field_name: v} for (d, v), row in sorted(rows_by.items())]
    return Table(title, [field_name, *doctors], rows, data)


def bias_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy per bias and model, normalised by the same model's unbiased accuracy."""
    rows_by = {(r.key[0], r.key[1]): r
               for r in accuracy_table(records, ("doctor", "bias"), resamples)}
    rows, data = [], []
    for (doctor, bias), row in sorted(rows_by.items()):
        base = rows_by.get((doctor, "none"))
        normalised = (row.accuracy / base.accuracy if base and base.accuracy and
                      row.accuracy is not None else None)
        refused = [r for r in records if r.doctor == doctor and r.bias == bias]
        refusals = sum(bool(r.refusals) for r in refused)
        rows.append([bias, doctor, cell(row), "-" if normalised is None else f"{normalised:.2f}",
                     f"{refusals}/{len(refused)}"])
        data.append({**_plot_row(row, f"{bias} | {doctor}"), "normalised": normalised,
                     "refusals": refusals})
    headers = ["bias", "doctor", "accuracy", "biased / unbiased", "refused to play the bias"]
    return Table("accuracy by bias", headers, rows, data, keys=2)


def specialty_bias_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy of each specialty under each bias variant (columns), per doctor model."""
    rows_by = {(r.key[0], r.key[1], r.key[2]): r
               for r in accuracy_table(records, ("doctor", "specialty", "bias"), resamples)}
    doctors = sorted({k[0] for k in rows_by})
    biases = sorted({k[2] for k in rows_by}, key=lambda b: (b != "none", b))
    rows = [[s, d, *(cell(rows_by.get((d, s, b))) for b in biases)]
            for s in sorted({k[1] for k in rows_by}) for d in doctors]
    data = [{**_plot_row(row, f"{s} \u00b7 {b}" + (f" | {d}" if len(doctors) > 1 else "")),
             "doctor": d, "specialty": s, "bias": b}
            for (d, s, b), row in sorted(rows_by.items())]
    return Table("accuracy by specialty and bias", ["specialty", "doctor", *biases], rows, data,
                 "each cell: accuracy [95% CI] n=judged encounters", keys=2)


def _mean_ci(records: Sequence[ResultRecord], value: Callable[[ResultRecord], int | None],
             seed_key: tuple[str, ...], resamples: int) -> tuple[float | None, str, int]:
    pairs = [(r.case_id, v) for r in records if (v := value(r)) is not None]
    if not pairs:
        return None, "-", 0
    sums, counts = per_case([c for c, _ in pairs], np.array([v for _, v in pairs], float))
    low, high = ratio_interval(sums, counts, resamples, group_rng(0, seed_key))
    return float(sums.sum() / counts.sum()), f"[{low:.1f}, {high:.1f}]", len(pairs)


def _rating(name: str) -> Callable[[ResultRecord], int | None]:
    def value(r: ResultRecord) -> int | None:
        rating: int | None = getattr(r.perception, name, None)
        return rating

    return value


def perception_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Mean patient ratings (1-10) with 95% intervals, by doctor model and bias."""
    rows, data = [], []
    groups: dict[tuple[str, str], list[ResultRecord]] = {}
    for r in records:
        if r.perception is not None:
            groups.setdefault((r.doctor, r.bias), []).append(r)
    for key, rs in sorted(groups.items()):
        line: list[str] = [*key]
        entry: dict[str, Any] = {"doctor": key[0], "bias": key[1]}
        for name in ("confidence", "compliance", "consultation"):
            mean, interval, n = _mean_ci(rs, _rating(name), (*key, name), resamples)
            line.append("-" if mean is None else f"{mean:.1f} {interval} n={n}")
            entry[name] = mean
        rows.append(line)
        data.append(entry)
    return Table("patient perception (1-10)", ["doctor", "bias", "confidence", "compliance",
                                                "consultation"], rows, data,
                 "missing or out-of-range ratings are left out, never guessed", keys=2)


def image_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy and how often the doctor asked for the images, by image mode."""
    image = [r for r in records if r.image_mode]
    rows, data = [], []
    for mode in sorted({r.image_mode or "" for r in image}):
        mine = [r for r in image if r.image_mode == mode]
        (row,) = accuracy_table(mine, (), resamples)
        asked = sum(r.image_requested_turn is not None for r in mine)
        rows.append([mode, cell(row), f"{asked}/{len(mine)}"])
        data.append({**_plot_row(row, mode), "requested": asked})
    return Table("image cases by image mode", ["mode", "accuracy", "doctor asked for images"],
                 rows, data)


def budget_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy against the turn budget, and how often the budget ran out."""
    rows, data = [], []
    for row in accuracy_table(records, ("doctor", "turn_budget"), resamples):
        doctor, budget = row.key
        rows.append([budget, doctor, cell(row), f"{row.no_diagnosis}/{row.n}"])
        data.append({**_plot_row(row, f"{budget} | {doctor}"), "turn_budget": int(budget),
                     "doctor": doctor})
    return Table("accuracy by turn budget", ["turns", "doctor", "accuracy",
                                             "budget ran out (no diagnosis)"], rows, data, keys=2)


def craftmd_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """The CRAFT-MD paper's shape: experiments as rows, answer modes as columns, per model."""
    rows_by = {r.key: r for r in accuracy_table(records, ("doctor", "experiment",
                                                            "answer_format"), resamples)}
    answers = sorted({k[2] for k in rows_by})
    order = ["vignette", "multiturn", "singleturn", "summarized", "examonly"]
    keys = sorted({(k[0], k[1]) for k in rows_by},
                  key=lambda k: (k[0], order.index(k[1]) if k[1] in order else 99))
    rows = [[d, e, *(cell(rows_by.get((d, e, a))) for a in answers)] for d, e in keys]
    data = [{**_plot_row(r, f"{k[1]} {k[2]} | {k[0]}"), "doctor": k[0], "experiment": k[1],
             "answer_format": k[2]} for k, r in sorted(rows_by.items())]
    return Table("CRAFT-MD: accuracy by experiment and answer mode",
                 ["doctor", "experiment", *answers], rows, data, keys=2)


def library_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """The case library: cases and difficulty mix per specialty, with each model's accuracy."""
    rows_by = {(r.key[0], r.key[1]): r
               for r in accuracy_table(records, ("doctor", "specialty"), resamples)}
    doctors = sorted({d for d, _ in rows_by})
    rows, data = [], []
    for specialty in sorted({r.specialty for r in records}):
        levels: dict[str, set[str]] = {}
        for r in records:
            if r.specialty == specialty:
                levels.setdefault(r.difficulty or "?", set()).add(r.case_id)
        cases = len(set().union(*levels.values()))
        mix = ", ".join(f"{len(levels[k])} {k}" for k in ("easy", "medium", "hard", "?")
                        if k in levels)
        rows.append([specialty, str(cases), mix,
                     *(pct(getattr(rows_by.get((d, specialty)), "accuracy", None))
                       for d in doctors)])
        data.append({"specialty": specialty, "cases": cases, "mix": mix})
    total = len({r.case_id for r in records})
    rows.append(["all", str(total), "", *(pct(r.accuracy)
                                         for r in accuracy_table(records, ("doctor",), 1))])
    return Table("case library", ["specialty", "cases", "difficulty", *doctors], rows, data)


def usage_table(records: Sequence[ResultRecord]) -> Table:
    """Tokens, cost and latency per role and model (errors included: they spent it too)."""
    totals: dict[tuple[str, str], list[float]] = {}
    for r in records:
        for role, u in r.usage.items():
            if not u.calls:
                continue  # an offline agent: nothing to show
            t = totals.setdefault((role, r.models.get(role, "?")), [0.0] * 6)
            for k, v in enumerate((u.calls, u.cache_hits, u.prompt_tokens, u.completion_tokens,
                                   u.cost_usd, u.latency_s)):
                t[k] += v
    rows, data = [], []
    for (role, model), (calls, hits, prompt, completion, cost, latency) in sorted(totals.items()):
        sent = calls - hits
        mean_latency = latency / sent if sent else None
        rows.append([role, model, str(int(calls)), str(int(hits)), str(int(prompt)),
                     str(int(completion)), f"{cost:.4f}",
                     "-" if mean_latency is None else f"{mean_latency:.2f}"])
        data.append({"role": role, "model": model, "calls": int(calls), "cache_hits": int(hits),
                     "prompt_tokens": int(prompt), "completion_tokens": int(completion),
                     "cost_usd": cost, "mean_latency_s": mean_latency})
    return Table("usage by role and model", ["role", "model", "calls", "cache hits",
                                             "prompt tokens", "completion tokens", "cost $",
                                             "s per call"], rows, data,
                 "s per call: mean latency of the calls sent (cache hits cost no time)", keys=2)


def _varied(records: Sequence[ResultRecord], field_name: str) -> bool:
    return len({GROUP_FIELDS[field_name](r) for r in records}) > 1


def build_tables(records: Sequence[ResultRecord], resamples: int = 10_000,
                 protocol_tables: Sequence[Table] = ()) -> list[Table]:
    """Every table this run calls for; ``protocol_tables`` (the protocols' own, e.g.
    CRAFT-MD's experiment x answer mode) follow the overview and the conditions; a table
    that pools conditions says so in its title."""
    tables = [overview(records, resamples)]
    if varied_fields(records):
        tables.append(condition_table(records))
    tables += protocol_tables
    if _varied(records, "specialty"):
        tables.append(_pooling(pivot(records, "specialty", "accuracy by specialty", resamples),
                               records))
    if _varied(records, "dataset"):
        tables.append(_pooling(pivot(records, "dataset", "accuracy by dataset", resamples),
                               records))
    if any(r.difficulty for r in records):
        tables.append(_pooling(library_table(records, resamples), records))
    if any(r.bias != "none" for r in records):
        tables.append(_pooling(bias_table(records, resamples), records, ("bias",)))
        if _varied(records, "specialty") and _varied(records, "bias"):
            tables.append(_pooling(specialty_bias_table(records, resamples), records,
                                   ("bias",)))
    if _varied(records, "patient"):
        tables.append(_pooling(pivot(records, "patient", "accuracy by patient model (doctor x "
                                     "patient)", resamples), records, ("patient",)))
    if any(r.image_mode for r in records):
        tables.append(_pooling(image_table(records, resamples), records))
    if _varied(records, "turn_budget"):
        tables.append(_pooling(budget_table(records, resamples), records, ("turn_budget",)))
    if any(r.perception is not None for r in records):
        tables.append(_pooling(perception_table(records, resamples), records, ("bias",)))
    reduced = reducer_table(records)
    if reduced is not None:
        tables.append(Table(*reduced))
    tables.extend(Table(*parts, keys=parts.headers.index("n") + 1)
                  for parts in beyond_tables(records, resamples))
    if any(u.calls for r in records for u in r.usage.values()):
        tables.append(usage_table(records))
    return tables


def _pooling(table: Table, records: Sequence[ResultRecord], own: tuple[str, ...] = ()) -> Table:
    """``table`` with "(pooled over ...)" added to its title for the varied conditions it
    does not show."""
    pooled = pooled_over(records, exclude=own)
    return replace(table, title=f"{table.title} ({pooled})") if pooled else table
