"""Shared by the commands: argparse value types (numbers with a lower bound) and a capped
list of problems on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

#: Problems printed before "... and N more".
SHOW_PROBLEMS = 5


def print_problems(messages: Sequence[str], prefix: str = "", more: str = "more") -> None:
    """The first :data:`SHOW_PROBLEMS` messages on stderr, then how many were left out."""
    for message in messages[:SHOW_PROBLEMS]:
        print(f"{prefix}{message}", file=sys.stderr)
    if len(messages) > SHOW_PROBLEMS:
        print(f"... and {len(messages) - SHOW_PROBLEMS} {more}", file=sys.stderr)


def count(minimum: int) -> Callable[[str], int]:
    """A whole number >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
        return value

    return parse


def seconds(text: str) -> float:
    """A duration in seconds, >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


positive = count(1)


def api_base(text: str) -> str:
    """An API base URL without credentials (they would leak into output and never work)."""
    from ..core.redact import has_userinfo, redact

    if has_userinfo(text):
        raise argparse.ArgumentTypeError(
            f"credentials in the URL ({redact(text)}) are not supported; give the key "
            "through the provider's variable (e.g. OPENAI_API_KEY)")
    return text
