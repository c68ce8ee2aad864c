"""The response cache's format on disk: the one reader and writer of ``cache.db``.

diskcache pickles what it is given, and unpickling runs whatever code the bytes name: a
cache is a CI artefact that people pass around, so a crafted row would run code in the
next replay or ``merge-cache``. Here a value is JSON text (a row of the ``Cache`` table, or
a ``.val`` file beside it for long replies), under a format marker, and nothing ever
unpickles: a pickled row (an older version's cache, or a crafted one) is refused.

Writing goes through diskcache with :class:`DataDisk`; reading without writing (a replay,
the sources of ``merge-cache``) goes through :class:`ReadOnlyCache`, plain SQLite opened
read-only, so a read-only directory replays and a source is never changed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import diskcache

from ..core.errors import InputError

#: The reserved entry naming the format of every other entry.
FORMAT_KEY = "\x1fagentclinic-cache-format"
#: This version's format: values are JSON objects as text.
FORMAT = "json-1"
#: diskcache's row modes this format uses: text in the row, or text in a file.
_MODE_RAW, _MODE_TEXT = diskcache.core.MODE_RAW, diskcache.core.MODE_TEXT


class CacheFormatError(InputError):
    """A cache this version does not read (pickled values, another format, damage)."""


def old_format(directory: Path) -> CacheFormatError:
    """The refusal of a cache without the format marker that holds entries."""
    return CacheFormatError(
        f"the response cache {directory} was written by an older version (pickled values, "
        f"which can run code when read): it is not read. Move it away to start a new one, "
        f"or run with --agent-cache=off")


def encode(value: dict[str, Any]) -> str:
    """A cache value as stored (compact JSON, text kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def decode(text: object, where: str) -> dict[str, Any]:
    """A stored value read back; :class:`CacheFormatError` when it is not a JSON object."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise CacheFormatError(f"{where}: an entry is not a JSON object (damaged or of "
                               f"another format): refused")
    return value


class DataDisk(diskcache.Disk):  # type: ignore[misc]
    """diskcache's Disk for text keys and text values only: it never pickles or unpickles."""

    def put(self, key: Any) -> tuple[Any, bool]:
        if type(key) is not str:
            raise TypeError(f"response cache keys are text, not {type(key).__name__}")
        return key, True

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise CacheFormatError(f"the response cache {self._directory} holds a pickled "
                                   f"key: refused (never unpickled)")
        return key

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
        if type(value) is not str or read:
            raise TypeError("response cache values are JSON text")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode not in (_MODE_RAW, _MODE_TEXT) or read:
            raise CacheFormatError(f"the response cache {self._directory} holds a pickled "
                                   f"or binary value: refused (never unpickled)")
        return super().fetch(mode, filename, value, read)


def open_store(directory: Path) -> Any:
    """The diskcache over ``directory`` (created if new), its format checked."""
    # cull_limit=0: no eviction check on every write (a fifth of a put's CPU); a recorded
    # reply is never evicted to make room anyway.
    store = diskcache.Cache(str(directory), size_limit=2**34, cull_limit=0, disk=DataDisk)
    try:
        marker = store.get(FORMAT_KEY)
        if marker is None and len(store):
            # Another process (an xdist worker) may have just started this cache: its marker
            # is written before its first entry.
            marker = store.get(FORMAT_KEY)
        if marker is None:
            if len(store):
                raise old_format(directory)
            store.add(FORMAT_KEY, FORMAT)
        elif marker != FORMAT:
            raise CacheFormatError(f"the response cache {directory} is of format {marker!r}, "
                                   f"not {FORMAT!r}: refused")
    except BaseException:
        store.close()
        raise
    return store


class ReadOnlyCache:
    """A cache read through SQLite opened read-only: it never writes, so a read-only
    directory can be replayed and a ``merge-cache`` source is left as it was."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        path = directory / "cache.db"
        if not path.is_file():
            return
        self._db = self._connect(path)
        marker = self._row(FORMAT_KEY)
        if marker is None:
            if self._count():
                raise old_format(directory)
        elif self._value(marker) != FORMAT:
            raise CacheFormatError(f"the response cache {directory} is of format "
                                   f"{self._value(marker)!r}, not {FORMAT!r}: refused")

    def _connect(self, path: Path) -> sqlite3.Connection:
        reason = "cannot be opened read-only"
        wal = path.with_name(path.name + "-wal")
        # With no write-ahead log beside it (a cache closed cleanly), ``immutable`` reads the
        # database file as it is and creates nothing (plain ``mode=ro`` adds a -shm file). A
        # log left by a process that was killed holds committed entries: read with it.
        pending = wal.is_file() and wal.stat().st_size > 0
        for flags in ("mode=ro", "mode=ro&immutable=1")[0 if pending else 1:]:
            try:
                db = sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True,
                                     check_same_thread=False)
            except sqlite3.DatabaseError as exc:
                reason = str(exc)
                continue
            try:
                db.execute("SELECT count(*) FROM Cache").fetchone()
                return db
            except sqlite3.DatabaseError as exc:
                db.close()
                if "no such table" in str(exc):
                    raise CacheFormatError(f"{self.directory}: not a response cache (its "
                                           f"cache.db holds no cache table)") from None
                reason = str(exc)
        raise CacheFormatError(f"{self.directory}: not a readable response cache ({reason})")

    def _count(self) -> int:
        assert self._db is not None
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM Cache").fetchone()[0])

    def _row(self, key: str) -> tuple[int, str | None, object] | None:
        if self._db is None:
            return None
        with self._lock:
            row = self._db.execute("SELECT mode, filename, value FROM Cache WHERE key = ? "
                                   "AND raw = 1", (key,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def _value(self, row: tuple[int, str | None, object]) -> object:
        mode, filename, value = row
        if mode == _MODE_RAW:
            return value
        if mode == _MODE_TEXT and filename:
            return self._file(filename).read_text(encoding="utf-8")
        raise CacheFormatError(f"the response cache {self.directory} holds a pickled or "
                               f"binary value: refused (never unpickled)")

    def _file(self, filename: str) -> Path:
        name = PurePosixPath(filename)
        if name.is_absolute() or ".." in name.parts:
            raise CacheFormatError(f"the response cache {self.directory} names a value file "
                                   f"outside it ({filename!r}): refused")
        return self.directory / name

    def get(self, key: str) -> dict[str, Any] | None:
        """The value under ``key``, or None; :class:`CacheFormatError` for a row this
        format does not hold (never unpickled)."""
        row = self._row(key)
        if row is None:
            return None
        try:
            text = self._value(row)
        except FileNotFoundError:
            return None  # a value file removed under a reader: a miss, as diskcache has it
        return decode(text, str(self.directory))

    def check(self) -> None:
        """Refuse a damaged or foreign cache before anything is read from it: pickled
        keys or values, and value files that are missing."""
        if self._db is None:
            raise CacheFormatError(f"{self.directory}: not a response cache (no cache.db)")
        with self._lock:
            foreign = self._db.execute(
                "SELECT count(*) FROM Cache WHERE raw != 1 OR mode NOT IN (?, ?)",
                (_MODE_RAW, _MODE_TEXT)).fetchone()[0]
            files = [f for (f,) in self._db.execute(
                "SELECT filename FROM Cache WHERE mode = ?", (_MODE_TEXT,))]
        if foreign:
            raise CacheFormatError(f"{self.directory}: {foreign} entries are pickled or "
                                   f"binary (never unpickled): refused")
        missing = [f for f in files if not f or not self._file(f).is_file()]
        if missing:
            raise CacheFormatError(f"{self.directory}: {len(missing)} entries' value files "
                                   f"are missing (e.g. {missing[0]}): a damaged copy")

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every entry but the format marker, in insertion order."""
        if self._db is None:
            return
        last = 0
        while True:  # in pages: a long cache is not held in memory at once
            with self._lock:
                page = self._db.execute(
                    "SELECT rowid, key, mode, filename, value FROM Cache WHERE rowid > ? "
                    "ORDER BY rowid LIMIT 500", (last,)).fetchall()
            if not page:
                return
            for rowid, key, mode, filename, value in page:
                last = rowid
                if key != FORMAT_KEY:
                    yield str(key), decode(self._value((mode, filename, value)),
                                           str(self.directory))

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        if self._db is not None:
            self._db.close()
            self._db = None
