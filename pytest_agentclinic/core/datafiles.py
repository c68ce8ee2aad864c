"""The one reader of the word tables the package ships as data (``<folder>/data/*.tsv``).

A table is UTF-8 text, one row a line, its cells separated by tabs; blank lines and lines
starting with ``#`` (headings, notes) are passed over. Tables of words live in these files
rather than in code: a reviewer reads them as the lists they are, and a new word is one line.
A row that is not as its table needs is an :class:`~.errors.InputError` naming the file and
the line, raised when the table is read (at import of the module that holds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError

if TYPE_CHECKING:  # importlib.resources.abc is 3.11's name; only the annotations need it
    from importlib.resources.abc import Traversable


@dataclass(frozen=True)
class Row:
    """One row of a table, with where it stands (for the errors its reader raises)."""

    path: str
    line: int
    cells: tuple[str, ...]

    def error(self, message: str, field: str | None = None) -> InputError:
        """An error about this row, naming its file, line and (when given) field."""
        return InputError(message, path=self.path, line=self.line, field=field)


def data_file(package: str, name: str) -> Traversable:
    """The table ``name`` in ``package``'s ``data`` folder (installed with the package);
    ``package`` is the caller's ``__package__``."""
    return resources.files(package).joinpath("data", name)


def read_rows(source: Traversable | Path, columns: int) -> list[Row]:
    """The rows of the table ``source``, each of exactly ``columns`` non-empty cells."""
    rows: list[Row] = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        row = Row(str(source), number, tuple(line.split("\t")))
        if len(row.cells) != columns:
            raise row.error(f"{len(row.cells)} tab-separated cells, the table has {columns}")
        if not all(cell and cell == cell.strip() for cell in row.cells):
            raise row.error("an empty cell, or one with spaces around it")
        rows.append(row)
    return rows


def read_pairs(source: Traversable | Path) -> dict[str, str]:
    """A table of two columns as a dict, in the file's order; a key given twice is refused
    (a dict literal would have kept the last one silently)."""
    pairs: dict[str, str] = {}
    for row in read_rows(source, 2):
        key, value = row.cells
        if key in pairs:
            raise row.error(f"{key!r} is given twice")
        pairs[key] = value
    return pairs
