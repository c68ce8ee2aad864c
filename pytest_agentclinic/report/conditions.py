"""The conditions a run varies, and the cells the gate judges one by one.

A *condition* is everything about an item except its case and sample: the patient model, the
bias variant, the turn budget, the CRAFT-MD experiment and answer mode. Accuracy under one
condition says nothing about another (an unbiased run and a biased one, MCQ and free
response), so the gate judges each doctor model under each condition the run varies on its
own, and anything that pools conditions says so ("pooled over ...").

``--agent-gate-on`` chooses the cells (repeatable):

* ``default``: the unbiased condition (when the run has it) and every other varied
  condition on its own, e.g. every CRAFT-MD experiment x answer mode;
* ``all``: every condition on its own, each bias variant included;
* ``FIELD=VALUE``: only the items with that value (values of one field are alternatives,
  fields combine), e.g. ``bias=doctor:recency`` or ``turn_budget=20``;
* ``pooled``: one cell per doctor model, pooled over the conditions selected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errors import InputError
from ..core.records import ResultRecord
from ..core.transcript import BUILTIN_CONDITIONS
from .statistics import natural_key

#: The keywords ``--agent-gate-on`` accepts besides ``FIELD=VALUE``.
GATE_ON_KEYWORDS = ("default", "all", "pooled")


def check_gate_on(values: Sequence[str], extra: Sequence[str] = ()) -> tuple[str, ...]:
    """Return ``values``; raise an InputError (a ValueError) naming what is allowed on a bad
    one (``extra``: the run's protocol's own condition names)."""
    fields = (*BUILTIN_CONDITIONS, *extra)
    for value in values:
        field, sep, wanted = value.partition("=")
        if value in GATE_ON_KEYWORDS or (sep and field in fields and wanted):
            continue
        raise InputError(f"{value!r} is not one of: {', '.join(GATE_ON_KEYWORDS)}, or "
                         f"FIELD=VALUE with FIELD one of {', '.join(fields)}")
    return tuple(values)


def condition_fields(records: Sequence[ResultRecord]) -> tuple[str, ...]:
    """The built-in condition fields, then every protocol condition the records carry: the
    set is open, as protocols are."""
    own = dict.fromkeys(name for r in records for name in r.conditions)
    return (*BUILTIN_CONDITIONS, *(name for name in own if name not in BUILTIN_CONDITIONS))


def varied_fields(records: Sequence[ResultRecord]) -> tuple[str, ...]:
    """The condition fields with more than one value among ``records``."""
    return tuple(f for f in condition_fields(records)
                 if len({r.condition(f) for r in records}) > 1)


def condition_label(condition: dict[str, str]) -> str:
    """``bias=none, turn_budget=20``; empty when nothing varies."""
    return ", ".join(f"{k}={v}" for k, v in condition.items())


@dataclass(frozen=True)
class Cell:
    """The items of one doctor model under one condition (or pooled over several)."""

    doctor: str
    condition: dict[str, str]
    records: tuple[ResultRecord, ...]
    #: ``field -> number of values`` pooled together in this cell.
    pooled: dict[str, int]

    @property
    def label(self) -> str:
        """``doctor [bias=none]`` or ``doctor (pooled over 13 bias values)``."""
        text = self.doctor
        if self.condition:
            text += f" [{condition_label(self.condition)}]"
        if self.pooled:
            text += " (pooled over " + ", ".join(
                f"{n} {field} values" for field, n in self.pooled.items()) + ")"
        return text


def _filters(on: Sequence[str], records: Sequence[ResultRecord]) -> dict[str, set[str]]:
    wanted: dict[str, set[str]] = {}
    for value in on:
        field, sep, what = value.partition("=")
        if sep:
            wanted.setdefault(field, set()).add(what)
    # The unbiased condition is the release measurement; biased variants are studies.
    if (("default" in on or not on) and "bias" not in wanted
            and any(r.bias == "none" for r in records)):
        wanted["bias"] = {"none"}
    return wanted


def gate_cells(records: Sequence[ResultRecord], on: Sequence[str]) -> list[Cell]:
    """The cells ``on`` selects, sorted by doctor then condition (see the module doc)."""
    varied = varied_fields(records)
    wanted = _filters(on, records)
    chosen = [r for r in records
              if all(r.condition(f) in values for f, values in wanted.items())]
    pooled = "pooled" in on
    keep = () if pooled else varied
    groups: dict[tuple[str, ...], list[ResultRecord]] = {}
    for r in chosen:
        groups.setdefault((r.doctor, *(r.condition(f) for f in keep)), []).append(r)
    cells = []
    for key in sorted(groups, key=lambda k: tuple(natural_key(v) for v in k)):
        mine = groups[key]
        condition = dict(zip(keep, key[1:], strict=True))
        spread = {f: len({r.condition(f) for r in mine}) for f in varied if f not in keep}
        if pooled:
            condition = {f: next(iter(wanted[f])) for f in varied
                         if f in wanted and len(wanted[f]) == 1}
        cells.append(Cell(key[0], condition, tuple(mine),
                          {f: n for f, n in spread.items() if n > 1}))
    return cells
