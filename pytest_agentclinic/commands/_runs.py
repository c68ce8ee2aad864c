"""Reading a run directory for a command: one line on stderr, not a traceback, when it holds
nothing to read."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import RunDirectoryError
from ..core.records import ResultRecord


class NoRun(RunDirectoryError):
    """The path names no run with results (the message is the line to print)."""


def load_run(given: str, command: str) -> tuple[Path, list[ResultRecord]]:
    """The run directory of ``given`` (a run directory or its results.jsonl) and its records;
    :class:`NoRun` when there are none."""
    from ..runs import directory
    from ..runs.errors import NoResults

    try:
        results = directory.results_path(given)
    except NoResults as exc:
        raise NoRun(f"agentclinic {command}: {exc}") from None
    records = directory.load_records(results)
    if not records:
        raise NoRun(f"agentclinic {command}: {results} holds no results")
    return results.parent, records


def say(exc: NoRun) -> int:
    """Print ``exc`` on stderr; the exit status of bad input."""
    print(exc, file=sys.stderr)
    return 2
