"""Reading JSONL files, gzipped or not, line by line with line numbers."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast


def open_text(path: Path, mode: str = "rt") -> IO[str]:
    """Open ``path`` as UTF-8 text; a ``.gz`` file is (de)compressed on the fly.

    The handle is returned for the caller to close (``with open_text(...) as fh``).
    """
    if path.suffix == ".gz":
        return cast(IO[str], gzip.open(path, mode, encoding="utf-8"))
    return open(path, mode.replace("t", ""), encoding="utf-8")


@dataclass(frozen=True)
class Line:
    """One non-blank line: its 1-based number and value, or why it is not JSON."""

    number: int
    value: Any = None
    error: str | None = None
    #: The JSON parser's own message, when the line is not JSON.
    reason: str = ""


def json_lines(path: Path) -> Iterator[Line]:
    """Every non-blank line of a JSONL file; a line that is not JSON carries its error."""
    with open_text(path) as handle:
        yield from parse_lines(handle)


def parse_lines(lines: Iterable[str]) -> Iterator[Line]:
    """Every non-blank line of JSONL text already read; numbered from 1."""
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            yield Line(number, json.loads(text))
        except json.JSONDecodeError as exc:
            yield Line(number, error=f"not JSON ({exc.msg})", reason=exc.msg)
