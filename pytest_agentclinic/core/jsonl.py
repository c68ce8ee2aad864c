"""Reading JSONL files, gzipped or not, line by line with line numbers."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from .errors import InputError


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


class DamagedFile(InputError):
    """The file itself cannot be read to its end (a truncated gzip stream, binary data)."""


def json_lines(path: Path) -> Iterator[Line]:
    """Every non-blank line of a JSONL file; a line that is not JSON carries its error.

    A file that cannot be decoded (truncated or corrupt gzip, not UTF-8) raises
    :class:`DamagedFile` naming the file and the line where reading stopped.
    """
    number = 0
    with open_text(path) as handle:
        lines = iter(handle)
        number = 0
        while True:
            try:
                text = next(lines)
            except StopIteration:
                return
            except (EOFError, OSError, zlib.error, UnicodeDecodeError) as exc:
                raise DamagedFile(f"{path}:{number + 1}: cannot read the file: "
                                  f"{type(exc).__name__}: {exc}") from None
            number += 1
            for line in parse_lines([text]):
                yield Line(number, line.value, line.error, line.reason)


def parse_lines(lines: Iterable[str]) -> Iterator[Line]:
    """Every non-blank line of JSONL text already read; numbered from 1."""
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            yield Line(number, json.loads(text))
        except json.JSONDecodeError as exc:
            yield Line(number, error=f"not JSON ({exc.msg})", reason=exc.msg)
