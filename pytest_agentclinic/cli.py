"""The ``agentclinic`` command: one subcommand per module under :mod:`.commands`.

Each command module defines ``add_parser(subparsers)`` which registers its parser and sets
``run`` (a function of the parsed arguments returning the exit status). Heavy imports stay
inside ``run`` so ``agentclinic --help`` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMANDS = ("grade", "validate", "convert", "report", "compare", "import_craftmd", "play", "meld",
            "merge", "merge_cache", "patient_check", "review")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="agentclinic",
                                     description="pytest-agentclinic command-line tools")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"{__package__}.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.commands.{name}":
                raise
            continue  # a command still being built is simply not offered
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentclinic`` script."""
    args = build_parser().parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
