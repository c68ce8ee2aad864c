"""The error of a record that could not become a case: one line naming file, line and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CaseError:
    """A record that could not become a case."""

    path: Path
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: field {self.field!r}: {self.message}"
