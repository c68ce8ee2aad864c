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
            "merge", "merge_cache", "patient_check", "review", "export", "view")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand."""
    from . import __version__

    parser = argparse.ArgumentParser(prog="agentclinic",
                                     description="pytest-agentclinic command-line tools")
    parser.add_argument("--version", action="version", version=f"agentclinic {__version__}")
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


#: What damaged or unexpected input raises somewhere below a command (a truncated gzip
#: stream, a non-UTF-8 byte, a summary.json that is a list, a YAML alias loop...).
_BAD_INPUT = (OSError, ValueError, EOFError, LookupError, TypeError, AttributeError,
              RecursionError)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentclinic`` script.

    Bad input never shows a traceback: one line on stderr naming what could not be read,
    exit status 2.
    """
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        # `agentclinic validate x | head`: the reader left; nothing more to say.
        sys.stderr.close()
        return 1
    except _BAD_INPUT as exc:
        from .core.redact import redact

        text = " ".join(str(exc).split()) or type(exc).__name__
        print(redact(f"agentclinic {args.command}: error: {type(exc).__name__}: {text}"),
              file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
