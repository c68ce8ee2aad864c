"""``agentclinic merge-cache CACHE... --out DIR``: join the response caches of shards."""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the ``merge-cache`` subcommand."""
    parser = sub.add_parser(
        "merge-cache", help="copy the response caches of several machines into one",
        description="Copy every entry of each CACHE directory (--agent-cache-dir of a shard) "
                    "into OUT, so a rerun or a replay of the merged run finds every reply. "
                    "An entry already in OUT is kept; a different reply under the same key "
                    "is counted as a conflict (OUT's is kept) and makes the exit status 1.")
    parser.add_argument("caches", nargs="+", type=Path, metavar="CACHE")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Merge the caches; print what was copied."""
    from ..llm.cache import merge_caches
    from ..llm.cache_store import CacheFormatError

    missing = [c for c in args.caches if not (c / "cache.db").is_file()]
    if missing:
        print(f"agentclinic merge-cache: {missing[0]}: not a response cache (no cache.db)",
              file=sys.stderr)
        return 2
    try:
        counts = merge_caches(args.caches, args.out)
    except CacheFormatError as exc:
        # A damaged, pickled or old-format shard: refused before anything is written.
        print(f"agentclinic merge-cache: {exc}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:
        # A damaged cache.db (a copy cut short, another file under its name): one line, as
        # for a directory that holds none; the output keeps what was merged before it.
        print(f"agentclinic merge-cache: {_damaged(args)}: not a readable response cache "
              f"({exc})", file=sys.stderr)
        return 2
    print(f"merged {len(args.caches)} caches into {args.out}: {counts.copied} copied, "
          f"{counts.present} already there, {counts.conflicts} conflicting (kept {args.out}'s)")
    return 1 if counts.conflicts else 0


def _damaged(args: argparse.Namespace) -> Path:
    """The first of the caches (or the output) whose database sqlite cannot read."""
    for directory in [*args.caches, args.out]:
        path = directory / "cache.db"
        if not path.is_file():
            continue
        try:
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                db.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError:
            return Path(directory)
    return Path(args.out)
