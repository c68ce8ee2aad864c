"""Names the sources write with a comma inside them (stage 1, for :mod:`.parse`).

A comma after a name usually joins a second condition to it ("T, W"), but some names hold
one as written: "Hand, foot and mouth disease", MeSH's inverted headings
("Diabetes Mellitus, Type 2", "Dermatitis, Contact"). Where an answer opens with such a name,
word for word a concept's preferred name in the terminology, the name is read whole; split,
it was a list of "Hand", "foot" and "mouth disease" (several diagnoses) or the bare head
("Diabetes mellitus", broader than the truth). Only a preferred name as written counts: a
list whose words some name shares in another order ("Fracture, femur", "Anxiety,
depression") stays a list.
"""

from __future__ import annotations

import re

from ..terms.concepts import default_terminology

__all__ = ["whole_name_end"]

# A comma (perhaps before "and") or an "and" between two words of a name; the first must be
# a comma. An "and" alone stays the concurrent join it was: read whole, "Constitutional
# delay of growth and puberty" and "Adjustment disorder with mixed anxiety and depressed
# mood" were judged narrower than the truths the recorded GPT-4 grader accepted them for
# (17 recorded answers, in both folds), and "hand-foot-and-mouth disease" has its hyphens.
_JOINT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.I)
_WORD = re.compile(r"[^\W_]+")
# Words tried after the first joint: "foot and mouth disease" is four
_MOST_WORDS = 6


def whole_name_end(text: str) -> int:
    """Where the longest opening of ``text`` that is a concept's preferred name as written,
    with a comma inside it, ends; 0 when no such name opens ``text``."""
    joint = next((m for m in _JOINT.finditer(text) if m.start() > 0), None)
    if joint is None or "," not in joint.group():
        return 0
    terms = default_terminology()
    # the name may end at any word after its first joint ("Hand, foot and mouth disease or
    # herpangina"), within a name's length
    ends = [m.end() for m in _WORD.finditer(text, joint.end())][:_MOST_WORDS]
    for end in reversed(ends):  # the longest first
        if terms.preferred_as_written(text[:end]):
            return end
    return 0
