"""What two names' words alone say of their relation, checked against the terminology's
hierarchy (stage 2, relate; :mod:`.equivalence` asks this after the terminology's own links).

Shared words mislead as often as they help ("German measles" is no measles), so a relation
seen in the words stands only where the terminology does not contradict it: a broader name
keeps the truth's head and is a disease of its own, a fragment of a name is none.
"""

from __future__ import annotations

from ..terminology import Key
from ..wording import covered, keeps_head, listed
from .concepts import Link, Terminology
from .qualifiers import NEUTRAL_QUALIFIERS, PLACE_NOUNS, PLACES, SOFT_QUALIFIERS
from .relation import Relation

__all__ = ["FAMILY_BREADTH", "FAMILY_LEVELS", "disease_word", "hierarchy", "word_relation",
           "words_only"]

#: The strict policy's rule for a broader answer: it counts when it names one disease with
#: its variants, a concept with at most this many concepts below it in its source (MeSH
#: first: "melanoma" 4, "hyperthyroidism" 4, "leishmaniasis" 4), at most this many levels
#: above the truth; a family does not ("arthritis" 31 for rheumatoid arthritis, "dementia"
#: 16, "lymphoma" 27, "purpura" 7, "colitis" 6). The ``paper`` policy accepts any broader
#: name, as CRAFT-MD's grader prompt did.
FAMILY_BREADTH = 5
FAMILY_LEVELS = 2


def hierarchy(link: Link, terms: Terminology) -> Relation:
    """The relation a hierarchy link states: broader (a family past the bounds above),
    narrower, or siblings under one parent."""
    reason = (f"{terms.label(link.given)} vs {terms.label(link.truth)} by "
              f"{', '.join(link.sources)}")
    if link.kind == "broader":
        breadth = terms.breadth(link.given)
        family = link.distance > FAMILY_LEVELS or breadth > FAMILY_BREADTH
        kind_of = "a family" if family else "one disease"
        return Relation("broader", f"{reason}: {link.distance} level(s) above, {kind_of} of "
                        f"{breadth} concept(s) below it", sure=link.tier < 3, family=family,
                        height=link.distance, breadth=breadth)
    if link.kind == "narrower":
        return Relation("narrower", f"{reason}: below the truth")
    return Relation("sibling", f"{reason}: siblings under one parent")


def words_only(words: Relation, g: Key, t: Key, truth: str, terms: Terminology,
                link: Link | None, bare: bool = False) -> Relation:
    """A broader or narrower relation seen in the words alone, judged against the terminology.

    Both names known to the terminology but unrelated by it (one source alone may agree with
    the words): the shared words mislead ("German measles" is no measles). An answer the
    words find broader must keep the truth's head ("meningitis" for enterovirus meningitis)
    and the truth must be unknown to the terminology (else its hierarchy would say so); an
    answer without the head is a fragment of the name ("plaques" for plaque psoriasis,
    "superficial spreading" for that melanoma).
    """
    g_known, t_known = terms.known(g), terms.known(t)
    has_head = keeps_head(g, truth, terms.is_word)
    # Words and one source's hierarchy agreeing make a broader name of two words or more, or
    # of one word that the Disease Ontology names as a disease (MeSH alone has "infarction"
    # above myocardial infarction).
    if (words.kind == "broader" and has_head and (len(g) > 1 or disease_word(g, terms))
            and link is not None and link.kind == "broader"):
        above = hierarchy(link, terms)
        return Relation("broader", f"{words.reason}; {terms.label(link.given)} is above "
                        f"{terms.label(link.truth)} ({', '.join(link.sources)})",
                        family=above.family, height=above.height,
                        breadth=above.breadth)
    # One word lifted from a name the terminology knows is no diagnosis unless a hierarchy
    # puts it above the truth ("sclerosis" for multiple sclerosis, "Bullous" for bullous
    # pemphigoid): sure, so that no moderator model is asked to agree with it.
    lifted = words.kind == "broader" and len(g) == 1 and (t_known or not has_head)
    if words.kind == "broader" and not has_head and not lifted and g_known:
        # a disease name of its own ("cubital tunnel syndrome"), not a fragment
        return Relation("related", f"{words.reason}: not the truth's head", sure=False)
    if words.kind == "broader" and not has_head:
        return Relation("related", f"{words.reason}: a fragment of the truth's name, "
                        "not its head, and no disease concept above it")
    if g_known and t_known:
        if words.kind == "broader" and terms.icd_relation(g, t) in ("same", "broader"):
            return Relation("broader", f"{words.reason}; ICD-10-CM: the answer's code is "
                            "above the truth's")
        if lifted:
            return Relation("related", f"{words.reason}: one word of the truth's name")
        return Relation("related", f"{words.reason}, but the terminology relates neither "
                        "name to the other", sure=False)
    if words.kind != "broader":
        return words
    if not t_known:
        if bare and not disease_word(g, terms):
            # a bare head noun ("fracture", "cyst", "ulcer") names a kind of lesion or
            # process, a family of diseases: never right under strict
            return Relation("broader", f"{words.reason}: a bare head noun, a family of "
                            "lesions or processes", family=True)
        return Relation("broader", f"{words.reason} (the answer is its head)", sure=False)
    if lifted:
        return Relation("related", f"{words.reason}: one word of the truth's name")
    return Relation("related", f"{words.reason}: the terminology places no concept of that "
                    "name above the truth", sure=False)


def disease_word(g: Key, terms: Terminology) -> bool:
    """Whether a one-word name is a disease of the Disease Ontology ("melanoma", "lymphoma"),
    which keeps out processes and findings that MeSH files among diseases ("infarction",
    "hemorrhage"): only such a word, heading the truth, is broader by one source's say."""
    return any(i.startswith("DOID:") for i in terms.concepts(g)[1])


def word_relation(g: Key, t: Key, terms: Terminology) -> Relation | None:
    """The relation the words alone establish, or None when they establish none."""
    soft = SOFT_QUALIFIERS | terms.site_words
    if len(g) == 1 < len(t):
        # One word may drop how and when ("pneumonia" for community-acquired pneumonia), not
        # where: "infarction" names no disease without the heart, "insufficiency" none
        # without the adrenals.
        soft = SOFT_QUALIFIERS - PLACES
    g_in_t, t_in_g = covered(g, t, terms.is_word), covered(t, g, terms.is_word)
    g_extra, t_extra = g - g_in_t - PLACE_NOUNS, t - t_in_g - PLACE_NOUNS
    if not g_extra and not t_extra:
        return Relation("same", "same words up to spelling")
    if g_extra and t_extra and g_in_t and g_extra <= NEUTRAL_QUALIFIERS:
        # "malignant melanoma" for superficial spreading melanoma: "melanoma" for it (not
        # "moderate to severe", qualifiers alone, which name nothing: red team round 11)
        g_extra = frozenset()
    if not g_extra:
        if t_extra <= soft:
            return Relation("same", f"the truth only adds {listed(t_extra)}")
        return Relation("broader", f"the truth adds {listed(t_extra)}", sure=False)
    if not t_extra:
        if g_extra <= NEUTRAL_QUALIFIERS:
            return Relation("same", f"the answer only adds {listed(g_extra)}")
        if g_extra <= soft | terms.site_words:
            return Relation("narrower", f"the answer adds where, when, why or which kind: "
                            f"{listed(g_extra - NEUTRAL_QUALIFIERS)}")
        return Relation("narrower", f"the answer adds {listed(g_extra)}", sure=False)
    return None
