"""Option values from text: one converter per kind of value, shared by every front end.

The ``--agent-*`` options of a pytest run (and their ini twins) and the ``agentclinic``
commands' arguments take the same kinds of value: a count, a duration, a fraction, a choice,
a URL, a model name. Each kind is converted here, once: a converter takes the text given (or
a default already of its type) and returns the typed value, or raises
:class:`OptionValueError` whose message says what is allowed (``expected a whole number >= 1,
got '0'``). The pytest layer turns that into ``pytest.UsageError`` after the flag, the
command line into an argparse error (``commands._args.argparse_type``). Nothing here imports
more than the standard library and the project's errors.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from .errors import InputError

T = TypeVar("T")

#: What a converter is: a value given (text, a list of texts, or a default) to a typed value.
Convert = Callable[[Any], T]


class OptionValueError(InputError):
    """A value an option does not take; the message names what it takes (a ValueError, as
    every :class:`~.errors.InputError`)."""


def _refuse(allowed: str, value: object) -> OptionValueError:
    return OptionValueError(f"expected {allowed}, got {value!r}")


def _given(value: object) -> str:
    """The text of a value as given (a default may be a number already)."""
    return str(value).strip()


def count(minimum: int = 1) -> Convert[int]:
    """A whole number >= ``minimum``."""

    def convert(value: object) -> int:
        try:
            number = int(_given(value))
        except ValueError:
            raise _refuse(f"a whole number >= {minimum}", value) from None
        if number < minimum:
            raise _refuse(f"a whole number >= {minimum}", value)
        return number

    return convert


def number(minimum: float = 0.0, *, above: bool = False, what: str = "a number") -> Convert[float]:
    """A number >= ``minimum`` (> ``minimum`` when ``above``); ``what`` names it (``a
    number of seconds``)."""
    allowed = f"{what} {'>' if above else '>='} {minimum:g}"

    def convert(value: object) -> float:
        try:
            got = float(_given(value))
        except ValueError:
            raise _refuse(allowed, value) from None
        # NaN compares false with everything: refused like any other non-number.
        if not (got > minimum or (got == minimum and not above)):
            raise _refuse(allowed, value)
        return got

    return convert


#: A wall-clock duration: a deadline of zero would fail every call.
duration = number(0.0, above=True, what="a number of seconds")
#: A delay (a retry's backoff): zero retries at once.
delay = number(0.0, what="a number of seconds")
#: An amount of money in USD.
money = number(0.0)
#: A rate or a budget: a limit of zero would run nothing.
positive = number(0.0, above=True)


def fraction(value: object) -> float:
    """A number between 0 and 1."""
    try:
        got = float(_given(value))
    except ValueError:
        got = -1.0
    if not 0.0 <= got <= 1.0:
        raise _refuse("a fraction between 0 and 1", value)
    return got


def optional(convert: Convert[T]) -> Convert[T | None]:
    """``convert``, or None for a value not given (None or empty)."""

    def maybe(value: object) -> T | None:
        return None if value is None or _given(value) == "" else convert(value)

    return maybe


def choice(values: Sequence[str]) -> Convert[str]:
    """One of ``values``."""
    allowed = tuple(values)

    def convert(value: object) -> str:
        got = _given(value)
        if got not in allowed:
            raise OptionValueError(f"{got!r} is not one of: {', '.join(allowed)}")
        return got

    return convert


def text(value: object) -> str:
    """Any text, its surrounding spaces removed."""
    return _given(value)


def model(value: object) -> str:
    """A model string: ``offline`` or a litellm model (its provider is checked later, in
    one place, against the names litellm knows)."""
    got = _given(value)
    if not got:
        raise OptionValueError("give 'offline' or a litellm model string")
    return got


def path(value: object) -> Path:
    """A file or directory path (not checked to exist: an output may not yet)."""
    got = _given(value)
    if not got:
        raise OptionValueError("expected a path, got ''")
    return Path(got)


def api_base(value: object) -> str:
    """An ``http(s)://`` URL with a host and no credentials: a key in it would be sent
    nowhere and could leak into reports (the error never echoes it)."""
    from .redact import has_userinfo, redact

    url = _given(value)
    if has_userinfo(url):
        raise OptionValueError(f"credentials in the URL ({redact(url)}) are not supported; "
                               "give the key through the provider's variable (e.g. "
                               "OPENAI_API_KEY)")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OptionValueError(f"expected an http:// or https:// URL with a host (e.g. "
                               f"http://127.0.0.1:8000/v1), got {url!r}")
    try:
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError:
        raise OptionValueError(f"the port of {url!r} is not a number") from None
    return url


def counts(minimum: int = 1) -> Convert[tuple[int, ...]]:
    """Whole numbers >= ``minimum``, comma-separated (``10,20,30``) or listed."""
    one = count(minimum)

    def convert(value: object) -> tuple[int, ...]:
        items = value if isinstance(value, (list, tuple)) else _given(value).split(",")
        return tuple(one(item) for item in items if _given(item))

    return convert


def shard(value: object) -> tuple[int, int]:
    """``K/N`` with 1 <= K <= N: this process runs shard K of N."""
    k, _, n = _given(value).partition("/")
    if not (k.strip().isdigit() and n.strip().isdigit() and 1 <= int(k) <= int(n)):
        raise _refuse("K/N with 1 <= K <= N (e.g. 2/4)", value)
    return int(k), int(n)


def progress(value: object) -> float | None:
    """Seconds between status lines: None for ``auto``, 0 for ``off``, else a number > 0."""
    got = _given(value).lower()
    if got == "auto":
        return None
    if got == "off":
        return 0.0
    try:
        every = float(got)
    except ValueError:
        every = -1.0
    if not every > 0:
        raise _refuse("auto, off or a number of seconds > 0", value)
    return every


class Repeated(Generic[T]):
    """A repeatable option (``--agent-doctor a --agent-doctor b``, or one per ini line):
    each value converted, blanks dropped, repeats kept once, in order given.

    ``required``: at least one value must remain.
    """

    def __init__(self, each: Convert[T], *, required: bool = False) -> None:
        self.each = each
        self.required = required

    def __call__(self, value: object) -> tuple[T, ...]:
        items = value if isinstance(value, (list, tuple)) else [value]
        out = tuple(dict.fromkeys(self.each(v) for v in items if v is not None and _given(v)))
        if not out and self.required:
            raise OptionValueError("give at least one value")
        return out


#: The legacy names of :attr:`~.options.Option.kind` (a protocol may still declare its
#: options by these): each name's converter. ``list`` is :class:`Repeated` text.
KINDS: dict[str, Convert[Any]] = {
    "str": lambda value: value.strip() if isinstance(value, str) else value,
    "int": count(1),
    "int0": count(0),
    "float": number(0.0),
    "ints": counts(1),
    "fraction": optional(fraction),
    "money": optional(money),
    "limit": optional(positive),
}
