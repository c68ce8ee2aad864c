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
from pathlib import Path

from ..core import text
from ..core.datafiles import read_pairs
from ..core.text import FILLER, GENERIC, HEDGES, Key, bounded_cache

__all__ = ["ABBREVIATIONS_FILE", "CONDITION_SUFFIXES", "FILLER", "FORMS_FILE", "GENERIC",
           "HEDGES", "Key", "base_key", "compact", "content", "icd_name_forms", "key",
           "normaliser_fingerprint", "read_forms", "set_word_forms", "tokens", "word_forms"]

_BRACKET = re.compile(r"\[([^\]]*)\]")
_PAREN = re.compile(r"\(([^)]*)\)")
_RANGE = re.compile(r"\([A-Z]\d\d(\.\d+)?-[A-Z]\d\d(\.\d+)?\)\s*$")
# An acronym in brackets ("[HIV]", "[BMI]") abbreviates the words before it, often only some
# of them: no name of the code. Nor is a bracket saying what a site covers ("[any part,
# except ear drum]").
_BRACKET_ACRONYM = re.compile(r"^[A-Za-z]*[A-Z][A-Za-z0-9.]*[A-Z0-9][A-Za-z0-9.]*$")
_BRACKET_SCOPE = re.compile(r"^\s*any\b|\bexcept\b", re.I)

#: Where the word forms learned from the sources are kept (see :func:`word_forms`).
FORMS_FILE = Path(__file__).with_name("data") / "word_forms.tsv"
#: Where the sources' abbreviations are kept, with the diseases each stands for (see
#: :func:`.readings.expansions`).
ABBREVIATIONS_FILE = Path(__file__).with_name("data") / "abbreviations.tsv"


def read_forms(path: Path = FORMS_FILE) -> dict[str, str]:
    """The learned word forms, variant -> canonical (empty when the file is absent)."""
    return read_pairs(path) if path.exists() else {}


#: Adjectives of organs and their nouns that anatomy textbooks state ("zygomatic", "zygoma";
#: "mammary", "breast"), written by hand where the sources show a pair too rarely for the
#: build to learn it; unified with the learned forms, and kept when the build replaces those.
ANATOMY_FILE = Path(__file__).with_name("data") / "anatomy_forms.tsv"
_ANATOMY: dict[str, str] = read_forms(ANATOMY_FILE)

#: Word forms the sources use for one another in names of one concept, learned at build
#: time (``tools/build_terminology.py``): adjective and noun of an organ ("testicular",
#: "testis"; "ovarian", "ovary") and spelling variants ("generalised", "foetal", "disk");
#: and the textbook's pairs above.
_FORMS: dict[str, str] = {**read_forms(), **_ANATOMY}

# Latin and Greek plurals the shared normaliser's plural folding reads as English ones
# ("mycoses" would be "mycose"): folded in the name before it reads it.
_PLURALS = ((re.compile(r"\b(?!(?:over)?doses\b)([A-Za-z]{3,})oses\b"), r"\1osis"),
            (re.compile(r"\b([A-Za-z]{3,})itides\b"), r"\1itis"),
            (re.compile(r"\b([A-Za-z]{3,})iases\b"), r"\1iasis"),
            (re.compile(r"\b([A-Za-z]{3,})sses\b"), r"\1ss"))


# A semantic tag or an editorial note ending a synonym names nothing: MONDO keeps SNOMED CT's
# tags ("scirrhous adenocarcinoma (morphologic abnormality)", "sexual impotence (finding)")
# and notes ("trisomy E (formerly)", "OFC8, included") among its synonyms.
_TAG = re.compile(r"\s*(?:\((?:disease|disorder|finding|morphologic abnormality|situation|"
                  r"clinical|formerly|included)\)|,\s*(?:included|formerly))\s*$", re.I)


def _singular(name: str) -> str:
    name = _TAG.sub("", name)
    for pattern, replacement in _PLURALS:
        name = pattern.sub(replacement, name)
    return name


def word_forms() -> dict[str, str]:
    """The learned word forms in use (the build replaces them with ones it mines)."""
    return _FORMS


def set_word_forms(forms: dict[str, str]) -> None:
    """Use ``forms`` from now on (the table build, after mining them from the sources), with
    the textbook's pairs (:data:`ANATOMY_FILE`)."""
    _FORMS.clear()
    _FORMS.update(forms)
    _FORMS.update(_ANATOMY)
    text.clear_caches()


@bounded_cache
def tokens(name: str, *, expand_ambiguous: bool = False,
           name_forms: bool = True) -> tuple[str, ...]:
    """:func:`..core.text.tokens` of a name, Latin plurals folded first and, with
    ``name_forms``, the learned word forms unified."""
    words = text.tokens(_singular(name), expand_ambiguous=expand_ambiguous,
                        name_forms=name_forms)
    return tuple(_FORMS.get(w, w) for w in words) if name_forms and _FORMS else words


def base_content(name: str) -> tuple[str, ...]:
    """The identifying words of a name without the learned word forms (what they are
    learned from)."""
    return text.content(_singular(name))


@bounded_cache
def content(name: str) -> tuple[str, ...]:
    """The identifying words of a name, in order (:func:`..core.text.content`, Latin plurals
    folded, learned word forms unified)."""
    return tuple(_FORMS.get(w, w) for w in base_content(name))


def key(name: str) -> Key:
    """The order-free comparison key of a name (see :func:`content`)."""
    return frozenset(content(name))


def base_key(name: str) -> Key:
    """:func:`key` without the learned word forms."""
    return frozenset(base_content(name))


def compact(name: str) -> str:
    """The content words run together: "post-streptococcal" and "poststreptococcal" agree."""
    return "".join(content(name))


def icd_name_forms(name: str) -> Iterator[str]:
    """The names an ICD-10-CM description stands for.

    Square brackets hold alternative names: one that ends the name (or a part before a
    comma) names the whole ("Varicella [chickenpox]", "Osteitis deformans [Paget's disease of
    bone]"); one inside it stands for the word before it ("Third [oculomotor] nerve palsy":
    oculomotor nerve palsy; "ascending [right] colon" makes "right" no name of the code).
    Bracketed acronyms and scopes ("[any part, except ear drum]") name nothing. Parentheses
    hold non-essential words, so the name is given with and without them. Residual
    categories ("Other ...") name no single condition and give nothing.
    """
    name = _RANGE.sub("", name).strip()
    if name.lower().startswith(("other ", "unspecified ")):
        return
    for match in _BRACKET.finditer(name):
        alt = match.group(1).strip()
        if not alt or _BRACKET_ACRONYM.match(alt) or _BRACKET_SCOPE.search(alt):
            continue
        after = name[match.end():].lstrip()
        if not after or after.startswith((",", "(")):
            yield alt
        else:
            before = " ".join(name[:match.start()].split()[:-1])
            yield _PAREN.sub(" ", _BRACKET.sub(" ", f"{before} {alt} {after}")).strip()
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
    (:func:`..core.text.normaliser_fingerprint`), the plural folds, the learned word forms and
    the ICD-10-CM name forms. Keys in the table are valid while the fingerprint they were
    built with matches."""
    parts = [text.normaliser_fingerprint(), inspect.getsource(icd_name_forms),
             inspect.getsource(tokens), inspect.getsource(base_content),
             inspect.getsource(content), inspect.getsource(_singular), _TAG.pattern,
             [p.pattern for p, _ in _PLURALS],
             _BRACKET_ACRONYM.pattern, _BRACKET_SCOPE.pattern, sorted(_FORMS.items())]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]
