"""The terminal summary: every report table, the roles that produced them, and the gate.

The terminal gets at most :data:`WIDTH` columns per line: a table wider than that is shown
in parts, each repeating the columns that name a row, and an overlong cell is shortened
with "…" (summary.md and summary.json keep every cell whole).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .gate import GateResult
from .tables import Table

#: The widest line the terminal summary prints.
WIDTH = 100


def render_table(table: Table, fmt: str = "github") -> str:
    """A table as text (``github`` for the terminal and markdown)."""
    return tabulate(table.rows, headers=table.headers, tablefmt=fmt, disable_numparse=True)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "\u2026"


def _columns(table: Table) -> list[list[str]]:
    """Each column's header and cells."""
    return [[h, *(row[i] if i < len(row) else "" for row in table.rows)]
            for i, h in enumerate(table.headers)]


def _render(columns: Sequence[Sequence[str]]) -> list[str]:
    rows = [list(r) for r in zip(*(col[1:] for col in columns), strict=True)]
    return tabulate(rows, headers=[col[0] for col in columns], tablefmt="github",
                    disable_numparse=True).splitlines()


def _width(columns: Sequence[Sequence[str]]) -> int:
    return max(len(line) for line in _render(columns))


def _fit(columns: list[list[str]], width: int) -> list[list[str]]:
    """The columns with their widest cells shortened until the table fits ``width``."""
    limits = [max(len(c) for c in col) for col in columns]
    fitted = columns
    while _width(fitted) > width and max(limits) > 4:
        limits[limits.index(max(limits))] -= 1
        fitted = [[_shorten(c, limit) for c in col]
                  for col, limit in zip(columns, limits, strict=True)]
    return fitted


def fit_table(table: Table, width: int = WIDTH) -> list[str]:
    """The table's lines, none longer than ``width``: in parts when it is too wide, each part
    repeating the ``table.keys`` leading columns."""
    columns = _columns(table)
    keys, rest = columns[: table.keys], columns[table.keys:]
    parts: list[list[list[str]]] = []
    for col in rest:
        if parts and _width([*keys, *parts[-1], col]) <= width:
            parts[-1].append(col)
        else:
            parts.append([col])
    lines: list[str] = []
    for i, part in enumerate(parts or [[]]):
        lines += ([""] if i else []) + _render(_fit([*keys, *part], width))
    return lines


def wrap(text: str, width: int = WIDTH) -> list[str]:
    """``text`` as lines of at most ``width`` characters (long words broken)."""
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def render_text(roles: Mapping[str, str], tables: Sequence[Table],
                width: int = WIDTH) -> list[str]:
    """The summary's lines, each at most ``width`` long: roles, then each table under its
    title."""
    lines = wrap("roles: " + ", ".join(f"{k}={v}" for k, v in roles.items()), width)
    for table in tables:
        lines += ["", *wrap(f"{table.title}:", width), *fit_table(table, width)]
        if table.note:
            lines += wrap(table.note, width)
    return lines


def print_gate(tr: Any, result: GateResult) -> None:
    """Say why the run passed or failed the gate."""
    tr.write_sep("=", "agentclinic gate")
    for line in result.lines:  # one line per check, whole: CI logs are searched for them
        tr.write_line(line)
    verdict = "PASSED" if result.passed else "FAILED"
    tr.write_line(f"gate {verdict}: the exit status is the gate's verdict (misdiagnosed "
                  "items are measurements under a gate: they show as xfailed, -rx lists them)",
                  bold=True, **{"green" if result.passed else "red": True})


def print_summary(tr: Any, roles: Mapping[str, str], tables: Sequence[Table], run_dir: Path,
                  bad_records: int) -> None:
    """Write the agentclinic section of the terminal summary."""
    tr.write_sep("=", "agentclinic summary")
    for line in render_text(roles, tables):
        tr.write_line(line)
    if bad_records:
        tr.write_line(f"bad case records (see errors above): {bad_records}")
    tr.write_line(f"results: {_shown(run_dir)}")
    tr.write_line("  (report.html, summary.md, results.jsonl, transcripts/)")


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it is under it (shorter to read)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except (ValueError, OSError):
        return path
