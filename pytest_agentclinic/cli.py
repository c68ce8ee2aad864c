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

from .core.errors import AgentClinicError

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
        importlib.import_module(f"{__package__}.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentclinic`` script.

    Bad input never shows a traceback: one line on stderr naming what could not be read
    (file, line and field), exit status 2.
    """
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        # `agentclinic validate x | head`: the reader left; nothing more to say.
        sys.stderr.close()
        return 1
    except (AgentClinicError, OSError) as exc:
        # The project's own errors (damaged or invalid input is an InputError naming file,
        # line and field), and a file that cannot be opened or written.
        from .core.redact import redact

        text = " ".join(str(exc).split()) or type(exc).__name__
        print(redact(f"agentclinic {args.command}: error: {type(exc).__name__}: {text}"),
              file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
