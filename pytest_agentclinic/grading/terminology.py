"""Clinical terminology for the grader: disease names as comparison keys.

A name's *key* is the set of its identifying words, read by the one text normaliser
(:mod:`..core.text`, the same tokenizer the agents use, with ambiguous abbreviations kept as
written): accents and British spellings folded, possessives and plurals dropped,
abbreviations expanded, Roman numerals made Arabic, filler, hedges and generic head words left
out. The bundled table of disease concepts (:mod:`.concepts`) stores each name's key, with
:func:`normaliser_fingerprint` to tell when they went stale. This module adds what only the
grader and the table build need: ICD-10-CM name forms and the endings of condition names.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Iterator

from ..core import text
from ..core.text import FILLER, GENERIC, HEDGES, Key, compact, content, key, tokens

__all__ = ["CONDITION_SUFFIXES", "FILLER", "GENERIC", "HEDGES", "Key", "compact", "content",
           "icd_name_forms", "key", "normaliser_fingerprint", "tokens"]

_BRACKET = re.compile(r"\[([^\]]*)\]")
_PAREN = re.compile(r"\(([^)]*)\)")
_RANGE = re.compile(r"\([A-Z]\d\d(\.\d+)?-[A-Z]\d\d(\.\d+)?\)\s*$")


def icd_name_forms(name: str) -> Iterator[str]:
    """The names an ICD-10-CM description stands for.

    Square brackets hold alternative names ("Osteitis deformans [Paget's disease of bone]");
    parentheses hold non-essential words, so the name is given with and without them.
    Residual categories ("Other ...") name no single condition and give nothing.
    """
    name = _RANGE.sub("", name).strip()
    if name.lower().startswith(("other ", "unspecified ")):
        return
    for alt in _BRACKET.findall(name):
        if alt.strip():
            yield alt
    bare = _BRACKET.sub(" ", name)
    yield _PAREN.sub(" ", bare)
    yield _PAREN.sub(r" \1 ", bare)


#: Word endings of conditions ("-itis", "-oma", ...), and head nouns that always name one.
CONDITION_SUFFIXES = ("itis", "osis", "oma", "emia", "aemia", "pathy", "plasia", "trophy",
                       "algia", "ism", "iasis", "ectasis", "ectasia", "cele", "uria", "rrhea",
                       "rrhoea", "penia", "cytosis", "megaly", "plegia", "paresis", "phobia",
                       "mania", "philia", "oses", "ulcer", "fracture", "syndrome", "disease",
                       "disorder", "deficiency", "infection", "cancer", "tumor", "carcinoma")


def normaliser_fingerprint() -> str:
    """A digest of everything the table's keys depend on: the text normaliser
    (:func:`..core.text.normaliser_fingerprint`) and the ICD-10-CM name forms. Keys in the
    table are valid while the fingerprint they were built with matches."""
    parts = [text.normaliser_fingerprint(), inspect.getsource(icd_name_forms)]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]
