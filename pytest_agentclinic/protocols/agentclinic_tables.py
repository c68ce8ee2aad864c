"""AgentClinic's own report tables: its biases, the patient's perception of the doctor, and
its image cases (the protocol adds them to a run's report through
:meth:`~pytest_agentclinic.protocols.base.Protocol.tables`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.records import ResultRecord
from ..report.statistics import accuracy_table, group_rng, per_case, ratio_interval
from ..report.tables import Table, cell, plot_row, pooling, varied


def agentclinic_tables(records: Sequence[ResultRecord], resamples: int) -> list[Table]:
    """The tables AgentClinic's records call for; each says what it pools."""
    tables = []
    if any(r.bias != "none" for r in records):
        tables.append(pooling(bias_table(records, resamples), records, ("bias",)))
        if varied(records, "specialty") and varied(records, "bias"):
            tables.append(pooling(specialty_bias_table(records, resamples), records,
                                  ("bias",)))
    if any(r.image_mode for r in records):
        tables.append(pooling(image_table(records, resamples), records))
    if any(r.perception is not None for r in records):
        tables.append(pooling(perception_table(records, resamples), records, ("bias",)))
    return tables


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
        data.append({**plot_row(row, f"{bias} | {doctor}"), "normalised": normalised,
                     "refusals": refusals})
    headers = ["bias", "doctor", "accuracy", "biased / unbiased", "refused to play the bias"]
    return Table("accuracy by bias", headers, rows, data, keys=2, id="by_bias")


def specialty_bias_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy of each specialty under each bias variant (columns), per doctor model."""
    rows_by = {(r.key[0], r.key[1], r.key[2]): r
               for r in accuracy_table(records, ("doctor", "specialty", "bias"), resamples)}
    doctors = sorted({k[0] for k in rows_by})
    biases = sorted({k[2] for k in rows_by}, key=lambda b: (b != "none", b))
    rows = [[s, d, *(cell(rows_by.get((d, s, b))) for b in biases)]
            for s in sorted({k[1] for k in rows_by}) for d in doctors]
    data = [{**plot_row(row, f"{s} \u00b7 {b}" + (f" | {d}" if len(doctors) > 1 else "")),
             "doctor": d, "specialty": s, "bias": b}
            for (d, s, b), row in sorted(rows_by.items())]
    return Table("accuracy by specialty and bias", ["specialty", "doctor", *biases], rows, data,
                 "each cell: accuracy [95% CI] n=judged encounters", keys=2,
                 id="by_specialty_and_bias")


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
                 "missing or out-of-range ratings are left out, never guessed", keys=2,
                 id="patient_perception")


def image_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """Accuracy and how often the doctor asked for the images, by image mode."""
    image = [r for r in records if r.image_mode]
    rows, data = [], []
    for mode in sorted({r.image_mode or "" for r in image}):
        mine = [r for r in image if r.image_mode == mode]
        (row,) = accuracy_table(mine, (), resamples)
        asked = sum(r.image_requested_turn is not None for r in mine)
        rows.append([mode, cell(row), f"{asked}/{len(mine)}"])
        data.append({**plot_row(row, mode), "requested": asked})
    return Table("image cases by image mode", ["mode", "accuracy", "doctor asked for images"],
                 rows, data, id="by_image_mode")
