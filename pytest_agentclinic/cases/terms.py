"""Matching a diagnosis and its synonyms inside text, as leaks are looked for.

Leak matching: both texts are lightly normalised (accents stripped, British spellings folded,
possessive 's dropped, punctuation splits words); a term matches as a whole-word sequence, its
last word also in the plural; parenthetical forms are terms too (``... (NXG)`` gives ``NXG``).
Abbreviations: a one-word term with two or more capitals (``AS``, ``MG``, ``BP``, ``COPD``,
``IgA``) or of at most three letters. Many are also ordinary words or units ("as", "mg",
"aids"), so an abbreviation matches only where the text writes it as the case does or in
capitals: ``MG`` matches "known MG", never "5 mg"; ``AS`` never matches "as".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.case import Case
from ..core.text import fold, variants

_TOKEN = re.compile(r"[A-Za-z0-9]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b")


def _plain(text: str) -> str:
    text = _POSSESSIVE.sub("", re.sub(r"[\u2010-\u2015\u2212]", "-", text))
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


@dataclass(frozen=True)
class Term:
    """A diagnosis name prepared for whole-word matching (see the module docstring)."""

    name: str
    words: tuple[str, ...]
    abbreviation: bool


def make_term(name: str) -> Term | None:
    """A :class:`Term` for ``name``, or None when it has no word at all."""
    tokens = _TOKEN.findall(_plain(name))
    if not tokens:
        return None
    one = tokens[0]
    if len(tokens) == 1 and (sum(c.isupper() for c in one) >= 2
                             or sum(c.isalpha() for c in one) <= 3):
        return Term(name, (one,), True)
    return Term(name, tuple(_TOKEN.findall(fold(_plain(name)))), False)


def accepted_terms(case: Case) -> list[Term]:
    """Terms for the diagnosis, its synonyms and their parenthetical forms."""
    names = dict.fromkeys(v for n in case.accepted_diagnoses for v in variants(n))
    return [t for t in map(make_term, names) if t is not None]


def _has_sequence(words: tuple[str, ...], seq: tuple[str, ...]) -> bool:
    n, last = len(seq), seq[-1]
    return any(words[i:i + n - 1] == seq[:-1] and words[i + n - 1] in (last, last + "s",
                                                                         last + "es")
               for i in range(len(words) - n + 1))


def find_leak(terms: Iterable[Term], text: str) -> Term | None:
    """The first term that ``text`` contains, or None."""
    plain = _plain(text)
    raw = _TOKEN.findall(plain)
    folded = tuple(_TOKEN.findall(fold(plain)))
    for term in terms:
        if term.abbreviation:
            forms = {term.words[0], term.words[0].upper()}
            if any(t in forms or (t[-1:] == "s" and t[:-1] in forms) for t in raw):
                return term
        elif _has_sequence(folded, term.words):
            return term
    return None


def same_name(a: str, b: str) -> bool:
    return _TOKEN.findall(fold(_plain(a))) == _TOKEN.findall(fold(_plain(b)))
