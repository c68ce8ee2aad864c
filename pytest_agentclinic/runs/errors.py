"""The run store's errors, of the run-directory family of :mod:`..core.errors`."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import InputError
from ..core.errors import RunDirectoryError as RunDirectoryError


class RunInUse(RunDirectoryError):
    """Another live process holds the run directory."""


class RunDirError(RunDirectoryError):
    """The run directory cannot be created or written (read-only, a file in its place)."""


class NoResults(RunDirectoryError, FileNotFoundError):
    """The path holds no run's results file (a FileNotFoundError too, as its callers have
    long caught it)."""


class BadRecord(InputError):
    """A line of a results file is not a result record: names the file, line and field."""

    def __init__(self, message: str, *, path: str | Path, line: int) -> None:
        super().__init__(message, path=path, line=line)

    def located(self) -> str:
        """``bad result record: FILE:LINE: field 'x': why`` (the words a gate prints)."""
        return f"bad result record: {self.path}:{self.line}: {self.message}"
