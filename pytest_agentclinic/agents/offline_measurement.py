"""The offline measurement agent: looks the requested test up in the case's findings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..core.case import Case
from ..core.roles import Reply, TurnView
from ..core.text import STOPWORDS, words

VERSION = "offline-measurement-1"
NORMAL = "RESULTS: NORMAL READINGS"
_REQUEST = re.compile(r"request\s+tests?\s*[:\-]?\s*(.+)", re.I | re.S)
# Words that say "a test" without saying which; they never decide a match on their own.
_GENERIC = frozenset({"test", "result", "level", "exam", "examination", "finding", "study",
                      "panel", "please", "order", "check", "count", "value", "imaging",
                      "serum", "blood", "urine", "scan", "report"})


def requested_test(text: str) -> str:
    """The test name after ``REQUEST TEST:`` (the whole text when the marker is absent)."""
    match = _REQUEST.search(text)
    name = match.group(1) if match else text
    return name.strip().splitlines()[0].strip(" .*\"'") if name.strip() else ""


def _nodes(tree: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _nodes(value, (*path, str(key)))


def render(name: str, value: Any) -> str:
    """Format a finding group as ``Name: value`` lines, nested groups indented."""
    label = name.replace("_", " ")
    if isinstance(value, dict):
        inner = "\n".join("  " + line for k, v in value.items()
                          for line in render(k, v).splitlines())
        return f"{label}:\n{inner}"
    if isinstance(value, list):
        return f"{label}: " + "; ".join(str(v) for v in value)
    return f"{label}: {value}"


def _name_words(text: str) -> frozenset[str]:
    return frozenset(w for w in words(text.replace("_", " ")) if w not in STOPWORDS)


def _names_match(wanted: frozenset[str], own: frozenset[str]) -> bool:
    if wanted == own:
        return True
    w, o = wanted - _GENERIC, own - _GENERIC
    return bool(w and o) and (o <= w or w <= o or len(w & o) >= 2)


def find(case: Case, request: str) -> tuple[str, Any] | None:
    """The best-matching finding group for ``request``, or None.

    A group matches when the specific (non-generic) words of one name are all in the other,
    or when the two share at least two specific words, or when the names are equal; the score
    is the Jaccard overlap of their words, the group's parent names counting as context.
    """
    wanted = _name_words(request)
    trees = {"Physical Examination": case.physical_exam, "Test Results": case.tests}
    best: tuple[float, int, str, Any] | None = None
    for order, (path, value) in enumerate(_nodes(trees, ())):
        if not path:
            continue
        own = _name_words(path[-1])
        if not _names_match(wanted, own):
            continue
        shared = wanted & own
        context = own | frozenset().union(*(_name_words(p) for p in path[:-1]))
        score = len(shared) / len(wanted | own) + 0.1 * len(wanted & context - own)
        if best is None or score > best[0]:
            best = (score, order, path[-1], value)
    return (best[2], best[3]) if best else None


class OfflineMeasurement:
    """Returns every value of the matched finding group, or normal readings."""

    model = "offline"
    prompt_version = VERSION

    async def respond(self, view: TurnView) -> Reply:
        """Answer the doctor's ``REQUEST TEST`` in ``view.incoming``."""
        found = find(view.case, requested_test(view.incoming))
        if found is None:
            return Reply(NORMAL)
        return Reply("RESULTS: " + render(*found))
