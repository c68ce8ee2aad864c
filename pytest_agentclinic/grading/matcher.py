"""Deterministic diagnosis matching: the offline moderator's judgement."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.text import key_words, variants, words

_READY = re.compile(r"diagnosis\s+ready\s*[:\-]?\s*", re.I)


def extract_ready_diagnosis(text: str) -> str | None:
    """The diagnosis after ``DIAGNOSIS READY:``, or None when the marker is absent."""
    match = _READY.search(text)
    if match is None:
        return None
    rest = text[match.end() :].strip().strip("*").strip()
    first_line = rest.splitlines()[0] if rest else ""
    return first_line.strip(" .*\"'") or None


@dataclass(frozen=True)
class Match:
    """A matcher decision; ``correct`` is None when the matcher cannot decide."""

    correct: bool | None
    reason: str
    #: How much of the best accepted name the answer covers (0..1), for fallbacks.
    coverage: float


def match_diagnosis(given: str, accepted: list[str]) -> Match:
    """Judge ``given`` against the accepted names.

    Correct when every key word of an accepted name (or of one of its parenthetical forms)
    occurs in the answer, or when the answer names a broader form of the truth (its key words
    are all in the truth). Wrong when they share no key word; undecided otherwise.
    """
    given_words = set(words(given))
    best = 0.0
    for name in accepted:
        for form in variants(name):
            key = key_words(form)
            if not key:
                continue
            if key <= given_words:
                return Match(True, f"answer contains every key word of {form!r}", 1.0)
            best = max(best, len(key & given_words) / len(key))
    given_key = key_words(given)
    for name in accepted:
        truth_words = set(words(name))
        if given_key and len(given_key) <= 3 and given_key <= truth_words:
            return Match(True, f"answer is a broader form of {name!r}", best)
    if best == 0.0:
        return Match(False, "answer shares no key word with any accepted name", 0.0)
    return Match(None, f"answer covers {best:.0%} of the closest accepted name", best)
