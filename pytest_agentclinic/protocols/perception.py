"""Patient perception: three 1-10 ratings asked after the diagnosis, parsed without guessing."""

from __future__ import annotations

import re

from ..agents import prompts
from ..core.transcript import Perception

LABELS = {"confidence": "confiden", "compliance": "complian", "consultation": "consult"}


def question(diagnosis: str) -> str:
    """The request the patient answers after the diagnosis."""
    return prompts.load("perception").render(diagnosis=diagnosis)


def parse(text: str) -> Perception:
    """Read each labelled rating; a missing label or a value outside 1-10 is None.

    Only a number that follows its own label on the same line, within a few words, counts
    ("Confidence: 7", "compliance - 8/10", "my confidence is 6"): bare numbers are never
    assigned to a rating by position.
    """
    values: dict[str, int | None] = {}
    for field, stem in LABELS.items():
        match = re.search(stem + r"\w*[^\d\n]{0,25}?(-?\d+(?:\.\d+)?)", text, re.I)
        if match is None:
            values[field] = None
            continue
        number = float(match.group(1))
        values[field] = int(number) if number.is_integer() and 1 <= number <= 10 else None
    return Perception(**values)
