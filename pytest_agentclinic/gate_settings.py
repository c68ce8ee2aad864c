"""The gate's settings and the ``--agent-gate-on`` vocabulary (no numpy: read at startup)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: The fields that make an item's condition (not the doctor, the case or the sample).
CONDITION_FIELDS = ("patient", "bias", "turn_budget", "experiment", "answer_format")
#: The keywords ``--agent-gate-on`` accepts besides ``FIELD=VALUE``.
GATE_ON_KEYWORDS = ("default", "all", "pooled")


@dataclass(frozen=True)
class GateSettings:
    """The CI gate; inactive when neither a minimum accuracy nor a baseline is given."""

    min_accuracy: float | None = None
    baseline: Path | None = None
    max_drop: float = 0.0
    alpha: float = 0.05
    #: ``--agent-gate-on`` values (see :mod:`.report.conditions`).
    on: tuple[str, ...] = ("default",)

    @property
    def active(self) -> bool:
        """Whether a gate decides the exit status."""
        return self.min_accuracy is not None or self.baseline is not None


def check_gate_on(values: Sequence[str]) -> tuple[str, ...]:
    """Return ``values``; raise ValueError naming what is allowed on a bad one."""
    for value in values:
        field, sep, wanted = value.partition("=")
        if value in GATE_ON_KEYWORDS or (sep and field in CONDITION_FIELDS and wanted):
            continue
        raise ValueError(f"{value!r} is not one of: {', '.join(GATE_ON_KEYWORDS)}, or "
                         f"FIELD=VALUE with FIELD one of {', '.join(CONDITION_FIELDS)}")
    return tuple(values)
