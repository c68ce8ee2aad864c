"""What holds the encounters' event loop, read from its thread's stack (for the watchdog).

The watchdog once said "a custom agent calling blocking code?" whatever held the loop: a
50 MB reply ground through by the harness's own grader was blamed on the agent. The loop
thread's innermost frame outside asyncio's machinery names the code that actually runs.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from types import FrameType

#: Where the harness's own code lives.
_PACKAGE = str(Path(__file__).resolve().parents[1]) + os.sep
#: asyncio's own frames (the loop, its selectors, tasks) name nothing useful.
_MACHINERY = (f"{os.sep}asyncio{os.sep}", f"{os.sep}selectors.py", f"{os.sep}threading.py",
              f"{os.sep}concurrent{os.sep}")


def blocked_in(thread: threading.Thread | None) -> str:
    """Where ``thread`` runs now, and whose code that is, in a few words."""
    frames = sys._current_frames()  # the documented way to read another thread's stack
    frame = frames.get(thread.ident) if thread is not None and thread.ident else None
    if frame is None:
        return "in code that could not be seen"
    spot = _innermost(frame)
    path = Path(spot.f_code.co_filename)
    where = f"{spot.f_code.co_name} ({_shown(path)}:{spot.f_lineno})"
    if str(path).startswith(_PACKAGE):
        return f"in the harness's own {where}"
    return f"in {where}: a custom agent or plugin calling blocking code?"


def _innermost(frame: FrameType) -> FrameType:
    chain: list[FrameType] = []
    current: FrameType | None = frame
    while current is not None:
        chain.append(current)
        current = current.f_back
    for candidate in chain:  # innermost first
        if not any(part in candidate.f_code.co_filename for part in _MACHINERY):
            return candidate
    return frame


def _shown(path: Path) -> str:
    """The path relative to the package's parent or the working directory when it is in
    one of them (a record must not carry the machine's layout), else its name."""
    for root in (Path(_PACKAGE).parent, Path.cwd()):
        try:
            return str(path.resolve().relative_to(root))
        except ValueError:
            continue
    return path.name
