"""The protocols by name: the two built-in ones, those installed distributions declare in the
``pytest_agentclinic.protocols`` entry-point group (read once, when first asked: the pytest
plugin and the CLI both come here), and any a conftest registers."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import EntryPoint

from ..core import extensions
from ..core.options import Option
from ..core.records import ResultRecord
from ..report import table_registry
from ..report.tables import Table, build_tables
from .agentclinic import AgentClinic
from .base import Protocol
from .craftmd import CraftMD

DEFAULT = AgentClinic.name
_BUILT_IN = (AgentClinic, CraftMD)
_PROTOCOLS: dict[str, type[Protocol]] = {p.name: p for p in _BUILT_IN}


def register(protocol: type[Protocol]) -> type[Protocol]:
    """Make ``protocol`` available as ``--agent-protocol=<its name>`` (usable as a class
    decorator). Registering a name again replaces it: a conftest imported anew wins.

    The class must set its own ``name``: a subclass that inherits its parent's would
    label its records as the parent's, and the report would show them as the parent's."""
    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)):
        raise TypeError(f"{protocol!r} is not a Protocol subclass")
    if "name" not in vars(protocol) or not isinstance(protocol.name, str) or not protocol.name:
        raise ValueError(f"protocol {protocol.__qualname__} must set its own `name` (its "
                         f"records are labelled with it)")
    if protocol.name in (p.name for p in _BUILT_IN) and protocol not in _BUILT_IN:
        raise ValueError(f"protocol name {protocol.name!r} is built in")
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def _load_installed() -> None:
    """Register the protocols installed distributions declare (once per process)."""
    extensions.load_once(extensions.PROTOCOLS, _add_installed)


def _add_installed(point: EntryPoint, protocol: object) -> None:
    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)):
        raise extensions.ExtensionError(
            f"{extensions.describe(point)}: {protocol!r} is not a Protocol subclass")
    if vars(protocol).get("name") != point.name:
        raise extensions.ExtensionError(
            f"{extensions.describe(point)}: the entry point's name must be the "
            f"protocol's own `name` ({vars(protocol).get('name')!r})")
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
    try:
        return _PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not one of: {', '.join(_PROTOCOLS)}") from None


def all_options() -> tuple[Option, ...]:
    """The options of every registered protocol, each name once (protocols share some)."""
    _load_installed()
    seen: dict[str, Option] = {}
    for protocol in _PROTOCOLS.values():
        for option in protocol.options:
            seen.setdefault(option.name, option)
    return tuple(seen.values())


def report_tables(records: Sequence[ResultRecord], resamples: int = 10_000) -> list[Table]:
    """Every table of a run: the common ones, with each protocol's own for its records (the
    protocol's :meth:`~.base.Protocol.tables` and any the table registry holds for it)."""
    _load_installed()
    extra: list[Table] = []
    for name in dict.fromkeys(r.protocol for r in records):
        mine = [r for r in records if r.protocol == name]
        protocol = _PROTOCOLS.get(name)
        if protocol is not None:
            extra += protocol().tables(mine, resamples)
        extra += table_registry.tables_for(name, mine, resamples)
    return build_tables(records, resamples, extra)
