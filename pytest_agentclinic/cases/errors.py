"""The error of a record that could not become a case: one line naming file, line and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.text import terminal_safe


@dataclass(frozen=True)
class CaseError:
    """A record that could not become a case."""

    path: Path
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        # One line, whatever the file holds: its keys and values reach the terminal here.
        return terminal_safe(f"{self.path}:{self.line}: field {self.field!r}: {self.message}",
                             newlines=False)
