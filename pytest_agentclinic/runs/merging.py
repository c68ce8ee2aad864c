"""The run's records merged as they arrive, not after the last one: the end of a run only
sorts them.

The process that owns the run directory (the xdist controller, or the one process of a run
without xdist) hears of every finished item's record as the item reports, as the text the
playing process wrote to its results file (:func:`.results.record_text`). Parsed before the
last item ends (the controller is idle between its workers' reports; when, see below), they
are ready then, and where each line is in its file is known. At the end
:meth:`RunningMerge.finish` writes results.jsonl in item order from those places and removes
the workers' files. Reading every file back and parsing it there, serially after the last
answer, took 0.9 s at 2,000 encounters. Nothing is written twice during the run: a
worker's file stays its records' one copy until the merge.

Whatever did not arrive (a report lost with its worker, a record no report carried) shows
in the files' sizes: then the merge reads the files as before
(:func:`.results.merge_results`), so no record is lost.

While every xdist worker plays, a worker's record is held as its text compressed (zlib, the
run's first text as the dictionary: ~0.15-0.25 KB against ~3.2 KB parsed, the controller's
largest growth at 10,000 encounters). Once a worker has finished, the process tree is past
its peak: the texts are parsed then (:meth:`RunningMerge.parse_held`, ~25 us each), off the end
phase in a split run, whose first worker finishes seconds before its last, and the records
still to come are parsed as they arrive. A run without xdist parses each as it arrives.
"""

from __future__ import annotations

import contextlib
import zlib
from pathlib import Path
from typing import IO

from ..core.heap import gc_paused
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
        #: Each arrived record: parsed, or an xdist worker's text compressed (bytes) until
        #: :meth:`parse_held`.
        self._records: dict[str, ResultRecord | bytes] = {}
        #: Whether workers' texts are held compressed as they arrive (until :meth:`parse_held`).
        self._holding = True
        #: The compression's dictionary: the first compressed text.
        self._zdict = b""
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
        """Item ``nodeid``'s record, if it arrived and is one (parsed anew while held as
        text)."""
        held = self._records.get(nodeid)
        try:
            return None if held is None else self._parse(held)
        except ValueError:
            return None

    def add(self, nodeid: str, text: str, worker: str | None = None) -> None:
        """Item ``nodeid``'s record, as its :func:`~.results.record_text`, reported by
        ``worker`` (an xdist worker's id; None: this process played it). Once per item; a
        text that is no record is left to the files' merge."""
        if nodeid in self._records:
            return
        data = text.encode("utf-8")
        length = len(data) + 1  # and its newline
        if worker is None:
            self._places[nodeid] = (None, 0, length)
        else:
            name = self._names.setdefault(worker, worker_results_name(worker))
            offset = self._sizes.get(name, 0)
            self._sizes[name] = offset + length
            self._places[nodeid] = (name, offset, length)
        if worker is not None and self._holding:
            self._records[nodeid] = self._compress(data)
            return
        try:
            self._records[nodeid] = self._shared.record(text)
        except ValueError:
            return

    def parse_held(self) -> None:
        """Parse the texts held and every later one as it arrives: the process tree is past
        its peak (an xdist worker has finished, or the session), and the end of the run then
        only sorts the records. A text that is no record is left to the files' merge."""
        if not self._holding:
            return
        self._holding = False
        with gc_paused():
            for nodeid, held in list(self._records.items()):
                if isinstance(held, bytes):
                    try:
                        self._records[nodeid] = self._parse(held)
                    except ValueError:
                        del self._records[nodeid]

    def _compress(self, data: bytes) -> bytes:
        if not self._zdict:
            self._zdict = data
        # Level 1: ~9 us a record; higher levels save a few more bytes at twice the CPU.
        packer = zlib.compressobj(1, zdict=self._zdict)
        return packer.compress(data) + packer.flush()

    def _parse(self, held: ResultRecord | bytes) -> ResultRecord:
        if isinstance(held, bytes):
            unpacker = zlib.decompressobj(zdict=self._zdict)
            return self._shared.record(unpacker.decompress(held) + unpacker.flush())
        return held

    def finish(self) -> list[ResultRecord]:
        """Close results.jsonl, write it whole in item order, remove the workers' files and
        return the records in that order (none: the files are left)."""
        self.stream.close()
        self.parse_held()
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
        return [self._parse(self._records[nodeid]) for nodeid in order]

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

