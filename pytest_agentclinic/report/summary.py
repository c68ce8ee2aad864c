"""The terminal summary: every report table, the roles that produced them, and the gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .gate import GateResult
from .tables import Table


def render_table(table: Table, fmt: str = "github") -> str:
    """A table as text (``github`` for the terminal and markdown)."""
    return tabulate(table.rows, headers=table.headers, tablefmt=fmt, disable_numparse=True)


def render_text(roles: Mapping[str, str], tables: Sequence[Table]) -> list[str]:
    """The summary's lines: roles, then each table under its title."""
    lines = ["roles: " + ", ".join(f"{k}={v}" for k, v in roles.items())]
    for table in tables:
        lines += ["", f"{table.title}:", *render_table(table).splitlines()]
        if table.note:
            lines.append(table.note)
    return lines


def print_gate(tr: Any, result: GateResult) -> None:
    """Say why the run passed or failed the gate."""
    tr.write_sep("=", "agentclinic gate")
    for line in result.lines:
        tr.write_line(line)
    verdict = "PASSED" if result.passed else "FAILED"
    tr.write_line(f"gate {verdict}: the exit status is the gate's verdict (misdiagnosed "
                  "items are measurements under a gate: they show as xfailed, -rx lists them)")


def print_summary(tr: Any, roles: Mapping[str, str], tables: Sequence[Table], run_dir: Path,
                  bad_records: int) -> None:
    """Write the agentclinic section of the terminal summary."""
    tr.write_sep("=", "agentclinic summary")
    for line in render_text(roles, tables):
        tr.write_line(line)
    if bad_records:
        tr.write_line(f"bad case records (see errors above): {bad_records}")
    tr.write_line(f"results: {run_dir} (report.html, summary.md, results.jsonl, transcripts/)")
