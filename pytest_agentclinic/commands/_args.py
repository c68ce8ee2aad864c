"""argparse value types shared by the commands: numbers with a lower bound."""

from __future__ import annotations

import argparse
from collections.abc import Callable


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
