"""Writing run files so that a failed write leaves nothing half-done behind.

A full disk (or quota) is not one item's problem: every later write fails the same way.
:func:`is_disk_full` tells that case apart, so the session can stop calling the provider
instead of paying for replies it cannot keep.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

#: The errors after which nothing more can be written.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the disk or the quota is full."""
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


@contextlib.contextmanager
def atomic_text(path: Path) -> Iterator[IO[str]]:
    """A temporary text file beside ``path`` that replaces it once written whole."""
    with _replacing(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        yield fh


@contextlib.contextmanager
def atomic_bytes(path: Path) -> Iterator[IO[bytes]]:
    """A temporary binary file beside ``path`` that replaces it once written whole."""
    with _replacing(path) as tmp, tmp.open("wb") as fh:
        yield fh


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    # On any error (a full disk, Ctrl-C) the temporary file goes and ``path`` stays as it
    # was: a full disk once left ``.results.jsonl.tmp`` behind.
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all."""
    with atomic_text(path) as fh:
        fh.write(text)
