"""Entry points: how an installed distribution adds a protocol, a case format or report
tables without touching this project.

The groups (a distribution declares them in its ``pyproject.toml``)::

    [project.entry-points."pytest_agentclinic.protocols"]
    triage = "agentclinic_triage:Triage"          # name = the protocol's name

    [project.entry-points."pytest_agentclinic.case_formats"]
    ".triage" = "agentclinic_triage:read_triage"  # name = the file suffix

    [project.entry-points."pytest_agentclinic.report_tables"]
    triage = "agentclinic_triage:tables"          # name = the protocol whose records they show

    [project.entry-points."pytest_agentclinic.jsonl_shapes"]
    mediq = "agentclinic_mediq:SHAPE"             # a JsonlShape: .jsonl records by their keys

The pytest plugin and the ``agentclinic`` CLI read them through the registries
(``protocols.registry``, ``cases.formats``, ``report.table_registry``), each group once per
process and only when a registry is first asked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

PROTOCOLS = "pytest_agentclinic.protocols"
CASE_FORMATS = "pytest_agentclinic.case_formats"
REPORT_TABLES = "pytest_agentclinic.report_tables"
#: JSON-lines record shapes (``.jsonl`` is built in: recognised by the records' keys).
JSONL_SHAPES = "pytest_agentclinic.jsonl_shapes"


class ExtensionError(ValueError):
    """An installed extension's entry point could not be loaded or is not what its group
    needs; the message names the entry point and its distribution."""


@functools.cache
def declared(group: str) -> tuple[EntryPoint, ...]:
    """The entry points of ``group`` across the installed distributions (read once)."""
    return tuple(_every().select(group=group))


@functools.cache
def _every() -> Any:
    # One pass over the installed distributions' metadata for all the groups: each pass
    # reads every distribution's entry_points.txt, and a run that uses agents asks for each
    # group (a few ms a pass, paid in every pytest run for the protocols group). Any:
    # SelectableGroups on Python 3.10 and 3.11, EntryPoints after; both select by group.
    return entry_points()


def load(point: EntryPoint) -> object:
    """The object ``point`` names; :class:`ExtensionError` naming it when it fails."""
    try:
        return point.load()
    except Exception as exc:  # an extension's import error is its own, reported as such
        raise ExtensionError(f"{describe(point)}: cannot load: {type(exc).__name__}: "
                             f"{exc}") from exc


def describe(point: EntryPoint) -> str:
    """``entry point 'triage = pkg:Triage' (group ..., distribution ...)``."""
    dist = point.dist.name if point.dist is not None else "?"
    return (f"entry point '{point.name} = {point.value}' (group {point.group}, "
            f"distribution {dist})")


_LOADED: set[str] = set()


def load_once(group: str, add: Callable[[EntryPoint, object], None]) -> None:
    """Hand every entry point of ``group`` and what it names to ``add`` (which checks and
    registers it, raising :class:`ExtensionError` on a wrong one): the first call per group
    only, so a registry may call this each time it is asked."""
    if group in _LOADED:
        return
    _LOADED.add(group)
    for point in declared(group):
        add(point, load(point))
