"""Shared by the commands: argparse value types (the converters the ``--agent-*`` options
use), the model-call arguments and their settings, and a capped list of problems on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..core import converters
from ..core.converters import Convert

if TYPE_CHECKING:
    from ..llm.call_options import CallSettings

T = TypeVar("T")

#: Problems printed before "... and N more".
SHOW_PROBLEMS = 5


def print_problems(messages: Sequence[str], prefix: str = "", more: str = "more") -> None:
    """The first :data:`SHOW_PROBLEMS` messages on stderr, then how many were left out."""
    for message in messages[:SHOW_PROBLEMS]:
        print(f"{prefix}{message}", file=sys.stderr)
    if len(messages) > SHOW_PROBLEMS:
        print(f"... and {len(messages) - SHOW_PROBLEMS} {more}", file=sys.stderr)


def argparse_type(convert: Convert[T], name: str) -> Callable[[str], T]:
    """A converter of :mod:`..core.converters` as an argparse ``type=``: its message (what
    is allowed) becomes argparse's error line, exit status 2 (argparse shows a bare "invalid
    value" for a plain ValueError). The same converters check the ``--agent-*`` options."""

    def parse(value: str) -> T:
        try:
            return convert(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = name  # argparse names the type in some messages
    return parse


def count(minimum: int) -> Callable[[str], int]:
    """A whole number >= ``minimum``."""
    return argparse_type(converters.count(minimum), "count")


positive = count(1)
#: A wall-clock deadline in seconds (> 0: a deadline of zero fails every call).
seconds = argparse_type(converters.duration, "seconds")
#: A delay in seconds (>= 0).
delay = argparse_type(converters.delay, "delay")
fraction = argparse_type(converters.fraction, "fraction")
number = argparse_type(converters.number(0.0), "number")
#: An API base URL: http(s), a host, no credentials (they would leak into output and never
#: work).
api_base = argparse_type(converters.api_base, "api_base")
model = argparse_type(converters.model, "model")


@dataclass(frozen=True)
class CallArgument:
    """A command's argument that goes into the model calls' settings."""

    flag: str
    type: Callable[[str], Any]
    metavar: str
    help: str


#: The model-call arguments the commands share, by :func:`~..llm.call_options.call_settings`
#: parameter; each command takes the ones it needs, with its own defaults.
CALL_ARGUMENTS = {
    "api_base": CallArgument("--api-base", api_base, "URL",
                             "API base URL for every LLM role (e.g. a local vLLM server)"),
    "timeout": CallArgument("--timeout", seconds, "S", "seconds before one call times out"),
    "retries": CallArgument("--retries", count(0), "N",
                            "retries of a failed call: timeouts, 429, 5xx"),
    "backoff": CallArgument("--backoff", delay, "S",
                            "first retry delay in seconds, doubling with jitter"),
    "temperature": CallArgument("--temperature", number, "T", "sampling temperature"),
    "max_tokens": CallArgument("--max-tokens", positive, "N", "max tokens of a reply"),
}


def add_call_arguments(parser: argparse.ArgumentParser, **defaults: Any) -> None:
    """Add the :data:`CALL_ARGUMENTS` named by ``defaults`` (name -> default)."""
    for name, default in defaults.items():
        arg = CALL_ARGUMENTS[name]
        shown = "" if default is None else f" (default: {default})"
        parser.add_argument(arg.flag, type=arg.type, default=default, metavar=arg.metavar,
                            dest=name, help=arg.help + shown)


def call_settings_of(args: argparse.Namespace, **fixed: Any) -> CallSettings:
    """The model calls' settings from a command's :data:`CALL_ARGUMENTS` (and ``fixed``
    values), through the builder a pytest run uses."""
    from ..llm.call_options import call_settings

    given = {name: getattr(args, name) for name in CALL_ARGUMENTS if hasattr(args, name)}
    return call_settings(**given, **fixed)
