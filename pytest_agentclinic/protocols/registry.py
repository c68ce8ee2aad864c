"""The protocols by name: the two built-in ones and any a plugin or conftest registers."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.options import Option
from ..core.records import ResultRecord
from ..report.tables import Table, build_tables
from .agentclinic import AgentClinic
from .base import Protocol
from .craftmd import CraftMD

DEFAULT = AgentClinic.name
_PROTOCOLS: dict[str, type[Protocol]] = {p.name: p for p in (AgentClinic, CraftMD)}


def register(protocol: type[Protocol]) -> type[Protocol]:
    """Make ``protocol`` available as ``--agent-protocol=<its name>`` (usable as a class
    decorator). Registering a name again replaces it: a conftest imported anew wins."""
    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)):
        raise TypeError(f"{protocol!r} is not a Protocol subclass")
    if protocol.name in (AgentClinic.name, CraftMD.name) and protocol not in (AgentClinic,
                                                                             CraftMD):
        raise ValueError(f"protocol name {protocol.name!r} is built in")
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def names() -> tuple[str, ...]:
    """Every registered protocol's name, the built-in ones first."""
    return tuple(_PROTOCOLS)


def get(name: str) -> type[Protocol]:
    """The protocol registered as ``name``; ValueError naming the known ones otherwise."""
    try:
        return _PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not one of: {', '.join(_PROTOCOLS)}") from None


def all_options() -> tuple[Option, ...]:
    """The options of every registered protocol, each name once (protocols share some)."""
    seen: dict[str, Option] = {}
    for protocol in _PROTOCOLS.values():
        for option in protocol.options:
            seen.setdefault(option.name, option)
    return tuple(seen.values())


def report_tables(records: Sequence[ResultRecord], resamples: int = 10_000) -> list[Table]:
    """Every table of a run: the common ones, with each protocol's own for its records."""
    extra: list[Table] = []
    for name in dict.fromkeys(r.protocol for r in records):
        protocol = _PROTOCOLS.get(name)
        if protocol is not None:
            extra += protocol().tables([r for r in records if r.protocol == name], resamples)
    return build_tables(records, resamples, extra)
