"""How the parts of two names relate, read from the terminology (stage 2, relate).

The word-level tests :mod:`.equivalence` asks before and after it looks two names up whole:
an extra word the terminology files the shorter name under, a part swapped for its synonym,
an eponym written alone or with its head, a head word dropped, and whether one source tells
two names apart. None of them compares two names whole, so none calls back into
:func:`.equivalence.compare`.
"""

from __future__ import annotations

import re

from ..terminology import CONDITION_SUFFIXES, FILLER, GENERIC, Key, tokens
from . import eponym_words
from .concepts import Link, Terminology
from .readings import (
    AGENT_DISEASE_ENDINGS,
    GENUS_ENDINGS,
    MIN_STEM,
    agent_of,
    noun_and_adjective,
)
from .relation import Relation

__all__ = ["PART_WORDS", "agent_forms", "agent_link", "apart_outside_icd", "class_implied",
           "full_of_short_form", "generic_modifier", "names_a_disease", "ontology_of",
           "part_synonym", "synonym_tier", "without_head"]


def class_implied(g: Key, t: Key, terms: Terminology) -> str | None:
    """Why one name's extra word adds nothing, or None: the terminology files the shorter
    name under the disorders that word names (glomerulonephritis under the Disease
    Ontology's "kidney disease", so "renal glomerulonephritis" names no narrower disease),
    as a site a disease only occurs in is part of its definition."""
    extra, short = (g - t, t) if t < g else (t - g, g)
    if len(extra) != 1 or not terms.known(short):
        return None
    above = terms.filed_under(short, extra)
    return None if above is None else (f"the {next(iter(extra))} adds nothing: "
                                       f"{terms.label(above)} holds it")


#: The most words a part swapped for its synonym may have ("herpes zoster" for "shingles").
PART_WORDS = 3


def part_synonym(g: Key, t: Key, terms: Terminology) -> Relation | None:
    """The two names the same but for one part each, and those parts one word's noun and
    adjective ("fracture of the clavicle", "clavicular fracture": same) or names of one
    disease of known scope ("shingles ophthalmicus" for herpes zoster ophthalmicus,
    "congenital angioma" for congenital hemangioma: synonym, unsure). A synonym put for a
    part of a name leaves the name's meaning as it was; the rest the two share must name
    something (a word the sources use in names), and parts that no source names as one
    disease ("acute" / "chronic", "type 1" / "type 2", "breast" / "lung") never are one."""
    own, other, rest = g - t, t - g, g & t
    if (not own or not other or not rest or len(own) > PART_WORDS
            or len(other) > PART_WORDS or not any(terms.is_word(w) for w in rest)):
        return None
    if len(own) == len(other) == 1:
        a, b = next(iter(own)), next(iter(other))
        for noun, adjective in ((a, b), (b, a)):
            # "fracture of the clavicle" / "clavicular fracture": word order with a noun for
            # its adjective, as the learned word forms read the pairs many concepts show
            if noun_and_adjective(noun, adjective) and not terms.one_word_name(noun):
                return Relation("same", f"{adjective!r} is the adjective of {noun!r}")
    link = terms.link(own, other)
    if link is None or link.kind != "synonym" or link.tier >= 3:
        return None
    return Relation("synonym", f"the same name but for one part: {terms.label(link.given)} "
                    f"= {terms.label(link.truth)}", sure=False)


def agent_link(g: Key, t: Key, link: Link, terms: Terminology) -> Link | None:
    """``link``, a broader or narrower one source states, with the sources that state it of
    the other name of a disease named after its organism: "borreliosis" (MONDO's name) is the
    Borrelia infection (MeSH's), one disease by the nomenclature (:func:`.readings.agent_of`),
    so both sources' hierarchies put it above Lyme disease. None when no other source adds."""
    if link.kind not in ("broader", "narrower"):
        return None
    sources = set(link.sources)
    for g_form in (g, *agent_forms(g, terms)):
        for t_form in (t, *agent_forms(t, terms)):
            other = terms.link(g_form, t_form) if (g_form, t_form) != (g, t) else None
            if other is not None and other.kind == link.kind:
                sources.update(other.sources)
    if sources == set(link.sources):
        return None
    return Link(link.kind, link.given, link.truth, link.tier, link.distance,
                tuple(sorted(sources)))


def agent_forms(name: Key, terms: Terminology) -> tuple[Key, ...]:
    """The other names, as keys the terminology knows, of a disease named after its organism:
    the organism's infection for the disease ("borreliosis": ``{"borrelia"}``, Borrelia
    infection), the disease for the organism's infection; each read back by
    :func:`.readings.agent_of`, two sources' concepts side by side counting as one disease."""
    if len(name) != 1:
        return ()
    word = next(iter(name))
    found: list[Key] = []
    for ending in AGENT_DISEASE_ENDINGS:  # the disease: its organism's names
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            found += [frozenset({word[: -len(ending)] + e}) for e in GENUS_ENDINGS]
    for ending in GENUS_ENDINGS:  # the organism: the diseases named after it
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            found += [frozenset({word[: len(word) - len(ending)] + e})
                      for e in AGENT_DISEASE_ENDINGS]
    return tuple(sorted({k for k in found if k != name and terms.known(k) and (
        agent_of(f"{word} infection", name, k, terms, unjoined=True)
        or agent_of(f"{next(iter(k))} infection", k, name, terms, unjoined=True))},
        key=sorted))


def apart_outside_icd(given: Key, truth: Key, terms: Terminology) -> bool:
    """Whether one source other than ICD-10-CM names both as concepts of their own (in
    clusters that share nothing): that source tells the two apart, not two sources' scopes."""
    g_ids, t_ids = terms.concepts(given)[1], terms.concepts(truth)[1]
    if {terms.cluster(i) for i in g_ids} & {terms.cluster(i) for i in t_ids}:
        return False
    return bool({ontology_of(i) for i in g_ids} & {ontology_of(i) for i in t_ids} - {"ICD"})


def ontology_of(ident: str) -> str:
    """The source a concept's identifier comes from ("MESH", "DOID", "ICD", "MONDO")."""
    # EFO's disease branch is MONDO's: one witness.
    prefix = ident.split(":", 1)[0]
    return "MONDO" if prefix == "EFO" else prefix


def synonym_tier(part: Key, t: Key, terms: Terminology) -> int | None:
    """How firmly the terminology states ``part`` a synonym of ``t`` (its tier), or None."""
    link = terms.link(part, t)
    return link.tier if link is not None and link.kind == "synonym" else None


def names_a_disease(word: str, terms: Terminology) -> bool:
    """A single word names a disease when a source uses it alone ("malaria", "croup") or it
    has a disease's ending ("-itis", "-oma", ...); an organ ("kidney"), a function
    ("sleep") or an agent ("Plasmodium", "serotonin") lacks the head word that made the
    name ("kidney disease", "serotonin syndrome")."""
    return terms.one_word_name(word) or word.endswith(CONDITION_SUFFIXES)


def full_of_short_form(given: str, truth: str, g: Key, t: Key, link: Link | None) -> bool:
    """Whether the truth is an eponym alone and ``given`` the name it is the usual short form
    of, its one more word the head ("Wilms tumor" for "Wilms", "Bell's palsy" for "Bell",
    "Barrett esophagus" for "Barrett's"): the head word says what kind of name it is, not
    which disease, so the full name is no narrower than the short form. Not when the
    terminology relates the two otherwise ("Crohn colitis" is a kind of Crohn disease)."""
    if not (t < g and len(g - t) == 1 and t <= eponym_words.eponyms()):
        return False
    if link is not None and link.kind != "synonym":
        return False
    # The truth written as the eponym alone ("Nicolau syndrome" is no short form), and the
    # word the answer adds its last ("Lafora body disorder" adds no head).
    written, full = tokens(truth), tokens(given)
    return set(written) <= t and bool(full) and full[-1] in g - t


def without_head(given: str, truth: str, g: Key, terms: Terminology) -> bool:
    """Whether ``given`` is the truth's name with its generic head dropped and names no disease
    by itself: "Serotonin" for serotonin syndrome, "Lyme" for Lyme disease, "Nightmares" for
    nightmare disorder. The key drops the head word of both, so their keys agree.

    An eponym is the usual short form of the disease's name ("Crohn's", "Graves'",
    "Sjögren" for Sjögren syndrome): a word in the possessive, or one the sources write in the
    possessive in a disease name (:func:`.eponym_words.eponyms`), with or without its "s" and
    apostrophe ("Crohns", "Crohn"), as clinicians drop them."""
    if len(g) != 1 or GENERIC & set(tokens(given)) or not GENERIC & set(tokens(truth)):
        return False
    word = next(iter(g))
    return (not _POSSESSIVE_END.search(given.strip()) and word not in eponym_words.eponyms()
            and not names_a_disease(word, terms))


_POSSESSIVE_END = re.compile(r"['\u2019]s?$")


# The generic words that may open a name as its modifier: not "type" and "form", which
# number a name wherever they stand ("type 2 diabetes", "diabetes type 2").
_MODIFYING_GENERIC = GENERIC - {"type", "form"}


def generic_modifier(given: str, truth: str) -> str | None:
    """The generic word ``given`` opens its name with, as a modifier of the words after it,
    where ``truth`` has no such word: "illness" of illness anxiety disorder (DSM-5's name of
    its own, not anxiety). The key drops generic words as heads ("Lyme disease" is Lyme), so
    the two keys agree though the answer names a narrower disease (red team round 16). Not
    before "of" or "with" ("disease of the liver", "infection with the hepatitis C virus"),
    where the word is the head."""
    written = [w for w in re.findall(r"[a-z]+", given.lower()) if w not in ("a", "an", "the")]
    if (len(written) < 3 or written[0] not in _MODIFYING_GENERIC
            or written[1] in FILLER):
        return None
    return None if written[0] in re.findall(r"[a-z]+", truth.lower()) else written[0]
