"""A plan after the answer: a sentence of what to do next, which names no diagnosis unless it
keeps one open (docs/grading.md, step 1; "A plan that rules a disease out")."""

from __future__ import annotations

import re

__all__ = ["PLAN_KEEPS_OPEN", "PLAN_SENTENCE", "plan_names_nothing"]

#: A sentence of what to do next ("Recommend biopsy to rule out W.", "I recommend seeing a
#: specialist."): a plan, naming no diagnosis (GPT-4's grader reads "T; ... to rule out W" as
#: T) unless it weighs one (:data:`PLAN_KEEPS_OPEN`: "... for W or V", "W is possible").
PLAN_SENTENCE = re.compile(r"^\s*(?:please\s+|(?:i|we)\s+(?:would\s+|will\s+|'d\s+|strongly\s+|"
                           r"also\s+)*)?(?:recommend|suggest|advise|order|obtain|arrange|schedule|"
                           r"refer|start|begin|initiate|perform|send|check|confirm|verify|see|"
                           r"consult|seek|visit|follow[\s-]?up|monitor|review|repeat|continue|"
                           r"admit|discharge)\b", re.I)
PLAN_KEEPS_OPEN = re.compile(r"\b(?:or|possib\w*|consider\w*|differential|vs\.?|versus)\b",
                             re.I)


def plan_names_nothing(text: str) -> bool:
    """Whether ``text`` is a plan (:data:`PLAN_SENTENCE`) that keeps no disease open."""
    return PLAN_SENTENCE.match(text) is not None and PLAN_KEEPS_OPEN.search(text) is None
