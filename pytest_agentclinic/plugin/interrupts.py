"""Ctrl-C once the run is over: exit status 2, every finished record kept.

Ctrl-C during the final report once crashed inside pytest's own summary (an internal error,
exit status 1). From the moment the reports are written, Ctrl-C only stops this plugin's
report writing (the records are on disk already) and marks the session interrupted; pytest's
summary is let finish.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

import pytest


def defer_interrupts(session: pytest.Session, writing: Callable[[], bool]) -> Any:
    """Install the deferring SIGINT handler; return the one it replaced (None: not the main
    thread, where no handler can be installed). ``writing`` says whether the plugin's own
    reports are being written, which Ctrl-C does stop."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupted(signum: int, frame: Any) -> None:
        del signum, frame
        session.exitstatus = pytest.ExitCode.INTERRUPTED
        if writing():
            raise KeyboardInterrupt

    return signal.signal(signal.SIGINT, interrupted)


def restore_interrupts(previous: Any) -> None:
    """Put back the SIGINT handler :func:`defer_interrupts` replaced."""
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


def say(config: pytest.Config, line: str) -> None:
    """One line on the terminal, through pytest's reporter when there is one."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        if getattr(reporter._tw, "width_of_current_line", 0):
            reporter._tw.line()  # xdist leaves its progress line open
        reporter.write_line(line)
    else:
        print(line)
