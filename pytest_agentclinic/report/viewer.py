"""One self-contained page across runs: ``agentclinic view RUN [RUN ...]``.

The page answers what a release review asks of several runs (model versions, dates):

* accuracy over the runs, per doctor model, each with its 95% interval (cluster-adjusted
  Wilson over cases, as every table of the report);
* the cases that *flipped* between two runs (right in one, not in the other), each opening
  both transcripts side by side; the pair is chosen on the page (by default the last two);
* filters by specialty, bias and outcome over the items and the flips.

It is built from the records (``results.jsonl``) and transcripts alone, works offline (no
script or style is fetched), and embeds only the transcripts of items that flipped between
some two runs, so a page over large runs stays small.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from ..core.records import ResultRecord
from ..core.transcript import Transcript
from .clustered import cluster_wilson
from .statistics import per_case
from .tables import Table

#: The version of the page's embedded data (``ac-view-data``).
VIEW_DATA_VERSION = 1


@dataclass(frozen=True)
class ViewRun:
    """One run as the page shows it: its name, date and records, and the transcripts of the
    records that may be shown (by nodeid)."""

    name: str
    date: str
    records: Sequence[ResultRecord]
    transcripts: dict[str, Transcript | None]
    #: The run's protocol tables (``Protocol.tables`` and the report-table registry's).
    tables: Sequence[Table] = ()


def item_key(r: ResultRecord) -> str:
    """What identifies an item across runs: the case, the condition and the sample (not the
    doctor model, which is what runs of model versions change)."""
    key = "|".join(map(str, (r.dataset, r.case_id, r.bias, r.turn_budget, r.experiment,
                             r.answer_format, r.image_mode, r.sample,
                             r.models.get("patient", ""))))
    # A protocol's own conditions (a MediQ setting) tell its items of one case apart.
    return key + "".join(f"|{k}={v}" for k, v in sorted(r.conditions.items()))


def accuracy_rows(run: ViewRun) -> list[dict[str, Any]]:
    """Accuracy with its interval per doctor model of ``run``."""
    rows = []
    for doctor in sorted({r.doctor for r in run.records}):
        judged = [r for r in run.records if r.doctor == doctor and r.outcome != "error"]
        if not judged:
            continue
        correct = np.fromiter((r.outcome == "correct" for r in judged), np.float64, len(judged))
        sums, counts = per_case([r.case_id for r in judged], correct)
        low, high = cluster_wilson(sums, counts)
        rows.append({"run": run.name, "date": run.date, "doctor": doctor,
                     "accuracy": float(correct.mean()), "ci": [low, high], "n": len(judged),
                     "cases": len(sums)})
    return rows


def flipping_keys(runs: Sequence[ViewRun]) -> set[tuple[str, str]]:
    """(run, item key) of every item whose correctness differs in some other run."""
    right: dict[str, dict[str, bool]] = {}
    for run in runs:
        for r in run.records:
            if r.outcome != "error":
                right.setdefault(item_key(r), {})[run.name] = r.outcome == "correct"
    return {(run, key) for key, by_run in right.items() if len(set(by_run.values())) > 1
            for run in by_run}


def _turns(t: Transcript | None) -> list[list[str]]:
    return [[u.role, u.kind, u.text] for u in t.utterances] if t is not None else []


def view_data(runs: Sequence[ViewRun]) -> dict[str, Any]:
    """The page's data: runs, accuracy rows, items, and the flipped items' transcripts."""
    flipping = flipping_keys(runs)
    items, transcripts = [], {}
    for index, run in enumerate(runs):
        for r in run.records:
            key = item_key(r)
            items.append({"run": index, "key": key, "case": r.case_id, "doctor": r.doctor,
                          "specialty": r.specialty, "bias": r.bias, "outcome": r.outcome,
                          "given": r.given, "expected": r.expected, "sample": r.sample})
            if (run.name, key) in flipping:
                transcripts[f"{index}|{key}"] = _turns(run.transcripts.get(r.nodeid))
    return {"version": VIEW_DATA_VERSION,
            "runs": [{"name": run.name, "date": run.date, "items": len(run.records)}
                     for run in runs],
            "accuracy": [row for run in runs for row in accuracy_rows(run)],
            "items": items, "transcripts": transcripts,
            "tables": [{"run": index, "title": t.title, "headers": t.headers, "rows": t.rows}
                       for index, run in enumerate(runs) for t in run.tables]}


def render_view(runs: Sequence[ViewRun]) -> str:
    """The self-contained HTML page over ``runs`` (in the order given)."""
    template = resources.files(__package__).joinpath("viewer_template.html").read_text(
        encoding="utf-8")
    # "</" inside the JSON would end the script element: escape every "<".
    data = json.dumps(view_data(runs)).replace("<", "\\u003c")
    return template.replace("/*AC_VIEW_DATA*/null", data)
