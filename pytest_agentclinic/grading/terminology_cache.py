"""Where the terminology's SQLite index lives (:mod:`.terminology_index` reads and writes
it): ``$AGENTCLINIC_TERMINOLOGY_CACHE`` if set (``off``: no index), else
``$XDG_CACHE_HOME/pytest-agentclinic/``, else ``~/.cache/pytest-agentclinic/``, and where
that cannot be written (a read-only home) a private ``pytest-agentclinic-<uid>`` in the
temporary directory, used only when it is this user's and closed to others: an index
decides verdicts.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["ENV", "cache_dir", "cache_dirs", "private_enough", "private_temp_dir",
           "writable_cache_dir"]

#: The environment variable naming the cache directory (``off``: no index).
ENV = "AGENTCLINIC_TERMINOLOGY_CACHE"


def cache_dir() -> Path | None:
    """Where the index lives (see the module docstring); None when disabled."""
    configured = os.environ.get(ENV)
    if configured:
        return None if configured == "off" else Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home directory to be found
            return None
    return Path(base) / "pytest-agentclinic"


def cache_dirs() -> list[Path]:
    """Where to look for (and build) the index, in order: :func:`cache_dir`, then, unless
    the directory was configured, a private one in the system's temporary directory. A
    read-only home (some CI runners have one) would otherwise cost every process the
    in-memory load."""
    preferred = cache_dir()
    if preferred is None or os.environ.get(ENV):
        return [] if preferred is None else [preferred]
    return [preferred, private_temp_dir()]


def private_temp_dir() -> Path:
    """``pytest-agentclinic-<uid>`` in the temporary directory (checked by :func:`private_enough`
    before use: other users can write there, and an index decides verdicts)."""
    owner = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"pytest-agentclinic-{owner}"


def writable_cache_dir() -> Path | None:
    """The first of :func:`cache_dirs` where an index can be built (created if need be)."""
    for directory in cache_dirs():
        with contextlib.suppress(OSError):
            directory.mkdir(parents=True, exist_ok=True)
            if os.access(directory, os.W_OK) and private_enough(directory):
                return directory
    return None


def private_enough(directory: Path) -> bool:
    """The temporary-directory fallback must be ours and closed to others (another user
    could otherwise plant an index there); other directories are the user's own choice."""
    if directory != private_temp_dir() or not hasattr(os, "getuid"):
        return True
    directory.mkdir(mode=0o700, exist_ok=True)
    directory.chmod(0o700)  # fails (OSError) unless it is ours
    info = directory.lstat()
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
