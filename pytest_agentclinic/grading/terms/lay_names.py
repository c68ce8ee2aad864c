"""Lay names of diseases, a glossary written for this project (``grading/data/lay_names.tsv``).

The terminology's sources give some lay names ("shingles", "hives") and lack many ("piles",
"glue ear", "the clap"); no openly licensed list of lay names exists to build from. The
glossary's rules are at the top of its file and in docs/terminology.md ("Lay names").

Each row is read one of two ways, decided by the terminology itself:

* a lay name no source gives (its key is unknown) denotes the concepts of its clinical name:
  :meth:`.concepts.Terminology.concepts` answers for it as for a synonym (tier 1), so the
  lay name is a kind, a parent or a sibling of what the clinical name is, in an answer with a
  hedge or a differential too;
* a lay name a source gives to a concept of its own (MeSH's "Bunion") keeps that concept; the
  row states only that the two names, compared with each other, name one disease
  (:func:`stated_pair`), as the paper's examples are stated (:mod:`.stated_synonyms`);
* a lay name the sources already give the disease changes nothing: their verdict stands, sure
  or not (a synonym of unknown scope stays unsure).

Read on first use (a few hundred names keyed once per process, ~6 ms of CPU), not at import.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from ...core.datafiles import read_pairs
from ..terminology import GENERIC, Key, key, tokens
from ..terminology_memory import joined

__all__ = ["LAY_NAMES_FILE", "glossary", "lay_clinical", "lay_name", "lay_single_word",
           "stated_pair"]

#: The glossary: lay name -> the clinical name as a source of the terminology writes it.
LAY_NAMES_FILE = Path(__file__).parents[1] / "data" / "lay_names.tsv"


@lru_cache(maxsize=1)
def glossary() -> dict[str, str]:
    """The glossary's rows, lay name -> clinical name, in the file's order."""
    return read_pairs(LAY_NAMES_FILE)


@lru_cache(maxsize=1)
def _by_key() -> dict[str, str]:
    # Keyed as the table stores keys (sorted words, space-joined): the form a lookup has.
    return {joined(key(lay)): clinical for lay, clinical in glossary().items()}


@lru_cache(maxsize=1)
def _single() -> frozenset[str]:
    # One word but for an article ("the clap"); not a word left when a generic head is
    # dropped ("Viking disease": "Viking" alone names nothing).
    return frozenset(joined(k) for lay in glossary() for k in [key(lay)]
                     if len(k) == 1 and not GENERIC & set(tokens(lay)))


def lay_clinical(stored_key: str) -> str | None:
    """The clinical name of the lay name with this stored key (:func:`.joined`), or None."""
    return _by_key().get(stored_key)


def lay_single_word(word: str) -> bool:
    """Whether the glossary names a disease with this one (normalised) word alone ("piles")."""
    return word in _single()


def stated_pair(given: Key, truth: Key, named_apart: Callable[[Key, Key], bool]) -> str | None:
    """Why the glossary states ``given`` and ``truth`` are one disease, or None.

    Only for a lay name the sources give a concept of its own (``named_apart``: given, but not
    as a synonym of the clinical name). One no source gives reads as its clinical name's
    concepts already; one the sources give the disease keeps their verdict, sure or not.
    """
    if given == truth:
        return None
    for lay_key, other in ((given, truth), (truth, given)):
        clinical = _by_key().get(joined(lay_key))
        if clinical is not None and key(clinical) == other and named_apart(lay_key, other):
            return f"{lay_name(lay_key)!r} is the lay name of {clinical!r} (the project's glossary)"
    return None


def lay_name(lay_key: Key) -> str:
    """The glossary's lay name with this key, as written (the key itself when none)."""
    return next((lay for lay in glossary() if key(lay) == lay_key), " ".join(sorted(lay_key)))
