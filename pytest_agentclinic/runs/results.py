"""``results.jsonl`` line by line: read into records, written whole, or appended as items
finish.

The one reader and writer of the run's result records (a record's version is checked, and
an older one migrated, as each line is read: :data:`~..core.records.RESULT_FORMAT`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from ..core.heap import gc_paused
from ..core.records import RESULT_FORMAT, ResultRecord
from ..core.redact import redact
from ..core.transcript import Perception, Usage
from ..core.versioned import load_json
from .errors import BadRecord
from .safe_write import atomic_bytes, atomic_text

RESULTS = "results.jsonl"
#: The files xdist workers stream their records to, beside results.jsonl.
WORKER_GLOB = "results.*.jsonl"


def first_error(exc: ValueError) -> str:
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
      object each (~1.3 KB per role per record); a usage with a measured latency is never
      equal to another, and stays the record's own;
    * pydantic keeps, per model, the set of the fields its input gave (~2.3 KB for a record,
      0.7 KB for its measures); every results.jsonl line gives every field, so one set per
      model class stands for them all. Pydantic only ever adds a field's name to the set
      (on assignment), and that name is in it already.
    """

    def __init__(self) -> None:
        self._seen: dict[Usage | Perception, Any] = {}
        self._fields: dict[type[BaseModel], set[str]] = {}
        self._containers: dict[tuple[object, ...], Any] = {}

    def shares(self, value: object) -> bool:
        """Whether ``value`` is the one object that stands for every value equal to it."""
        try:
            return self._seen.get(value) is value  # type: ignore[call-overload]
        except TypeError:  # unhashable: not one of them
            return False

    def record(self, line: bytes | str) -> ResultRecord:
        """The record of one results.jsonl line, sharing what earlier lines hold."""
        try:
            record = ResultRecord.model_validate_json(line)
        except ValidationError:
            # Another version (migrated or refused by name), or a bad line: load_json says.
            record = load_json(RESULT_FORMAT, ResultRecord, line, None)
        for role, usage in record.usage.items():
            # A call's measured latency makes its usage its own: kept here, each would live
            # on in this table after its record (10,000 of them at 10,000 encounters).
            if not usage.latency_s:
                record.usage[role] = self._seen.setdefault(usage, usage)
        if record.perception is not None:
            record.perception = self._seen.setdefault(record.perception, record.perception)
        self._share_containers(record, _RECORD_CONTAINERS)
        if record.given is not None and record.given == record.expected:
            record.__dict__["given"] = record.expected
        self._share_fields(record)
        if record.measures is not None:
            self._share_containers(record.measures, _MEASURES_CONTAINERS)
            self._share_fields(record.measures)
        return record

    def _share_containers(self, model: BaseModel, names: tuple[str, ...]) -> None:
        """One object for each equal dict or list of strings and numbers (every record
        names the same models, most have no conditions, no refusals, the same tests). No
        reader changes a record's containers in place: they are replaced, if at all."""
        values = model.__dict__
        for name in names:
            value = values[name]
            items = tuple(value.items()) if isinstance(value, dict) else tuple(value)
            # The type is part of the key: {} and [] are both empty.
            values[name] = self._containers.setdefault((type(value), items), value)

    def _share_fields(self, model: BaseModel) -> None:
        given = model.model_fields_set
        if len(given) == len(type(model).model_fields):  # every field given
            shared = self._fields.setdefault(type(model), given)
            object.__setattr__(model, "__pydantic_fields_set__", shared)


#: The containers of a record and of its measures that :class:`_SharedParts` shares (each
#: holds strings and numbers only, so it is hashable as a tuple).
_RECORD_CONTAINERS = ("models", "conditions", "refusals", "tests_requested", "served")
_MEASURES_CONTAINERS = ("tests_unpriced", "elicited_at")


def result_files(results: Path) -> list[Path]:
    """``results`` and, when it is a run's results.jsonl, the files its xdist workers
    streamed beside it (``results.gw0.jsonl``...), which a controller killed before it
    merged them leaves behind."""
    if results.name != RESULTS:
        return [results]
    return [results, *sorted(results.parent.glob(WORKER_GLOB))]


def read_records(p: Path, strict: bool) -> tuple[list[ResultRecord], int]:
    """The records of the results file ``p`` (and its workers' files) and how many lines
    were skipped: a bad line raises :class:`.errors.BadRecord` (an InputError) naming file
    and line when ``strict`` (a cut last line never does)."""
    records: list[ResultRecord] = []
    shared = _SharedParts()
    skipped = 0
    seen: set[str] = set()
    for path in result_files(p):
        start = len(records)
        for _number, _offset, _line, record in _scan(path, shared, strict):
            if record is None:
                skipped += 1
            elif not seen or record.nodeid not in seen:
                records.append(record)
        # An item is in a worker's file and in results.jsonl when a merge was cut short.
        seen.update(r.nodeid for r in records[start:])
    return records, skipped


def _scan(path: Path, shared: _SharedParts, strict: bool,
          ) -> Iterator[tuple[int, int, bytes, ResultRecord | None]]:
    """Each line of ``path``: its number, offset, bytes and record (None: unreadable)."""
    offset = 0
    # Bytes, split by hand: a damaged (non-UTF-8) line is that line's problem, not the file's.
    with path.open("rb") as fh, gc_paused():
        for number, line in enumerate(fh, 1):
            at, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                yield number, at, line, shared.record(line)
            except ValueError as exc:
                # A run killed mid-write leaves a cut last line: that is not a bad record.
                if strict and line.endswith(b"\n"):
                    raise BadRecord(first_error(exc), path=path, line=number) from None
                yield number, at, line, None


def record_text(record: ResultRecord) -> str:
    """The record as every copy of it carries it: its JSON, redacted (results.jsonl's line
    without the newline, the item's JUnit property, the worker's copy to its controller).
    Made once per item: the dump and the redaction were a quarter of a record's cost."""
    return redact(record.model_dump_json())


def write_results(run_dir: Path, records: Sequence[ResultRecord]) -> None:
    """(Re)write ``results.jsonl`` with ``records``, atomically (a reader never sees half)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with atomic_text(run_dir / RESULTS) as fh:
        for record in records:
            fh.write(record_text(record) + "\n")


class ResultsStream:
    """Appends each record to the process's results file as its item finishes, flushed
    at once, so a killed process keeps every record it finished.

    Each process that plays items writes its own file: ``results.jsonl`` without xdist,
    ``results.<worker>.jsonl`` for an xdist worker (the controller only merges them, see
    :func:`merge_results`: a controller killed with -9 once kept none of its workers'
    records). One writer per file, so lines never interleave.
    """

    def __init__(self, run_dir: Path, name: str = RESULTS) -> None:
        self.run_dir = run_dir
        self.path = run_dir / name
        self._fh: IO[bytes] | None = None
        #: Where this stream's lines begin in its file (a reused file keeps older lines).
        self.start = 0
        #: Each written item's line: ``nodeid -> (offset, length)`` in the file.
        self.lines: dict[str, tuple[int, int]] = {}
        self._end = 0

    def __contains__(self, nodeid: object) -> bool:
        return nodeid in self.lines

    @property
    def size(self) -> int:
        """The file's size as this stream left it (0 before its first line)."""
        return self._end

    def append(self, record: ResultRecord) -> str:
        """Add one finished item's record (an item already written is not written again) and
        return its :func:`record_text`, the one dump the item's other copies reuse."""
        text = record_text(record)
        self.append_text(record.nodeid, text)
        return text

    def append_text(self, nodeid: str, text: str) -> None:
        """Add the :func:`record_text` of item ``nodeid``'s record (once per item)."""
        if nodeid in self.lines:
            return
        if self._fh is None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("ab")
            self.start = self._end = self._fh.tell()
        line = (text + "\n").encode("utf-8")
        self._fh.write(line)
        self._fh.flush()
        self.lines[nodeid] = (self._end, len(line))
        self._end += len(line)

    def close(self) -> None:
        """Close the file (the records stay); a close that cannot flush loses nothing more."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            with contextlib.suppress(OSError):
                fh.close()

    def finish(self) -> list[ResultRecord]:
        """Close the file and :func:`merge_results` (none written: the files are left)."""
        self.close()
        return merge_results(self.run_dir, self.start) if self.lines else []


def worker_results_name(worker: str) -> str:
    """The results file an xdist worker streams its records to."""
    return f"results.{worker}.jsonl"


def merge_results(run_dir: Path, start: int = 0) -> list[ResultRecord]:
    """Join results.jsonl (from byte ``start``) and the workers' files into results.jsonl
    in item order, remove the workers' files, and return the records in that order (none:
    the files are left).

    The records are read, not their lines kept (held for the final tables, records were
    the largest thing that grew with the items): each line is copied from its file again.
    """
    results = run_dir / RESULTS
    paths = [p for p in result_files(results) if p.is_file()]
    shared = _SharedParts()
    where: dict[str, tuple[int, int, int, ResultRecord]] = {}
    for index, path in enumerate(paths):
        for _number, offset, line, record in _scan(path, shared, strict=False):
            if record is not None and (index or offset >= start):
                where.setdefault(record.nodeid, (index, offset, len(line), record))
    if not where:
        return []
    records: list[ResultRecord] = []
    handles = [path.open("rb") for path in paths]
    try:
        with atomic_bytes(results) as out:
            for nodeid in sorted(where):
                index, offset, length, record = where[nodeid]
                handles[index].seek(offset)
                line = handles[index].read(length)
                out.write(line if line.endswith(b"\n") else line + b"\n")
                records.append(record)
    finally:
        for handle in handles:
            handle.close()
    for path in paths[1:]:
        with contextlib.suppress(OSError):
            path.unlink()
    return records
