"""The response cache: every model call memoised on disk, keyed on what decides the answer."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.redact import redact_data
from ..core.threads import start_thread
from .cache_entry import ENTRY_VERSION, CacheEntryError, ReplyEntry, ServedEntry, check_version
from .errors import FatalLLMError
from .modes import CacheMode as CacheMode

if TYPE_CHECKING:
    from .cache_store import ReadOnlyCache


def key_parts(*, model: str, messages: list[dict[str, Any]], params: dict[str, Any], role: str,
              case_id: str, sample: int, prompt_version: str,
              served: str | None = None) -> dict[str, Any]:
    """What identifies a call. Never api keys, api base, timeouts or headers: those change
    where or how a call is made, not what it answers. ``served`` is the model a local server
    says it serves (see :mod:`.served`): another model behind the same name is another key.
    It is left out when unknown, so keys of hosted providers stay as they were."""
    parts = {"model": model, "role": role, "case_id": case_id, "sample": sample,
             "prompt_version": prompt_version, "params": params, "messages": messages}
    if served is not None:
        parts["served"] = served
    return parts


def cache_key(parts: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``parts``."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A diskcache-backed store, safe to share between xdist workers (SQLite underneath).

    The diskcache handle is opened on first use, so runs that never call a model never touch
    the directory. Stored replies are written by a thread of the cache's own (a
    :class:`_Writer`), as many as are waiting in one transaction: a write on the event loop
    held it ~1 ms per call (a commit's disk writes) and cost ~45 us of CPU against ~15 in a
    batch. A reply waiting to be written is already a hit; :meth:`flush` and :meth:`close`
    return once every reply stored so far is on disk.
    """

    def __init__(self, directory: Path, mode: CacheMode) -> None:
        self.directory = directory
        self.mode = mode
        self._store: Any = None
        self._lock = threading.Lock()
        self._writer: _Writer | None = None
        #: Why the cache is off though it was asked for (its directory cannot be written).
        self.unusable: str | None = None

    def _open(self) -> Any:
        with self._lock:
            if self._store is None and self.unusable is None:
                from . import cache_store

                if self.mode is CacheMode.REPLAY:
                    # A replay never writes: plain SQLite opened read-only, so a warm cache
                    # in a read-only directory (a CI artefact, a shared mount) is read.
                    self._store = cache_store.ReadOnlyCache(self.directory)
                    return self._store
                try:
                    self._store = cache_store.open_store(self.directory)
                except (OSError, sqlite3.OperationalError) as exc:
                    # A cache that cannot be created (read-only, a file in its place) costs
                    # replays, not results: the run goes on without it, saying so once.
                    self.unusable = (f"the response cache {self.directory} cannot be written "
                                     f"({getattr(exc, 'strerror', None) or exc}): running "
                                     f"with the cache off")
            return self._store

    def filled(self) -> bool:
        """Whether a previous run left a cache here (its database exists), without opening it."""
        return (self.directory / "cache.db").is_file()

    def probe(self) -> str | None:
        """Open the cache now (when it is on); why it is off instead, if it is."""
        if self.mode is not CacheMode.OFF:
            # A damaged or old-format cache.db is the first call's fatal error.
            with contextlib.suppress(sqlite3.DatabaseError, ValueError):
                self._open()
        return self.unusable

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        # A damaged cache.db would fail every call the same way: one fatal error stops the
        # session instead of one error per item.
        from .cache_store import CacheFormatError

        try:
            yield
        except (CacheFormatError, CacheEntryError) as exc:
            raise FatalLLMError(str(exc)) from exc
        except (sqlite3.DatabaseError, OSError) as exc:
            raise FatalLLMError(
                f"the response cache {self.directory} cannot be used ({type(exc).__name__}: "
                f"{exc}); move it away or run with --agent-cache=off") from exc

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply, or None (always None in refresh and off modes)."""
        if self.mode in (CacheMode.REFRESH, CacheMode.OFF):
            return None
        with self._guarded():
            store = self._open()
            if store is None:
                return None
            value: dict[str, Any] | None
            if self.mode is CacheMode.REPLAY:
                value = store.get(key)
            else:
                from .cache_store import decode

                writer = self._writer
                text = None if writer is None else writer.pending.get(key)
                if text is None:
                    text = store.get(key)
                value = None if text is None else decode(text, str(self.directory))
            return None if value is None else check_version(value, str(self.directory))

    def reply(self, key: str) -> ReplyEntry | None:
        """The model's reply stored under ``key``, or None; an entry that holds none (another
        version, damage) is a fatal error naming the cache, never a miss."""
        value = self.get(key)
        with self._guarded():
            return None if value is None else ReplyEntry.read(value, str(self.directory))

    def served(self, key: str) -> ServedEntry | None:
        """What an api base said it serves, stored under ``key``, or None."""
        value = self.get(key)
        with self._guarded():
            return None if value is None else ServedEntry.read(value, str(self.directory))

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store a successful reply (errors never reach here), its secrets redacted: a
        model that repeats the key it was sent must not leave it on disk. It is written by
        the cache's thread; a failure to write is the next call's fatal error."""
        if self.mode in (CacheMode.READ_WRITE, CacheMode.REFRESH):
            from .cache_store import encode

            text = encode(redact_data(value))
            with self._guarded():
                store = self._open()
                if store is None:
                    return
                with self._lock:
                    if self._writer is None:
                        self._writer = _Writer(store)
                self._writer.add(key, text)

    def flush(self) -> None:
        """Return once every reply stored so far is written (a failed write raises here)."""
        if self._writer is not None:
            with self._guarded():
                self._writer.flush()

    def close(self) -> None:
        """Write what waits, then release the handle (safe to call when never opened, and
        twice)."""
        writer, self._writer = self._writer, None
        try:
            if writer is not None:
                with self._guarded():
                    writer.close()
        finally:
            if self._store is not None:
                self._store.close()
                self._store = None


#: How long the cache's writer gathers replies into one transaction after the first.
BATCH_SECONDS = 0.05


class _Writer:
    """Writes a cache's stored replies from a thread of its own: from the first reply that
    waits, it gathers those of the next :data:`BATCH_SECONDS` (or until someone flushes)
    and writes them in one transaction. What a crash can lose is what was stored in the
    last moments, never a flushed reply. Waiting replies are read from :attr:`pending`."""

    def __init__(self, store: Any) -> None:
        self.store = store
        #: Replies not yet written, by key (read without the lock: one dict lookup).
        self.pending: dict[str, str] = {}
        self._ready = threading.Condition()
        self._closing = False
        #: Someone waits for the waiting replies to be written (:meth:`flush`).
        self._hurry = False
        self._failed: BaseException | None = None
        self._thread = start_thread(self._run, name="agentclinic-cache-writer")
        # A process that exits without closing its cache (a command, an interrupted run)
        # still writes what waits; xdist workers run the exit functions before their fast
        # exit.
        atexit.register(self._close_at_exit)

    def add(self, key: str, text: str) -> None:
        with self._ready:
            self._raise_failure()
            first = not self.pending
            self.pending[key] = text
            if first:  # the writer waits for a first reply; then it gathers the batch
                self._ready.notify_all()

    def flush(self) -> None:
        with self._ready:
            self._hurry = True
            self._ready.notify_all()
            while self.pending and self._failed is None and self._thread.is_alive():
                self._ready.wait()
            self._raise_failure()

    def close(self) -> None:
        atexit.unregister(self._close_at_exit)
        try:
            self.flush()
        finally:
            with self._ready:
                self._closing = True
                self._ready.notify_all()
            self._thread.join()

    def _close_at_exit(self) -> None:
        # The process is ending: a failed write was (or could not be) reported already.
        with contextlib.suppress(Exception):
            self.close()

    def _raise_failure(self) -> None:
        if self._failed is not None:
            raise self._failed

    def _run(self) -> None:
        try:
            while True:
                with self._ready:
                    while not self.pending and not self._closing:
                        self._ready.wait()
                    if not self.pending:
                        return
                    # The replies of the next moments join this one's transaction (unless
                    # someone waits for the write): one commit for many.
                    gathered_by = time.monotonic() + BATCH_SECONDS
                    while not (self._closing or self._hurry):
                        left = gathered_by - time.monotonic()
                        if left <= 0:
                            break
                        self._ready.wait(left)
                    self._hurry = False
                    batch = dict(self.pending)
                try:
                    self._write(batch)
                except BaseException as exc:
                    with self._ready:
                        self._failed = exc
                        self._ready.notify_all()
                    return
                with self._ready:
                    for key, text in batch.items():
                        if self.pending.get(key) is text:
                            del self.pending[key]
                    self._ready.notify_all()
        finally:
            # diskcache keeps a connection per thread: this thread's is closed by it.
            with contextlib.suppress(Exception):
                self.store.close()

    def _write(self, batch: dict[str, str]) -> None:
        with self.store.transact():
            for key, text in batch.items():
                self.store.set(key, text)


@dataclass(frozen=True)
class MergeCounts:
    """What :func:`merge_caches` did."""

    copied: int
    present: int
    conflicts: int


def merge_caches(sources: Sequence[Path], target: Path) -> MergeCounts:
    """Copy every entry of the ``sources`` caches into ``target`` (kept where present).

    Every source is checked before anything is written (a damaged or pickled shard is a
    :class:`~.cache_store.CacheFormatError` naming it) and read through SQLite opened
    read-only: a source is never written. Shards play disjoint cases, so their keys (which
    hold the case id) never meet; a key met twice with another reply means caches of
    different runs were mixed.
    """
    from .cache_store import ReadOnlyCache, decode, encode, open_store

    readers: list[ReadOnlyCache] = []
    try:
        for source in sources:
            readers.append(ReadOnlyCache(source))
            readers[-1].check()
            _check_versions(readers[-1])
        copied = present = conflicts = 0
        out = open_store(target)
        try:
            for reader in readers:
                for key, value in reader.items():
                    old = out.get(key)
                    if old is None:
                        out.set(key, encode(value))
                        copied += 1
                    elif _versioned(decode(old, str(target))) == _versioned(value):
                        present += 1
                    else:
                        conflicts += 1
        finally:
            out.close()
    finally:
        for reader in readers:
            reader.close()
    return MergeCounts(copied, present, conflicts)


def _versioned(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with its version (an entry from before versions is version 1): the same
    reply written before and after entries had versions is the same entry."""
    return {"version": ENTRY_VERSION, **value}


def _check_versions(reader: ReadOnlyCache) -> None:
    """Refuse a source holding an entry of a version this release does not read, before
    anything is written."""
    from .cache_store import CacheFormatError

    for _key, value in reader.items():
        try:
            check_version(value, str(reader.directory))
        except CacheEntryError as exc:
            raise CacheFormatError(str(exc)) from None
