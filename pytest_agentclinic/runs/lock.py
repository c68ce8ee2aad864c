"""One session per run directory: a lock file that holds the owner's process id.

Two sessions given the same ``--agent-run-name`` once appended to one results.jsonl (358
lines for 179 items) and the report accepted the doubled run. The session that owns a run
directory holds an exclusive ``flock`` on its ``.lock`` file until it ends; the lock goes
with the process, so a killed session never leaves the directory locked. Under xdist the
controller holds it for its workers.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import IO

from .errors import RunDirError, RunInUse

LOCK = ".lock"


class RunLock:
    """The held lock of one run directory (see :func:`lock_run`)."""

    def __init__(self, run_dir: Path, handle: IO[str], created: list[Path]) -> None:
        self.run_dir = run_dir
        self._handle: IO[str] | None = handle
        #: Directories this lock created (removed again when the run wrote nothing).
        self._created = created

    def release(self, *, started: bool) -> None:
        """Let the directory go; when the run never started, remove what locking made."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        if not started:
            # Removed while still held: no other session can have opened it as ours.
            with contextlib.suppress(OSError):
                (self.run_dir / LOCK).unlink()
        handle.close()
        if not started:
            for directory in self._created:  # innermost first; only if left empty
                with contextlib.suppress(OSError):
                    directory.rmdir()


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def lock_run(run_dir: Path) -> RunLock:
    """Create ``run_dir`` if needed and lock it for this process.

    Raises :class:`RunInUse` naming the other process, or :class:`RunDirError` when the
    directory cannot be written.
    """
    created = _missing_parents(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        handle = (run_dir / LOCK).open("a+", encoding="utf-8")
    except OSError as exc:
        raise RunDirError(f"cannot write the run directory {run_dir}: "
                          f"{exc.strerror or type(exc).__name__}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise RunInUse(f"the run directory {run_dir} is in use by another session "
                       f"(pid {owner}); wait for it or choose another --agent-run-name"
                       ) from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
    except OSError as exc:
        handle.close()
        raise RunDirError(f"cannot write the run directory {run_dir}: "
                          f"{exc.strerror or type(exc).__name__}") from None
    return RunLock(run_dir, handle, created)
