"""The message of an item whose diagnosis is wrong or missing.

Short by default (``pytest cases`` fails 54 of 72 items with the offline baseline, and
seven-line blocks with the list of every test requested made ~380 lines): what was
answered (also on pytest's short summary line), the case's diagnosis, why the grader said
no, and the transcript's path: four lines under pytest's header. With ``-v`` the whole
dialogue follows.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.text import terminal_safe
from ..core.transcript import Transcript
from ..protocols.base import Wording

#: Longest "why" shown; the transcript has the grader's whole reason.
WHY_CHARS = 200


def miss_message(t: Transcript, expected: str, transcript_path: str | None, *,
                 start_dir: Path, verbose: bool, words: Wording | None = None) -> str:
    """``misdiagnosis: GIVEN`` or ``no diagnosis`` (in the protocol's words), then expected,
    why and the transcript."""
    words = words or Wording()
    missing = t.outcome != "incorrect"
    if missing:
        reason = "no final answer given"
    elif t.verdict is not None:
        reason = f"{t.verdict.decided_by}: {t.verdict.reason}"
    else:
        reason = "judged wrong"
    if len(reason) > WHY_CHARS:
        reason = reason[:WHY_CHARS - 3] + "..."
    tests = len(t.tests_requested)
    # Case and agent text within one line each: an ESC, a CR or a forged "expected:" line
    # reaches no terminal (the record keeps the text as it was).
    one = _one_line
    lines = [
        words.missing if missing else f"{words.wrong}: {one(t.diagnosis or '')}",
        f"  expected:   {one(expected)}",
        f"  why:        {one(reason)} ({t.turns_used}/{t.turn_budget} turns, "
        f"{tests} test{'s' if tests != 1 else ''})",
        f"  transcript: {one(_short(transcript_path, start_dir))}"
        + ("" if verbose else " (-v: the dialogue)"),
    ]
    if verbose:
        lines.append("  dialogue:")
        lines += [f"    {one(u.role)}: {one(' '.join(u.text.split()))}" for u in t.utterances]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return terminal_safe(text, newlines=False)


def _short(path: str | None, start_dir: Path) -> str:
    """``path`` relative to where pytest started, when it lies below it."""
    if not path:
        return "(not written)"
    try:
        relative = os.path.relpath(path, start_dir)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative
