"""Where a diagnostic statement stops naming the condition and starts explaining it (stage 1,
for :mod:`.statement` and :mod:`.parse`): a relative clause or a verb ("X, which requires
...", "X is ..."), the reasons after a colon or a dash ("X: the history is classic", "X -
classic presentation"), a note of confidence ("X (confidence: high)") and a plan to confirm
it ("X, but I would confirm it with a biopsy").
"""

from __future__ import annotations

import re

__all__ = ["CONFIDENCE", "cut_context"]

# Where a statement stops naming the condition and starts explaining it.
_CONTEXT = re.compile(
    r"\s+(?:which|that|who|whose|requires?|requiring|warrants?|should|would|will|may|might|"
    r"can|could|is|are|was|were|has|have|seems?|appears?|given|based\s+on|considering|"
    r"as\s+evidenced|"
    r"evidenced|indicated|characterized|presenting|presents|manifesting|because|since|"
    r"confirmed|proven|established|"
    r"if|when|pending|to\s+be|needs?|needing|"
    # "W fits better", "W explains the rash": a verb that says why (not "febrile fits", a
    # lay name of febrile seizures)
    r"fits?\s+(?:better|best|well|more|(?:the|this|her|his|all)\b)|explains?|accounts?\s+for|"
    r"in\s+(?:a|this|the|her|his)\s+"
    r"(?:patient|child|woman|man|infant|boy|girl)|in\s+light\s+of|supported\s+by)\b", re.I)

#: How sure the writer is, and nothing else ("confidence: high", "high certainty",
#: "probability 0.8", "confidence 85%"): a note on the answer that names nothing, in brackets
#: or after a colon or a dash (not "low probability of lymphoma", which names a disease).
CONFIDENCE = (r"(?:(?:very\s+)?(?:high|moderate|medium|low|intermediate)\s+)?"
              r"(?:confidence|certainty|probability|likelihood)"
              r"(?:\s*(?:[:=]|is|of)?\s*[<>~\u2248\u2264\u2265]?\s*(?:(?:very\s+)?(?:high|moderate|medium|low|intermediate)"
              r"|\d+(?:\.\d+)?\s*%?|0?\.\d+))?[\s.]*$")

# A reason after the name, set off by a colon or a dash ("X: the history and examination are
# classic", "X - classic presentation"): what follows explains, it names nothing more. A
# table's bar sets off a field of the same row ("X | confidence: high"; red team round 19).
_REASON = re.compile(
    r"\s*(?::|\s[-\u2013\u2014]+|\s\|)\s*(?=(?:a\s+|an\s+|the\s+|this\s+|these\s+|her\s+|his\s+)?"
    rf"(?:{CONFIDENCE}|(?:"
    r"(?:classic(?:al)?|typical|textbook|characteristic|pathognomonic|consistent|compatible|"
    r"confirmed|supported|evidenced|suggested|indicated|given|based|history|presentation|"
    r"findings?|features?|picture|patient|clinical|exam(?:ination)?|symptoms?|signs?|"
    r"combination|constellation|triad|biopsy|imaging|labs?|because|since|as|explains?|"
    # a pointer to the reasons ("T - see below"), as "(see below)" is an aside (round 10)
    r"see|"
    # a step of the plan after the name ("T - start treatment"; red team round 5)
    r"start|begin|initiate|treat|refer|recommend|monitor|follow|continue|admit)\b)))",
    re.I)


# A plan for confirming the answer ("X, but I would confirm it with a biopsy"): it names
# no second diagnosis (a doubt that does, "but I cannot exclude Y", is read before this).
_PLAN = re.compile(r",?\s+but\s+(?:i|we)(?:\s+(?:would|will|should)|'d)?\s+"
                   r"(?:(?:like|want)\s+to\s+)?(?:confirm|verify|recommend|suggest|order|obtain|"
                   r"start|refer|send|perform)\b", re.I)


def cut_context(text: str) -> str:
    """``text`` up to where it stops naming the condition and starts explaining it."""
    plan = _PLAN.search(text)
    text = text[: plan.start()] if plan is not None and plan.start() > 0 else text
    found = _CONTEXT.search(text)
    text = text[: found.start()] if found is not None and found.start() > 0 else text
    reason = _REASON.search(text)
    return text[: reason.start()] if reason is not None and reason.start() > 0 else text
