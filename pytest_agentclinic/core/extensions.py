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

An extension fails alone: one that cannot be loaded (an import error, a ``sys.exit``), is not
what its group needs, claims a built-in name, or shares its name with another distribution's
is left out and becomes one warning naming its distribution (:func:`problems`) in a run that
does not use it; a run that asks for it by name gets that message as its usage error
(:func:`problem_of`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from .errors import ExtensionError as ExtensionError  # re-exported: callers name it here

PROTOCOLS = "pytest_agentclinic.protocols"
CASE_FORMATS = "pytest_agentclinic.case_formats"
REPORT_TABLES = "pytest_agentclinic.report_tables"
#: JSON-lines record shapes (``.jsonl`` is built in: recognised by the records' keys).
JSONL_SHAPES = "pytest_agentclinic.jsonl_shapes"


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
    except KeyboardInterrupt:
        raise
    # An extension's import error is its own, reported as such; a ``sys.exit`` in its
    # module too (it would end every pytest run of the environment, with no message).
    except BaseException as exc:
        raise ExtensionError(f"{describe(point)}: cannot load: {type(exc).__name__}: "
                             f"{exc}") from exc


def describe(point: EntryPoint) -> str:
    """``entry point 'triage = pkg:Triage' (group ..., distribution ...)``."""
    dist = point.dist.name if point.dist is not None else "?"
    return (f"entry point '{point.name} = {point.value}' (group {point.group}, "
            f"distribution {dist})")


def _distribution(point: EntryPoint) -> str:
    return point.dist.name if point.dist is not None else "?"


_LOADED: set[str] = set()
#: group -> entry-point name -> why it was left out.
_PROBLEMS: dict[str, dict[str, str]] = {}
#: Told of each problem as it is found (the pytest plugin turns them into warnings once it
#: is configured; before that they wait in :func:`problems`).
on_problem: Callable[[str], None] | None = None
_told: set[str] = set()


def _unique(group: str) -> Iterator[EntryPoint]:
    """The group's entry points whose name no other distribution declares too; two that
    share one are each a problem naming both distributions (neither wins: which one would
    depend on the order of ``sys.path``)."""
    by_name: dict[str, list[EntryPoint]] = {}
    for point in declared(group):
        by_name.setdefault(point.name, []).append(point)
    for name, points in by_name.items():
        dists = sorted({_distribution(p) for p in points})
        if len(dists) > 1:
            problem(group, name, f"entry point {name!r} (group {group}) is declared by more "
                                 f"than one distribution: {' and '.join(dists)}; uninstall "
                                 f"one of them")
        else:
            yield points[0]


def problem(group: str, name: str, message: str) -> None:
    """Leave ``name`` of ``group`` out for ``message`` (the first reason stands)."""
    _PROBLEMS.setdefault(group, {}).setdefault(name, message)
    if on_problem is not None and message not in _told:
        _told.add(message)
        on_problem(message)


def problems() -> list[str]:
    """Every problem found so far that :data:`on_problem` has not been told of (marked told)."""
    fresh = [m for names in _PROBLEMS.values() for m in names.values() if m not in _told]
    _told.update(fresh)
    return fresh


def problem_of(group: str, name: str) -> str | None:
    """Why ``name`` of ``group`` was left out, if it was."""
    return _PROBLEMS.get(group, {}).get(name)


def load_once(group: str, add: Callable[[EntryPoint, object], None]) -> None:
    """Hand every entry point of ``group`` and what it names to ``add`` (which checks and
    registers it, raising :class:`ExtensionError` on a wrong one): the first call per group
    only, so a registry may call this each time it is asked. A wrong one is left out, as a
    problem (:func:`problems`), and the others load."""
    if group in _LOADED:
        return
    _LOADED.add(group)
    for point in _unique(group):
        try:
            add(point, load(point))
        except ExtensionError as exc:
            problem(group, point.name, str(exc))
