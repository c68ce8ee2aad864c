"""The forms of an answer's statement without what ends it beside the main diagnosis.

"DRESS with cervical lymphadenopathy" is graded as "DRESS", "fever due to DRESS" as "DRESS"
(CRAFT-MD's grader, step 1: a main diagnosis with a concurrent minor one is the main one;
docs/grading.md, *Main and concurrent*): each form takes one more finding, complication,
secondary condition or cause off the statement's end, for the relation of the whole name.
"""

from __future__ import annotations

import re

from ..terms.concurrent import complication, finding, stated_secondary
from ..terms.kinds import kind
from .joins import CAUSE
from .parse import Extraction

__all__ = ["without_findings"]


def without_findings(extraction: Extraction) -> list[str]:
    """The statement's body with the findings, complications, secondary conditions and causes
    that end it taken off one by one ("DRESS with cervical lymphadenopathy" gives "DRESS"),
    from its main diagnosis on ("fever due to DRESS" gives "DRESS")."""
    body, out = extraction.body, []
    setting = _SETTING.search(body)
    if setting is not None and kind(setting["what"]) != "condition":
        # "T after a fall", "T after surgery": an event or a treatment names no condition
        # (:func:`.kinds.kind`), so it is no mention, yet it ends the statement
        body = body[:setting.start()]
        out.append(body)
    start = body.lower().find(extraction.diagnosis.lower())
    if start > 0:  # a finding explained by its cause: the cause is the main diagnosis
        body = body[start:]
        out.append(body)
    for mention in reversed(extraction.mentions):
        if mention.role == "main" or not (
                finding(mention.text) or stated_secondary(mention.text)
                or complication(mention.text)
                or mention.role in ("complication", "cause", "comorbid")):
            break
        at = body.lower().rfind(mention.text.lower())
        if at < 0 and mention.role == "after":
            # named in a sentence after the statement ("T; leukocytosis", a sub-item folded
            # under T): the statement is the name without it (red team round 9)
            out.append(body)
            continue
        if at <= 0:
            break
        body = _JOINER.sub("", body[:at])
        out.append(body)
    return out


# A cause join and what follows it to the statement's end ("after a fall").
_SETTING = re.compile(rf"(?:{CAUSE.pattern})\s*(?P<what>[^,;()]+?)\s*$", re.I)
# The join before a finding, a complication or a cause that ends the statement: "with",
# "and", "complicated by", or any join :data:`.joins.CAUSE` reads as a cause ("after", "in
# the setting of", "following"), so that a name with "with" in it is found whole before
# each of them alike (red team round 5).
# ("now complicated by", "further complicated by" too: red team round 10)
_JOINER = re.compile(r"(?:\s*[,;]\s*|\s+)(?:(?:with|and|plus|"
                     r"(?:now\s+|further\s+)?complicated\s+by|secondary|known|"
                     r"pre-?existing|co-?existing|coexistent|comorbid|concomitant|underlying|"
                     # "T with associated X": the same join ("associated" is a word of it)
                     r"associated|accompanying|incidental)\s+"
                     rf"|(?:{CAUSE.pattern})\s*)*(?:an?\s+|the\s+)?$", re.I)
