"""An option's declaration: its ``--agent-*`` flag, ini twin, type and default.

Declared by the plugin for the run as a whole and by each protocol for its own conditions;
the pytest layer adds and resolves them all the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Option:
    """One option: its CLI flag, ini twin, type and default."""

    name: str  # ``doctor`` -> ``--agent-doctor`` and ini ``agent_doctor``
    help: str
    default: Any
    kind: str = "str"  # str | list | int | int0 (>= 0) | float | ints | fraction | money |
    #                    limit (> 0 or None)
    metavar: str = "VALUE"
    #: The values allowed (each value of a list option), None for any.
    choices: tuple[str, ...] | None = None
    #: Turns the converted value into the setting; raises ValueError with a message that
    #: the user sees after the flag (e.g. expanding bias groups).
    check: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        """The command-line flag."""
        return "--agent-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        """The ini-file key."""
        return "agent_" + self.name
