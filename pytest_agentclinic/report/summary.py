"""The terminal summary: accuracy by doctor model, with the roles that produced it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from ..settings import Settings
from .gate import GateResult
from .records import ResultRecord
from .stats import group_rows


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def doctor_table(records: Sequence[ResultRecord]) -> str:
    """Accuracy (n, errors, turns, tests, tokens, cost, cache) by doctor model."""
    rows = []
    for model, g in group_rows(records, lambda r: r.doctor).items():
        rows.append([model, g["n"], g["correct"], _fmt(g["accuracy"], ".1%"), g["errors"],
                     g["no_diagnosis"], _fmt(g["mean_turns"], ".1f"), _fmt(g["mean_tests"], ".1f"),
                     g["tokens"], f"{g['cost_usd']:.4f}", f"{g['cache_hits']}/{g['calls']}"])
    headers = ["doctor", "n", "correct", "accuracy", "errors", "no dx", "turns", "tests",
               "tokens", "cost $", "cache hits"]
    return tabulate(rows, headers=headers, tablefmt="github")


def print_gate(tr: Any, result: GateResult, bad_records: int) -> None:
    """Say why the run passed or failed the gate."""
    tr.write_sep("=", "agentclinic gate")
    for line in result.lines:
        tr.write_line(line)
    if bad_records:
        tr.write_line(f"{bad_records} bad case record(s): FAIL")
    verdict = "PASSED" if result.passed and not bad_records else "FAILED"
    tr.write_line(f"gate {verdict}: the exit status is the gate's verdict "
                  "(misdiagnosed items still show as failed above)")


def print_summary(tr: Any, settings: Settings, records: Sequence[ResultRecord], run_dir: Path,
                  bad_records: int) -> None:
    """Write the agentclinic section of the terminal summary."""
    tr.write_sep("=", "agentclinic summary")
    tr.write_line("roles: " + ", ".join(f"{k}={v}" for k, v in settings.roles.items()))
    tr.write_line("accuracy = correct / (items - errors); errors are infrastructure failures")
    for line in doctor_table(records).splitlines():
        tr.write_line(line)
    if bad_records:
        tr.write_line(f"bad case records (see errors above): {bad_records}")
    tr.write_line(f"results: {run_dir}")
