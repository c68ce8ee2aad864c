"""The one reader of CRAFT-MD's case table (``usmle_and_derm_dataset.csv`` and files shaped
like it): the converter, the importer, ``grade``, ``meld`` and the evaluation tools all read
it here."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InputError


@dataclass
class CsvTable:
    """A CSV file's columns and rows, each row with the line it starts on (header = 1)."""

    path: Path
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    #: Rows that could not be read (``keep_going``): the line each starts on, and why.
    bad_rows: list[tuple[int, str]] = field(default_factory=list)


def read_table(path: Path, keep_going: bool = False) -> CsvTable:
    """Every row; a short row reads as empty fields. A row may span several lines (quoted
    newlines), so its number is the line it starts on. Raises OSError, UnicodeDecodeError
    or csv.Error for the caller to name the file; with ``keep_going`` a row the csv module
    refuses (a field over its 131,072-character limit) goes to ``bad_rows`` instead, and the
    rows after it are read."""
    table = CsvTable(path)
    # utf-8-sig: spreadsheet exports start with a byte-order mark.
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh, restval="")
        table.columns = list(reader.fieldnames or [])
        start = reader.line_num + 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                if not keep_going:
                    raise
                table.bad_rows.append((start, str(exc)))
            else:
                table.rows.append((start, {k: v or "" for k, v in row.items()
                                           if k is not None}))
            start = reader.line_num + 1
    return table


def choices(row: dict[str, str]) -> tuple[str, ...]:
    """The row's answer choices (``choice_1``, ``choice_2``, ... in order), empty ones left out."""
    numbered = sorted((k for k in row if k.startswith("choice_") and k[7:].isdigit()),
                      key=lambda k: int(k[7:]))
    return tuple(row[k] for k in numbered if row[k])


@dataclass(frozen=True)
class CaseInfo:
    """What the case table says about one case."""

    specialty: str
    dataset: str
    choices: tuple[str, ...] = ()


def case_table(path: Path) -> dict[str, CaseInfo]:
    """``case_id`` -> specialty (``category``), dataset and answer choices; an InputError
    naming the file when it is not a readable CSV."""
    try:
        rows = read_table(path).rows
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"not a CSV case table ({exc})", path=path) from None
    return {row["case_id"]: CaseInfo(row.get("category", ""), row.get("dataset", ""),
                                     choices(row))
            for _, row in rows if row.get("case_id")}
