"""The run store's errors, of the run-directory family of :mod:`..core.errors`."""

from __future__ import annotations

from ..core.errors import RunDirectoryError as RunDirectoryError


class RunInUse(RunDirectoryError):
    """Another live process holds the run directory."""


class RunDirError(RunDirectoryError):
    """The run directory cannot be created or written (read-only, a file in its place)."""
