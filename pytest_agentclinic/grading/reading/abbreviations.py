"""Short forms in brackets after the name they abbreviate ("acute pericarditis (AP)").

The same name twice must not hide the name from a negation or a hedge ("not X (ABBR)"), so
the reader drops such a short form before it reads negations; a short form of another name
stays, since it names another.
"""

from __future__ import annotations

import re

# "(AP)", "[SSM]": a short form in brackets right after the name it abbreviates.
_SHORT_FORM = re.compile(r"\s*[(\[]\s*([A-Za-z][A-Za-z0-9]{1,9})\s*[)\]]")
_LINKING = frozenset({"with", "and", "of", "the", "a", "an", "in", "to", "due", "or"})


def drop_abbreviations(text: str) -> str:
    """``text`` without the short forms that abbreviate the words just before them ("acute
    pericarditis (AP)"): the same name twice, which must not hide the name from a negation
    or a hedge ("not X (ABBR)"). A short form of another name stays (it names another)."""
    if "(" not in text and "[" not in text:
        return text

    def keep(found: re.Match[str]) -> str:
        words = _words_before(text, found.start())
        short = found.group(1).lower()
        if any(_abbreviates(short, words[i:]) for i in range(len(words))):
            return ""
        return found.group()

    return _SHORT_FORM.sub(keep, text)


# a word; an eponym's possessive is one word ("Non-Hodgkin's lymphoma (NHL)")
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['\u2019]s\b)?")


def _words_before(text: str, end: int, count: int = 10) -> list[str]:
    """The last ``count`` words before ``end``, read from a window that grows until it holds
    more than ``count`` words (its first may be cut; the words after it are read as from the
    text's start): reading the whole text before each short form was quadratic in a long
    reply of them."""
    window = 256
    while True:
        start = max(0, end - window)
        words = _NAME_WORD.findall(text[start:end])
        if start == 0 or len(words) > count:
            return words[-count:]
        window *= 4


def _abbreviates(short: str, words: list[str]) -> bool:
    """Whether ``short`` abbreviates the name ``words``: two content words or more, each
    one's initial in ``short`` in order, and ``short`` spelt from the name's letters."""
    content_words = [w.lower() for w in words if w.lower() not in _LINKING]
    if len(content_words) < 2 or short[0] != content_words[0][0]:
        return False
    letters = iter(short)
    if not all(w[0] in letters for w in content_words):
        return False
    spelled = iter("".join(content_words))
    return all(c in spelled for c in short)
