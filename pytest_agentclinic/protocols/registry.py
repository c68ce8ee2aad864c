"""The protocols by name: the two built-in ones, those installed distributions declare in the
``pytest_agentclinic.protocols`` entry-point group (read once, when first asked: the pytest
plugin and the CLI both come here), and any a conftest registers.

The built-in protocols are imported when first asked for: pytest declares every protocol's
options in every run (:func:`all_options`, from :mod:`.builtin_options`), and a run with no
agents must not pay for their agents, grading and report code.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core import extensions
from ..core.options import Option
from .builtin_options import AGENTCLINIC_OPTIONS, CRAFTMD_OPTIONS

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from ..core.records import ResultRecord
    from ..report.tables import Table
    from .base import Protocol

DEFAULT = "agentclinic"
#: Built-in protocols: module and class, imported on first use; their options.
_BUILT_IN: dict[str, tuple[str, str, tuple[Option, ...]]] = {
    "agentclinic": (".agentclinic", "AgentClinic", AGENTCLINIC_OPTIONS),
    "craftmd": (".craftmd", "CraftMD", CRAFTMD_OPTIONS),
}
_PROTOCOLS: dict[str, type[Protocol] | None] = dict.fromkeys(_BUILT_IN)


def _built_in(name: str) -> type[Protocol]:
    module, cls, _options = _BUILT_IN[name]
    protocol: type[Protocol] = getattr(importlib.import_module(module, __package__), cls)
    return protocol


def register(protocol: type[Protocol]) -> type[Protocol]:
    """Make ``protocol`` available as ``--agent-protocol=<its name>`` (usable as a class
    decorator). Registering a name again replaces it: a conftest imported anew wins.

    The class must set its own ``name``: a subclass that inherits its parent's would
    label its records as the parent's, and the report would show them as the parent's."""
    from .base import Protocol

    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)):
        raise TypeError(f"{protocol!r} is not a Protocol subclass")
    if "name" not in vars(protocol) or not isinstance(protocol.name, str) or not protocol.name:
        raise ValueError(f"protocol {protocol.__qualname__} must set its own `name` (its "
                         f"records are labelled with it)")
    if protocol.name in _BUILT_IN and protocol is not _built_in(protocol.name):
        raise ValueError(f"protocol name {protocol.name!r} is built in")
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def _load_installed() -> None:
    """Register the protocols installed distributions declare (once per process)."""
    extensions.load_once(extensions.PROTOCOLS, _add_installed)


def _add_installed(point: EntryPoint, protocol: object) -> None:
    from .base import Protocol

    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)):
        raise extensions.ExtensionError(
            f"{extensions.describe(point)}: {protocol!r} is not a Protocol subclass")
    if vars(protocol).get("name") != point.name:
        raise extensions.ExtensionError(
            f"{extensions.describe(point)}: the entry point's name must be the "
            f"protocol's own `name` ({vars(protocol).get('name')!r})")
    if point.name in _BUILT_IN:
        raise extensions.ExtensionError(
            f"{extensions.describe(point)}: {point.name!r} is a built-in protocol's name; "
            f"an installed protocol may not replace it")
    # A conftest's registration of the same name, made earlier, wins.
    if point.name not in _PROTOCOLS:
        register(protocol)


def names() -> tuple[str, ...]:
    """Every registered protocol's name, the built-in ones first."""
    _load_installed()
    return tuple(_PROTOCOLS)


def get(name: str) -> type[Protocol]:
    """The protocol registered as ``name``; ValueError naming the known ones otherwise."""
    _load_installed()
    if name not in _PROTOCOLS:
        broken = extensions.problem_of(extensions.PROTOCOLS, name)
        if broken is not None:
            raise ValueError(broken)
        raise ValueError(f"{name!r} is not one of: {', '.join(_PROTOCOLS)}") from None
    protocol = _PROTOCOLS[name]
    # A built-in is looked up in its module each time (a dict lookup once imported), not
    # kept: the first import may happen inside a run whose modules are then dropped
    # (pytester's in-process runs), and a later import makes a new class.
    return _built_in(name) if protocol is None else protocol


def all_options() -> tuple[Option, ...]:
    """The options of every registered protocol, each name once (protocols share some)."""
    _load_installed()
    seen: dict[str, Option] = {}
    for name, protocol in _PROTOCOLS.items():
        options = protocol.options if protocol is not None else _BUILT_IN[name][2]
        for option in options:
            seen.setdefault(option.name, option)
    return tuple(seen.values())


def all_conditions() -> tuple[str, ...]:
    """The own conditions of every registered protocol, each name once (the built-in ones
    have none: theirs are the item header's)."""
    _load_installed()
    return tuple(dict.fromkeys(name for protocol in _PROTOCOLS.values()
                               if protocol is not None for name in protocol.conditions))


def report_tables(records: Sequence[ResultRecord], resamples: int = 10_000) -> list[Table]:
    """Every table of a run: the common ones, with each protocol's own for its records."""
    from ..report.tables import build_tables

    return build_tables(records, resamples, protocol_tables(records, resamples))


def protocol_tables(records: Sequence[ResultRecord], resamples: int) -> list[Table]:
    """Each protocol's own tables for its records: the protocol's
    :meth:`~.base.Protocol.tables` (when it is installed) and any the table registry holds
    for it."""
    from ..report import table_registry

    _load_installed()
    extra: list[Table] = []
    for name in dict.fromkeys(r.protocol for r in records):
        mine = [r for r in records if r.protocol == name]
        if name in _PROTOCOLS:
            extra += get(name)().tables(mine, resamples)
        extra += table_registry.tables_for(name, mine, resamples)
    return extra
