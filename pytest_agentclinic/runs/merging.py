"""The run's records merged as they arrive, not after the last one: the end of a run only
sorts them.

The process that owns the run directory (the xdist controller, or the one process of a run
without xdist) hears of every finished item's record as the item reports, as the text the
playing process wrote to its results file (:func:`.results.record_text`). Parsed then, while
the encounters play (the controller is idle between its workers' reports), they are ready
when the last item ends, and where each line is in its file is known. At the end
:meth:`RunningMerge.finish` writes results.jsonl in item order from those places and removes
the workers' files. Reading every file back and parsing it there, serially after the last
answer, took 0.9 s at 2,000 encounters. Nothing is written twice during the run: a
worker's file stays its records' one copy until the merge.

Whatever did not arrive (a report lost with its worker, a record no report carried) shows
in the files' sizes: then the merge reads the files as before
(:func:`.results.merge_results`), so no record is lost.

While every worker plays, each record is held packed (:class:`Packer`): its fields' values
in tuples, not models and their ``__dict__``, the node id it is filed under not twice. The
parsed records were the controller's largest growth (~3.2 KB each with their places, ~1.4 KB
packed: 18 MB less at 10,000 encounters). Once a worker has finished, the process tree is
past its peak: the records are unpacked then (~10 us each; parsing their texts again would
be ~22), off the end phase in a split run, whose first worker finishes seconds before its
last, and those still to come are held as they are."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from ..core.records import ResultRecord
from .results import (
    RESULTS,
    ResultsStream,
    _SharedParts,
    merge_results,
    result_files,
    worker_results_name,
)
from .safe_write import atomic_bytes

#: Where a record's line is: the file (None: the owner's results.jsonl), offset, length.
Place = tuple[str | None, int, int]


class RunningMerge:
    """The records of the run's items, parsed as they arrive, and where each line is.

    ``stream`` is the owner's results.jsonl, which its recorder writes when the owner plays
    items itself (no xdist). A record from an xdist worker is a line of that worker's file:
    a worker appends each record before it reports the item, and its reports arrive in
    order, so the line's place is the sum of the lengths of the worker's earlier texts.
    """

    def __init__(self, stream: ResultsStream) -> None:
        self.stream = stream
        self._shared = _SharedParts()
        self._packer = Packer(self._shared)
        #: Each arrived record, packed (:meth:`record` unpacks one).
        self._records: dict[str, tuple[Any, ...]] = {}
        #: Whether records are packed as they arrive (until :meth:`unpack`).
        self._packing = True
        self._places: dict[str, Place] = {}
        #: Each worker's results file's name (one string for all its records' places).
        self._names: dict[str, str] = {}
        #: The size each worker's file has when every record it wrote has arrived.
        self._sizes: dict[str, int] = {}

    def __contains__(self, nodeid: object) -> bool:
        return nodeid in self._records

    def __len__(self) -> int:
        return len(self._records)

    def record(self, nodeid: str) -> ResultRecord | None:
        """Item ``nodeid``'s record, if it arrived (a new object each time)."""
        packed = self._records.get(nodeid)
        return None if packed is None else self._packer.unpack(packed, nodeid)

    def add(self, nodeid: str, text: str, worker: str | None = None) -> None:
        """Item ``nodeid``'s record, as its :func:`~.results.record_text`, reported by
        ``worker`` (an xdist worker's id; None: this process played it). Once per item; a
        text that is no record is left to the files' merge."""
        if nodeid in self._records:
            return
        length = len(text.encode("utf-8")) + 1  # and its newline
        if worker is None:
            self._places[nodeid] = (None, 0, length)
        else:
            name = self._names.setdefault(worker, worker_results_name(worker))
            offset = self._sizes.get(name, 0)
            self._sizes[name] = offset + length
            self._places[nodeid] = (name, offset, length)
        try:
            record = self._shared.record(text)
        except ValueError:
            return
        self._records[nodeid] = (self._packer.pack(record, nodeid) if self._packing
                                 else self._packer.hold(record))

    def unpack(self) -> None:
        """Unpack the records held and hold those still to come as they are: the process
        tree is past its peak (an xdist worker has finished), and the end of the run then
        only sorts them (unpacking is ~10 us a record)."""
        if self._packing:
            self._packing = False
            unpack, hold = self._packer.unpack, self._packer.hold
            for nodeid, packed in self._records.items():
                self._records[nodeid] = hold(unpack(packed, nodeid))

    def finish(self) -> list[ResultRecord]:
        """Close results.jsonl, write it whole in item order, remove the workers' files and
        return the records in that order (none: the files are left)."""
        self.stream.close()
        run_dir = self.stream.run_dir
        results = run_dir / RESULTS
        if not self._complete(results):
            return merge_results(run_dir, self.stream.start)
        if not self._records:
            return []
        order = sorted(self._records)
        handles: dict[str | None, IO[bytes]] = {}
        try:
            for name in {place[0] for place in self._places.values()}:
                handles[name] = (run_dir / (name or RESULTS)).open("rb")
            with atomic_bytes(results) as out:
                for nodeid in order:
                    name, offset, length = self._places[nodeid]
                    if name is None:
                        offset = self.stream.lines[nodeid][0]
                    handle = handles[name]
                    handle.seek(offset)
                    out.write(handle.read(length))
        finally:
            for handle in handles.values():
                handle.close()
        for path in result_files(results)[1:]:
            with contextlib.suppress(OSError):
                path.unlink()
        unpack, packed = self._packer.unpack, self._records
        return [unpack(packed[nodeid], nodeid) for nodeid in order]

    def _complete(self, results: Path) -> bool:
        """Whether every record on disk arrived, and only those: each file is as long as
        the lines that arrived from it (results.jsonl holds only this stream's lines)."""
        if len(self._records) != len(self._places) or self.stream.path != results:
            return False
        own = {n for n, place in self._places.items() if place[0] is None}
        if own != set(self.stream.lines) or _size(results) != self.stream.size:
            return False
        workers = {path.name: _size(path) for path in result_files(results)[1:]}
        return workers == self._sizes


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _Model(tuple):  # type: ignore[type-arg]
    """A packed model: ``(class, fields set, *its fields' values, each packed)``."""

    __slots__ = ()


class _Dict(tuple):  # type: ignore[type-arg]
    """A packed dict of models: ``(its keys, *its values, each packed)``."""

    __slots__ = ()


class Packer:
    """A record as a tuple of its fields' values, and back to the same record.

    Packed: the record, its measures, and the values of its dicts of models (usage by
    role) that are not one object shared among records (:class:`~.results._SharedParts`):
    a pydantic model's ``__dict__`` of 35 fields is ~0.9 KB, the tuple of its values 0.3 KB.
    The record's node id is left out when it is the key the record is filed under.
    Unpacking puts back each model's ``__dict__`` (the same values, the same order) and its
    fields set as pydantic's own ``model_construct`` does, without its defaults' pass: only
    models without extra or private attributes and whose ``__dict__`` holds exactly their
    fields, in order, are packed (any other is held as it is).
    """

    def __init__(self, shared: _SharedParts) -> None:
        self._shared = shared
        self._keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        #: Each class's set of every field's name (see :class:`~.results._SharedParts`).
        self._given: dict[type[BaseModel], set[str]] = {}
        self._nodeid = _fields(ResultRecord).index("nodeid")

    def pack(self, record: ResultRecord, nodeid: str) -> tuple[Any, ...]:
        """``record``, filed under ``nodeid``, packed."""
        packed = self._value(record)
        if type(packed) is _Model and packed[2 + self._nodeid] == nodeid:
            values = list(packed)
            values[2 + self._nodeid] = None
            return _Model(values)
        return self.hold(record)

    @staticmethod
    def hold(record: ResultRecord) -> tuple[Any, ...]:
        """``record`` held as it is (a one-tuple, which :meth:`unpack` returns it from)."""
        return (record,)

    def unpack(self, packed: tuple[Any, ...], nodeid: str) -> ResultRecord:
        """The record :meth:`pack` packed under ``nodeid``."""
        if type(packed) is not _Model:
            record: ResultRecord = packed[0]
            return record
        values = list(packed)
        if values[2 + self._nodeid] is None:
            values[2 + self._nodeid] = nodeid
        unpacked: ResultRecord = _unpack(_Model(values))
        return unpacked

    def _value(self, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return self._model(value)
        if type(value) is dict and value and all(
                isinstance(v, BaseModel) for v in value.values()):
            keys = tuple(value)
            keys = self._keys.setdefault(keys, keys)
            return _Dict((keys, *(self._model(v) for v in value.values())))
        return value

    def _model(self, model: BaseModel) -> Any:
        values = model.__dict__
        if (self._shared.shares(model) or model.__pydantic_extra__ is not None
                or getattr(model, "__pydantic_private__", None) is not None
                or tuple(values) != _fields(type(model))):
            return model
        given = model.__pydantic_fields_set__
        if len(given) == len(values):  # every field given: one set per class stands for all
            given = self._given.setdefault(type(model), given)
        return _Model((type(model), given, *[
            self._value(v) if isinstance(v, (BaseModel, dict)) else v
            for v in values.values()]))


def _unpack(value: Any) -> Any:
    if type(value) is _Dict:
        return {key: _unpack(v) for key, v in zip(value[0], value[1:], strict=True)}
    if type(value) is not _Model:
        return value
    cls = value[0]
    fields = dict(zip(_NAMES[cls], value[2:], strict=True))
    for name, v in fields.items():
        if type(v) in _PACKED:
            fields[name] = _unpack(v)
    model = cls.__new__(cls)
    setattr_ = object.__setattr__
    setattr_(model, "__dict__", fields)
    setattr_(model, "__pydantic_fields_set__", value[1])
    setattr_(model, "__pydantic_extra__", None)
    setattr_(model, "__pydantic_private__", None)
    return model


_PACKED = (_Model, _Dict)


_NAMES: dict[type[BaseModel], tuple[str, ...]] = {}


def _fields(cls: type[BaseModel]) -> tuple[str, ...]:
    """A model's fields' names, in order."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(cls.model_fields)
    return names
