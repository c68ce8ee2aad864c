"""Whose diagnosis a lead of support names (stage 1, for :mod:`.statement`): "consistent
with", "suggestive of", "indicative of" after the findings, or after a disease.

"W with features suggestive of X" keeps W as the answer, X a second name beside it (round
4). Where the findings are the subject of a verb ("Purpura and corkscrew hairs are consistent
with X"), X is what they are said to fit, the diagnosis the answer gives (the paper's grader,
step 1), even when a finding there is also a disease's name; read as "W with features", the
answer was the first finding. A clause of a disease's own reasons ("W, as the plaques are
consistent with it") keeps W.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .prefaces import after_grounds

__all__ = ["SUPPORT", "after_findings", "bracket_open", "features_joined", "findings_stated",
           "in_its_bracket"]

#: Leads that say what the findings support: a name before them is the answer's own.
SUPPORT = re.compile(r"\s*(?:consistent|compatible|in\s+keeping|suggestive|indicative|classic|"
                     r"typical|characteristic|points?|fits)\b", re.I)
# a subject and its verb, the verb last ("Purpura and corkscrew hairs are", "The rash was")
_STATED = re.compile(r"\b(?:is|are|was|were)\s+(?:\w+ly\s+)?$", re.I)
# a clause that is no subject alone: a comma, a bracket, a relative or a reason
_CLAUSE_BREAK = re.compile(r"[,;(]|\b(?:as|because|since|given|while|whereas|which|that|who|if|"
                           r"when|with)\b", re.I)


def findings_stated(before: str) -> bool:
    """Whether ``before`` (the words before a lead of support) is a subject and its verb
    alone ("Purpura and corkscrew hairs are"), after any grounds ("Given the history, ")."""
    before = after_grounds(before)
    return _STATED.search(before) is not None and _CLAUSE_BREAK.search(before) is None


def after_findings(rest: str, leads: Iterator[re.Match[str]]) -> str:
    """``rest`` (the words after a lead) from the name the findings' own clause leads to
    ("I suspect [the rash and fever are consistent with] measles"); else ``rest``."""
    inner = next((m for m in leads if SUPPORT.match(m.group())), None)
    if inner is not None and len(rest) - inner.end() > 2 and findings_stated(
            rest[: inner.start()]):
        return rest[inner.end():]
    return rest


def in_its_bracket(rest: str, before: str) -> str:
    """``rest`` (the words after a lead) up to the close of the bracket the lead stands in
    ("Hepatomegaly (indicative of T), ...": T, not "T), ..."); ``rest`` itself where
    ``before`` (the words before the lead) leaves no bracket open (red team round 18: the
    bracket's close had been read as part of the name)."""
    if not bracket_open(before):
        return rest
    close = rest.find(")")
    return rest if close < 0 else rest[:close]


def bracket_open(before: str) -> bool:
    """Whether ``before`` leaves a round bracket open: the words after it stand inside one
    ("W (suggestive of T)")."""
    return before.count("(") > before.count(")")


# The words that join a disease or a state to the features it shows other than "with": a
# dash or a semicolon ("Whiplash - features suggestive of T"), or "presenting with" (red team
# round 19). Read as they stood, the dash set off a reason (context.py) and "presenting" a
# clause, and the second name was lost, so that no rule could say the answer gave two.
_FEATURES_JOINT = re.compile(r"(?: -{1,3} ?|; ?| (?:presenting|presents) with )(?=(?:[a-z]+ )?"
                             r"(?:features?|findings?|signs?|characteristics?) (?:suggestive|"
                             r"consistent|compatible|in keeping|indicative))", re.I)


def features_joined(head: str) -> str:
    """``head`` with the first joint of :data:`_FEATURES_JOINT` read as " with "."""
    return _FEATURES_JOINT.sub(" with ", head, count=1)
