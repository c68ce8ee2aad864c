"""An option's declaration: its ``--agent-*`` flag, ini twin, converter and default.

Declared by the plugin for the run as a whole and by each protocol for its own conditions;
the pytest layer adds and resolves them all the same way. An option's ``kind`` is a
converter of :mod:`.converters` (``count(0)``, ``duration``, ``choice(...)``): the value it
returns is the option's typed value, so ``Option[int]`` reads as an ``int`` wherever the run
reads it. A protocol may still name a kind by its legacy string (``"int"``, ``"list"``...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from . import converters

if TYPE_CHECKING:
    # A bare ``Option`` (a protocol's ``tuple[api.Option, ...]``) is ``Option[Any]``;
    # typing_extensions is not imported at run time (an import every pytest run would pay).
    from typing_extensions import TypeVar as _DefaultedTypeVar

    T = _DefaultedTypeVar("T", covariant=True, default=Any)
else:
    T = TypeVar("T", covariant=True)


@dataclass(frozen=True)
class Option(Generic[T]):
    """One option: its CLI flag, ini twin, converter and default."""

    name: str  # ``doctor`` -> ``--agent-doctor`` and ini ``agent_doctor``
    help: str
    default: Any
    #: The converter of its values (see :mod:`.converters`; a :class:`~.converters.Repeated`
    #: one makes the option repeatable), or a legacy name: str | list | int | int0 (>= 0) |
    #: float | ints | fraction | money | limit (> 0 or None).
    kind: str | Callable[[Any], T] = "str"
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

    @property
    def repeatable(self) -> bool:
        """Whether the flag may be given more than once (and its ini twin is a line list)."""
        return self.kind == "list" or isinstance(self.kind, converters.Repeated)

    @property
    def converter(self) -> Callable[[Any], T]:
        """The callable that converts a value given to this option's type."""
        if callable(self.kind):
            return self.kind
        if self.kind == "list":
            # A list with a default must keep a value: ``--agent-doctor=`` is a mistake.
            return cast("Callable[[Any], T]",
                        converters.Repeated(converters.text, required=bool(self.default)))
        if self.kind not in converters.KINDS:
            raise ValueError(f"its declaration names an unknown kind {self.kind!r} (one of: "
                             f"{', '.join((*converters.KINDS, 'list'))}, or a converter)")
        return converters.KINDS[self.kind]

    def convert(self, value: Any) -> T:
        """``value`` converted, within :attr:`choices` and through :attr:`check`; a
        ValueError (whose message names what is allowed) otherwise."""
        converted = self.converter(value)
        if self.choices is not None:
            for v in converted if isinstance(converted, tuple) else (converted,):
                if v not in self.choices:
                    raise converters.OptionValueError(
                        f"{v!r} is not one of: {', '.join(self.choices)}")
        if self.check is not None:
            converted = self.check(converted)
        return converted
