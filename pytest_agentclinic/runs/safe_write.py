"""Writing run files so that a failed write leaves nothing half-done behind.

A full disk (or quota) is not one item's problem: every later write fails the same way.
:func:`is_disk_full` tells that case apart, so the session can stop calling the provider
instead of paying for replies it cannot keep.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
from collections.abc import Iterator
from typing import IO, Union

#: A file name as a string or a path.
StrPath = Union[str, "os.PathLike[str]"]

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
def atomic_text(path: StrPath) -> Iterator[IO[str]]:
    """A temporary text file beside ``path`` that replaces it once written whole."""
    # io.open, which Path.open called: the fault tests fill the disk there.
    with _replacing(path) as tmp, io.open(tmp, "w", encoding="utf-8") as fh:  # noqa: UP020
        yield fh


@contextlib.contextmanager
def atomic_bytes(path: StrPath) -> Iterator[IO[bytes]]:
    """A temporary binary file beside ``path`` that replaces it once written whole."""
    with _replacing(path) as tmp, io.open(tmp, "wb") as fh:  # noqa: UP020
        yield fh


@contextlib.contextmanager
def _replacing(path: StrPath) -> Iterator[str]:
    # On any error (a full disk, Ctrl-C) the temporary file goes and ``path`` stays as it
    # was: a full disk once left ``.results.jsonl.tmp`` behind. The names are strings, not
    # Paths: pathlib interns every part it parses, and the interpreter's table of interned
    # strings grew with every transcript's name (~0.3 KB an item, never given back).
    target = os.fspath(path)
    folder, name = os.path.split(target)
    tmp = os.path.join(folder, f".{name}.tmp")
    try:
        yield tmp
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: StrPath, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all."""
    with atomic_text(path) as fh:
        fh.write(text)
