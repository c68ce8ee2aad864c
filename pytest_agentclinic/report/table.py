"""The report's table type, shared by every module that builds tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Table:
    """A titled table: printable cells plus JSON-able rows (for summary.json and plots)."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    data: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
