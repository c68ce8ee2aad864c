"""CRAFT-MD's own report table: the paper's experiments x answer modes (the protocol adds it
to a run's report, and the importer of recorded runs to its summary)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.records import ResultRecord
from ..report.statistics import accuracy_table
from ..report.tables import Table, cell, plot_row


def craftmd_table(records: Sequence[ResultRecord], resamples: int) -> Table:
    """The CRAFT-MD paper's shape: experiments as rows, answer modes as columns, per model."""
    rows_by = {r.key: r for r in accuracy_table(records, ("doctor", "experiment",
                                                            "answer_format"), resamples)}
    answers = sorted({k[2] for k in rows_by})
    order = ["vignette", "multiturn", "singleturn", "summarized", "examonly"]
    keys = sorted({(k[0], k[1]) for k in rows_by},
                  key=lambda k: (k[0], order.index(k[1]) if k[1] in order else 99))
    rows = [[d, e, *(cell(rows_by.get((d, e, a))) for a in answers)] for d, e in keys]
    data = [{**plot_row(r, f"{k[1]} {k[2]} | {k[0]}"), "doctor": k[0], "experiment": k[1],
             "answer_format": k[2]} for k, r in sorted(rows_by.items())]
    return Table("CRAFT-MD: accuracy by experiment and answer mode",
                 ["doctor", "experiment", *answers], rows, data, keys=2,
                 id="craftmd_by_experiment_and_answer_mode")
