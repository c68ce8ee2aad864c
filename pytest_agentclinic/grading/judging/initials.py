"""Which known disease names an abbreviation's letters spell (stage 2, for :mod:`.relate`).

The sources give few abbreviations (``abbreviations.tsv``); an answer that is an abbreviation
alone they do not list ("CVI") is read by the truth's initials (:func:`.readings.spelled_out`),
so it would score for whichever disease the case asks about: chronic venous insufficiency
and common variable immunodeficiency alike. Issue 31's guard rail says that an abbreviation
with several expansions in the terminology is not resolved toward the truth; this index
gives those expansions: the preferred name of every disease concept, by its initials.

Only preferred names count (a synonym or an ICD-10-CM inclusion term is no name a writer
abbreviates: "Smoking complicating childbirth" is no "SCC"), and only names of diseases: not
ICD-10-CM's chapters of symptoms, injuries, external causes and health factors (R to Z) or
its blocks, not MeSH's inverted headings ("Defect, Congenital Heart") and not names with
digits (a subtype's number is no initial). The index is built once per process, on first
use, from the bundled table (about 0.6 s of CPU), which only an abbreviation alone that the
sources do not list ever asks for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..terminology import key
from ..terminology_table import DATA_FILE, read_table
from ..terms.equivalence import compare
from ..terms.readings import expansions
from .word_guards import written_words

__all__ = ["another_disease_abbreviated", "spelling"]

_WORD = re.compile(r"[A-Za-z]+")
#: ICD-10-CM chapters that name no disease: symptoms and findings (R), injuries and
#: poisonings (S, T), external causes (V to Y) and factors influencing health (Z).
_NOT_DISEASES = tuple("RSTUVWXYZ")


def another_disease_abbreviated(abbreviation: str, accepted: Sequence[str]) -> bool:
    """Whether ``abbreviation`` stands for a disease that shares no word with any accepted
    name and that the terminology does not link to the truth: the sources give it for one
    ("PSC": pancreatic serous cystadenoma beside primary sclerosing cholangitis; not a kind
    or a wider name of the truth: "CML", chronic leukemia, chronic myeloid leukemia), or,
    where they give it for none and the normaliser does not expand it, a known disease's
    name spells it (:func:`spelling`: "CVI", chronic venous insufficiency beside common
    variable immunodeficiency)."""
    named = expansions(abbreviation)
    if not named and key(abbreviation) == {abbreviation.lower()}:
        named = spelling(abbreviation)
    mine = {w for t in accepted for w in written_words(t)}
    return any(not mine & set(written_words(other)) and not _linked(other, accepted[0])
               for other in named)


def _linked(name: str, truth: str) -> bool:
    # a synonym (of any scope), or a hierarchy two sources state: a kind or a wider name of
    # the truth, as :func:`.relate._restates` reads a claim of sameness
    relation = compare(name, truth)
    return relation.kind in ("same", "synonym") or (
        relation.kind in ("broader", "narrower") and relation.sure and relation.curated)


def spelling(letters: str) -> tuple[str, ...]:
    """The preferred names of disease concepts whose words' initials are ``letters``
    (case-insensitive, two to six words), sorted."""
    return _index().get(letters.lower(), ())


@lru_cache(maxsize=1)
def _index() -> dict[str, tuple[str, ...]]:
    if not DATA_FILE.exists():
        return {}
    found: dict[str, set[str]] = {}
    for row in read_table(DATA_FILE)[1]:
        if not _a_disease(row.id):
            continue
        for grade, name in zip(row.grades, row.names, strict=False):
            words = _WORD.findall(name)
            if grade != "p" or "," in name or re.search(r"\d", name) or not 2 <= len(words) <= 6:
                continue
            found.setdefault("".join(w[0] for w in words).lower(), set()).add(name)
    return {letters: tuple(sorted(names)) for letters, names in found.items()}


def _a_disease(ident: str) -> bool:
    if not ident.startswith("ICD:"):
        return True
    code = ident[4:]
    # a chapter ("ICD:1") or a block ("ICD:A00-A09") groups diseases, and names none
    return code[:1].isalpha() and "-" not in code and not code.startswith(_NOT_DISEASES)
