"""Report tables by protocol: builders a protocol's records get besides the common tables.

A protocol's own :meth:`Protocol.tables` is one source; this registry is the other, for
tables that come from a separate distribution (the ``pytest_agentclinic.report_tables``
entry-point group, named by protocol) or a conftest (:func:`register`). Read once, when the
report is first built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint

from ..core import extensions
from ..core.records import ResultRecord
from .tables import Table

#: ``(records of one protocol, bootstrap resamples) -> tables``.
TableBuilder = Callable[[Sequence[ResultRecord], int], list[Table]]

_BUILDERS: dict[str, list[TableBuilder]] = {}


def register(protocol: str, builder: TableBuilder) -> TableBuilder:
    """Add ``builder``'s tables to every report holding records of ``protocol``."""
    if not callable(builder):
        raise TypeError(f"{builder!r} is not callable")
    _BUILDERS.setdefault(protocol, []).append(builder)
    return builder


def _add_installed(point: EntryPoint, builder: object) -> None:
    if not callable(builder):
        raise extensions.ExtensionError(f"{extensions.describe(point)}: {builder!r} is not "
                                        f"callable")
    register(point.name, builder)


def tables_for(protocol: str, records: Sequence[ResultRecord], resamples: int) -> list[Table]:
    """The registered tables of ``protocol``'s ``records``."""
    extensions.load_once(extensions.REPORT_TABLES, _add_installed)
    tables: list[Table] = []
    for build in _BUILDERS.get(protocol, ()):
        try:
            tables += build(records, resamples)
        except Exception as exc:
            # One extension's bug must not cost the run its summary, report and verdict.
            name = getattr(build, "__qualname__", repr(build))
            extensions.problem(extensions.REPORT_TABLES, f"{protocol}:{name}",
                               f"report tables {name} of protocol {protocol!r} failed and "
                               f"are left out of the report: {type(exc).__name__}: {exc}")
    return tables
