"""The protocols by name: the two built-in ones and any a plugin or conftest registers.

The built-in protocols are imported when first asked for: pytest declares every protocol's
options in every run (:func:`all_options`, from :mod:`.builtin_options`), and a run with no
agents must not pay for their agents, grading and report code.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.options import Option
from .builtin_options import AGENTCLINIC_OPTIONS, CRAFTMD_OPTIONS

if TYPE_CHECKING:
    from ..core.records import ResultRecord
    from ..report.tables import Table
    from .base import Protocol

DEFAULT = "agentclinic"
#: Built-in protocols: module and class, imported on first use; their options.
_BUILTIN: dict[str, tuple[str, str, tuple[Option, ...]]] = {
    "agentclinic": (".agentclinic", "AgentClinic", AGENTCLINIC_OPTIONS),
    "craftmd": (".craftmd", "CraftMD", CRAFTMD_OPTIONS),
}
_PROTOCOLS: dict[str, type[Protocol] | None] = dict.fromkeys(_BUILTIN)


def _builtin(name: str) -> type[Protocol]:
    module, cls, _options = _BUILTIN[name]
    protocol: type[Protocol] = getattr(importlib.import_module(module, __package__), cls)
    return protocol


def register(protocol: type[Protocol]) -> type[Protocol]:
    """Make ``protocol`` available as ``--agent-protocol=<its name>`` (usable as a class
    decorator). Registering a name again replaces it: a conftest imported anew wins."""
    from .base import Protocol

    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)):
        raise TypeError(f"{protocol!r} is not a Protocol subclass")
    if protocol.name in _BUILTIN and protocol is not _builtin(protocol.name):
        raise ValueError(f"protocol name {protocol.name!r} is built in")
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def names() -> tuple[str, ...]:
    """Every registered protocol's name, the built-in ones first."""
    return tuple(_PROTOCOLS)


def get(name: str) -> type[Protocol]:
    """The protocol registered as ``name``; ValueError naming the known ones otherwise."""
    if name not in _PROTOCOLS:
        raise ValueError(f"{name!r} is not one of: {', '.join(_PROTOCOLS)}") from None
    protocol = _PROTOCOLS[name]
    if protocol is None:
        protocol = _PROTOCOLS[name] = _builtin(name)
    return protocol


def all_options() -> tuple[Option, ...]:
    """The options of every registered protocol, each name once (protocols share some)."""
    seen: dict[str, Option] = {}
    for name, protocol in _PROTOCOLS.items():
        options = protocol.options if protocol is not None else _BUILTIN[name][2]
        for option in options:
            seen.setdefault(option.name, option)
    return tuple(seen.values())


def report_tables(records: Sequence[ResultRecord], resamples: int = 10_000) -> list[Table]:
    """Every table of a run: the common ones, with each protocol's own for its records."""
    from ..report.tables import build_tables

    extra: list[Table] = []
    for name in dict.fromkeys(r.protocol for r in records):
        if name in _PROTOCOLS:
            protocol = get(name)
            extra += protocol().tables([r for r in records if r.protocol == name], resamples)
    return build_tables(records, resamples, extra)
