"""The report's tables, built once from result records and rendered anywhere.

The terminal summary, ``summary.md``, ``summary.json``, the HTML report and ``agentclinic
report`` all show these same tables. Which tables appear depends on what the run varied:
specialties, datasets, patient models, turn budgets and any other condition. Each protocol
adds its own after the conditions (``Protocol.tables``: AgentClinic's biases, image modes and
perception in ``protocols/agentclinic_tables.py``, CRAFT-MD's experiments x answer modes in
``protocols/craftmd_tables.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.records import ResultRecord
from .beyond import beyond_tables
from .conditions import condition_label, gate_cells, varied_fields
from .reducers import reducer_table
from .statistics import (
    GroupRow,
    accuracy_table,
    field_value,
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
    #: A stable name to find the table by (its title changes: "(pooled over ...)"); a
    #: table given none is named after its title as first given (:func:`table_id`).
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", table_id(self.title))


#: The ids of the tables the summary and the gate read.
BY_DOCTOR = "by_doctor"
BY_CONDITION = "by_condition"


def table_id(title: str) -> str:
    """The id of a table named ``title``: its words in lower case joined by ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "table"


def table_by_id(tables: Iterable[Table], wanted: str) -> Table | None:
    """The first of ``tables`` whose id is ``wanted``, or None."""
    return next((t for t in tables if t.id == wanted), None)


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


def plot_row(row: GroupRow, label: str) -> dict[str, Any]:
    """A row's JSON-able numbers (what the charts plot), labelled ``label``."""
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
        data.append({**plot_row(r, r.label), "tokens": r.tokens, "cost_usd": r.cost_usd,
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
                 rows, data, note + INTERVAL_NOTE, id=BY_DOCTOR)


#: What every accuracy interval is (said once under the first table).
INTERVAL_NOTE = ("; 95% CI: cluster-adjusted Wilson over cases (repeats of a case do not "
                 "narrow it)")


def pooled_over(records: Sequence[ResultRecord], exclude: Sequence[str] = ()) -> str:
    """``pooled over 13 bias values, 2 turn_budget values``, or '' when nothing varies
    (``exclude``: fields the table shows, so does not pool)."""
    parts = [f"{len({r.condition(f) for r in records})} {f} values"
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
        data.append({**plot_row(row, f"{label} | {c.doctor}"), "doctor": c.doctor,
                     "condition": c.condition, "cases": row.cases})
    return Table("accuracy by condition", ["doctor", "condition", "n", "cases", "accuracy",
                                           "95% CI", "errors"], rows, data,
                 "each doctor model under each combination of the conditions the run varied",
                 keys=2, id=BY_CONDITION)


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
    data = [{**plot_row(row, f"{v} | {d}" if len(doctors) > 1 else v), "doctor": d,
             field_name: v} for (d, v), row in sorted(rows_by.items())]
    return Table(title, [field_name, *doctors], rows, data, id=f"by_{field_name}")


def budget_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy against the turn budget, and how often the budget ran out."""
    rows, data = [], []
    for row in accuracy_table(records, ("doctor", "turn_budget"), resamples):
        doctor, budget = row.key
        rows.append([budget, doctor, cell(row), f"{row.no_diagnosis}/{row.n}"])
        data.append({**plot_row(row, f"{budget} | {doctor}"), "turn_budget": int(budget),
                     "doctor": doctor})
    return Table("accuracy by turn budget", ["turns", "doctor", "accuracy",
                                             "budget ran out (no diagnosis)"], rows, data, keys=2,
                 id="by_turn_budget")


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
    return Table("case library", ["specialty", "cases", "difficulty", *doctors], rows, data,
                 id="case_library")


def usage_table(records: Sequence[ResultRecord]) -> Table:
    """Tokens, cost and latency per role and model (errors included: they spent it too)."""
    totals: dict[tuple[str, str], list[float]] = {}
    for r in records:
        for role, u in r.usage.items():
            if not u.calls:
                continue  # an offline agent: nothing to show
            t = totals.setdefault((role, r.models.get(role, "?")), [0.0] * 7)
            for k, v in enumerate((u.calls, u.cache_hits, u.prompt_tokens, u.completion_tokens,
                                   u.cost_usd, u.latency_s, u.saved_usd)):
                t[k] += v
    rows, data = [], []
    for (role, model), (calls, hits, prompt, completion, cost, latency,
                        saved) in sorted(totals.items()):
        sent = calls - hits
        mean_latency = latency / sent if sent else None
        # What the run cost (a cache hit costs nothing) and what it would cost uncached.
        rows.append([role, model, str(int(calls)), str(int(hits)), str(int(prompt)),
                     str(int(completion)), f"{cost:.4f}", f"{cost + saved:.4f}",
                     "-" if mean_latency is None else f"{mean_latency:.2f}"])
        data.append({"role": role, "model": model, "calls": int(calls), "cache_hits": int(hits),
                     "prompt_tokens": int(prompt), "completion_tokens": int(completion),
                     "cost_usd": cost, "uncached_cost_usd": cost + saved,
                     "mean_latency_s": mean_latency})
    return Table("usage by role and model", ["role", "model", "calls", "cache hits",
                                             "prompt tokens", "completion tokens", "cost $",
                                             "uncached $",
                                             "s per call"], rows, data,
                 "s per call: mean latency of the calls sent (cache hits cost no time)", keys=2)


def varied(records: Sequence[ResultRecord], field_name: str) -> bool:
    """Whether ``records`` hold more than one value of ``field_name``."""
    return len({field_value(r, field_name) for r in records}) > 1


def build_tables(records: Sequence[ResultRecord], resamples: int = 10_000,
                 protocol_tables: Sequence[Table] = ()) -> list[Table]:
    """Every table this run calls for; ``protocol_tables`` (the protocols' own, e.g.
    CRAFT-MD's experiment x answer mode) follow the overview and the conditions; a table
    that pools conditions says so in its title."""
    tables = [overview(records, resamples)]
    if varied_fields(records):
        tables.append(condition_table(records))
    tables += protocol_tables
    if varied(records, "specialty"):
        tables.append(pooling(pivot(records, "specialty", "accuracy by specialty", resamples),
                               records))
    if varied(records, "dataset"):
        tables.append(pooling(pivot(records, "dataset", "accuracy by dataset", resamples),
                               records))
    if any(r.difficulty for r in records):
        tables.append(pooling(library_table(records, resamples), records))
    if varied(records, "patient"):
        tables.append(pooling(pivot(records, "patient", "accuracy by patient model (doctor x "
                                     "patient)", resamples), records, ("patient",)))
    if varied(records, "turn_budget"):
        tables.append(pooling(budget_table(records, resamples), records, ("turn_budget",)))
    reduced = reducer_table(records)
    if reduced is not None:
        tables.append(Table(*reduced))
    tables.extend(Table(*parts, keys=parts.headers.index("n") + 1)
                  for parts in beyond_tables(records, resamples))
    if any(u.calls for r in records for u in r.usage.values()):
        tables.append(usage_table(records))
    return tables


def pooling(table: Table, records: Sequence[ResultRecord], own: tuple[str, ...] = ()) -> Table:
    """``table`` with "(pooled over ...)" added to its title for the varied conditions it
    does not show."""
    pooled = pooled_over(records, exclude=own)
    return replace(table, title=f"{table.title} ({pooled})") if pooled else table
