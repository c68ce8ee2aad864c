"""Which known disease names an abbreviation's letters spell (stage 2, for :mod:`.relate`).

The sources give few abbreviations (``abbreviations.tsv``); an answer that is an abbreviation
alone they do not list ("CVI") is read by the truth's initials (:func:`.readings.spelled_out`),
so it would score for whichever disease the case asks about: chronic venous insufficiency
and common variable immunodeficiency alike. Issue 31's guard rail says that an abbreviation
with several expansions in the terminology is not resolved toward the truth; this index
gives those expansions: the preferred name of every disease concept, by its initials.
"Several" means several distinct diseases (:func:`distinct_diseases`): the names the sources
give one disease under, and names of no disease, make no second one.

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

from ..terminology import GENERIC, key
from ..terminology_table import DATA_FILE, read_table
from ..terms.acronyms import spelled_names
from ..terms.concepts import default_terminology
from ..terms.equivalence import compare
from ..terms.readings import disease_concept, expansions, names_a_disease, singular_letters
from .word_guards import written_words

__all__ = ["another_disease_abbreviated", "spelling", "written_as_letters"]

_WORD = re.compile(r"[A-Za-z]+")


def another_disease_abbreviated(abbreviation: str, accepted: Sequence[str]) -> bool:
    """Whether ``abbreviation`` stands for a disease that the truth is not: the sources give
    it for one ("PSC": pancreatic serous cystadenoma beside primary sclerosing cholangitis),
    or, where they give it for none and the normaliser does not expand it, a known disease's
    name spells it (:func:`spelling`: "CVI", chronic venous insufficiency beside common
    variable immunodeficiency). Its readings count as diseases as :func:`distinct_diseases`
    groups them: one disease however many names the sources give it under."""
    abbreviation = singular_letters(abbreviation)  # "PSCs" as "PSC"
    named = expansions(abbreviation)
    if not named and key(abbreviation) == {abbreviation.lower()}:
        named = spelling(abbreviation)
    return bool(distinct_diseases(abbreviation, named, accepted))


def distinct_diseases(letters: str, named: Sequence[str],
                      accepted: Sequence[str]) -> list[str]:
    """The names among ``named`` (the readings of the abbreviation ``letters``) of diseases
    other than the truth (``accepted``, its first name the truth). Readings are grouped into
    one disease where

    * the terminology relates them: a synonym (of any scope), or a kind or a wider name of
      the other that two sources state (:func:`_linked`, as :func:`.relate._restates` reads a
      claim of sameness);
    * they are the same words by the name rules (word forms, plurals, hyphens, word order:
      :func:`.terminology.key`);
    * the abbreviation spells a name the sources give the reading's own concept, and that
      name is the other by either rule (:func:`spelled_names`: MONDO gives "SCFE" to
      "epiphysiolysis of the hip", whose synonym "slipped capital femoral epiphysis" it
      spells; a source lists an acronym for the name it abbreviates);
    * a name shares a word with an accepted name, other than a class word ("syndrome",
      "disease": :data:`.terminology.GENERIC`) (a reading the terminology may not know by
      every name: "chronic leukemia" for chronic myeloid leukemia);

    and a reading that names no disease (ICD-10-CM's chapters R to Z only: a finding, an
    injury, a factor influencing health) is none to choose between beside a disease the
    letters stand for; letters that stand for such readings only ("CRP": elevated C-reactive
    protein) are theirs, not the truth's."""
    truth = [t for t in accepted if t.strip()]
    if not truth:
        return []
    # a word that says which disease, not its class ("syndrome" is no link between
    # Miller-Dieker and myelodysplastic syndrome, both "MDS")
    mine = {w for t in truth for w in written_words(t)} - GENERIC
    firm, loose, pending = list(truth), list[str](), list[str]()
    terms = default_terminology()
    diseases = [n for n in dict.fromkeys(named) if names_a_disease(n, terms)]
    for name in diseases:
        (loose if mine & set(written_words(name)) else pending).append(name)
    # the truth's disease takes in each reading that is one disease with one of its members
    linked = _grow(firm, loose, pending, letters)
    # a name of no disease is no second disease beside one the terminology makes the
    # truth's; a word shared is no such link, and letters the sources give for a finding
    # only ("CRP": elevated C-reactive protein) are that finding's
    if not linked:
        pending += [n for n in dict.fromkeys(named) if n not in diseases]
    return pending


def _grow(firm: list[str], loose: list[str], pending: list[str], letters: str) -> bool:
    """Move into the truth's disease (``firm``, the names the terminology makes the truth's;
    ``loose``, those sharing a word with it) each of ``pending`` one disease with a member;
    whether a reading of the sources is among ``firm``."""
    readings = len(firm)
    for name in list(loose):
        if any(_one_disease(name, member, letters) for member in firm):
            firm.append(name)
            loose.remove(name)
    grown = True
    while grown and pending:
        grown = False
        for name in list(pending):
            if any(_one_disease(name, member, letters) for member in firm):
                firm += [name, *spelled_names(letters, name)]
            elif any(_one_disease(name, member, letters) for member in loose):
                loose.append(name)
            else:
                continue
            pending.remove(name)
            grown = True
    return len(firm) > readings


def _one_disease(name: str, other: str, letters: str) -> bool:
    if key(name) == key(other) or _linked(name, other):
        return True
    return any(key(s) == key(other) or _linked(s, other) for s in spelled_names(letters, name))


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
        if not disease_concept(row.id):
            continue
        for grade, name in zip(row.grades, row.names, strict=False):
            words = _WORD.findall(name)
            if grade != "p" or "," in name or re.search(r"\d", name) or not 2 <= len(words) <= 6:
                continue
            found.setdefault("".join(w[0] for w in words).lower(), set()).add(name)
    return {letters: tuple(sorted(names)) for letters, names in found.items()}


#: An abbreviation written alone ("PSC", "SSc", "NF1"): letters, then letters or digits. Two
#: letters too: read alone as the one disease the sources give them for, so guarded alike
#: ("DM" is dermatomyositis and diabetes mellitus; red team round 20).
_SHORT_FORM = re.compile(r"[A-Za-z][A-Za-z0-9]{1,7}")


def written_as_letters(name: str) -> bool:
    """Whether ``name`` is written as an abbreviation's letters: two capitals or more, or
    letters in lower case the sources list as an abbreviation and no word of their names
    ("psc", not "all": the letters, not a word, so as ambiguous as in capitals; the
    normaliser reads some as the disease they abbreviate)."""
    if _SHORT_FORM.fullmatch(name) is None:
        return False
    if sum(c.isupper() for c in name) >= 2:
        return True
    return (name.islower() and bool(expansions(name))
            and not default_terminology().is_word(name))
