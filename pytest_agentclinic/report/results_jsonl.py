"""``results.jsonl`` line by line: read into records, written whole, or appended as items
finish.

Only :mod:`.rundir`, the run directory's one reader and writer, uses this module; it offers
what others need under its own name.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from ..core.heap import gc_paused
from ..core.records import ResultRecord
from ..core.redact import redact
from ..core.transcript import Perception, Usage

RESULTS = "results.jsonl"


def _first_error(exc: ValueError) -> str:
    """One line: the first invalid field and why (pydantic lists every field, many lines)."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        more = exc.error_count() - 1
        return (f"field '{where}': {first['msg']}" if where else first["msg"]) + (
            f" (and {more} more)" if more else "")
    return str(exc).splitlines()[0]


class _SharedParts:
    """Builds many records, one object for what is equal among them where no one can tell.

    Measured at 8,000 records, each held ~11.8 KB, two thirds of it copies of equal things:
    * a record's usage per role and its perception ratings are frozen models, and most are
      equal to another record's (every role that made no call, the offline ratings): one
      object each (~1.3 KB per role per record);
    * pydantic keeps, per model, the set of the fields its input gave (~2.3 KB for a record,
      0.7 KB for its measures); every results.jsonl line gives every field, so one set per
      model class stands for them all. Pydantic only ever adds a field's name to the set
      (on assignment), and that name is in it already.
    """

    def __init__(self) -> None:
        self._seen: dict[Usage | Perception, Any] = {}
        self._fields: dict[type[BaseModel], set[str]] = {}

    def record(self, line: bytes | str) -> ResultRecord:
        """The record of one results.jsonl line, sharing what earlier lines hold."""
        record = ResultRecord.model_validate_json(line)
        for role, usage in record.usage.items():
            record.usage[role] = self._seen.setdefault(usage, usage)
        if record.perception is not None:
            record.perception = self._seen.setdefault(record.perception, record.perception)
        self._share_fields(record)
        if record.measures is not None:
            self._share_fields(record.measures)
        return record

    def _share_fields(self, model: BaseModel) -> None:
        given = model.model_fields_set
        if len(given) == len(type(model).model_fields):  # every field given
            shared = self._fields.setdefault(type(model), given)
            object.__setattr__(model, "__pydantic_fields_set__", shared)


def read_records(p: Path, strict: bool) -> tuple[list[ResultRecord], int]:
    """The records of the results file ``p`` and how many lines were skipped: a bad line
    raises ValueError naming file and line when ``strict`` (a cut last line never does)."""
    records: list[ResultRecord] = []
    shared = _SharedParts()
    skipped = 0
    # Bytes, split by hand: a damaged (non-UTF-8) line is that line's problem, not the file's.
    with p.open("rb") as fh, gc_paused():
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                records.append(shared.record(line))
            except ValueError as exc:
                # A run killed mid-write leaves a cut last line: that is not a bad record.
                if strict and line.endswith(b"\n"):
                    raise ValueError(f"bad result record: {p}:{number}: {_first_error(exc)}"
                                     ) from None
                skipped += 1
    return records, skipped


def write_results(run_dir: Path, records: Sequence[ResultRecord]) -> None:
    """(Re)write ``results.jsonl`` with ``records``, atomically (a reader never sees half)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / f".{RESULTS}.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(redact(record.model_dump_json()) + "\n")
    os.replace(tmp, run_dir / RESULTS)


class ResultsStream:
    """Appends each record to ``results.jsonl`` as its item finishes, flushed at once.

    The process that owns the run (the pytest controller under xdist) is the one writer, so
    lines never interleave. A flushed line survives the process being killed. The stream
    keeps where each item's line is, not its record (held for the final tables, records were
    the largest thing that grew with the items): :meth:`finish` reads them back.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._fh: IO[bytes] | None = None
        self._end = 0
        #: item id -> offset and length of its line in results.jsonl
        self._lines: dict[str, tuple[int, int]] = {}

    def __contains__(self, nodeid: object) -> bool:
        return nodeid in self._lines

    def append(self, record: ResultRecord) -> None:
        """Add one finished item's record."""
        if self._fh is None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._fh = (self.run_dir / RESULTS).open("ab")
            self._end = self._fh.tell()
        line = (redact(record.model_dump_json()) + "\n").encode("utf-8")
        self._fh.write(line)
        self._fh.flush()
        self._lines[record.nodeid] = (self._end, len(line))
        self._end += len(line)

    def close(self) -> None:
        """Close the file (the records stay)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def finish(self) -> list[ResultRecord]:
        """Close the file, rewrite it in item order (it holds them in finishing order), and
        return this stream's records in that order (none: the file is left as it is)."""
        self.close()
        if not self._lines:
            return []
        records: list[ResultRecord] = []
        shared = _SharedParts()
        path = self.run_dir / RESULTS
        tmp = self.run_dir / f".{RESULTS}.tmp"
        with path.open("rb") as src, tmp.open("wb") as out, gc_paused():
            for nodeid in sorted(self._lines):
                offset, length = self._lines[nodeid]
                src.seek(offset)
                line = src.read(length)
                out.write(line)
                records.append(shared.record(line))
        os.replace(tmp, path)
        return records
