"""What the terminology says of one name of an answer beside another (the main name, or
the truth's names): whether it restates it, names a disease of its own in a bracket, opens
with a known disease, names a condition, or sits in another branch. The relate stage
(:mod:`.relate`) asks these of the names it sorts."""

from __future__ import annotations

from collections.abc import Sequence

from ..terminology import CONDITION_SUFFIXES, key, tokens
from ..terms.concepts import default_terminology
from ..terms.concurrent import disease_by_words
from ..terms.equivalence import compare, judge
from ..terms.kinds import INJURIES_AND_STATES
from ..terms.qualifiers import NEUTRAL_QUALIFIERS
from ..terms.truth_forms import forms_of as _forms

#: Relations that link two names as one disease or its kinds.
KIN = frozenset({"same", "synonym", "broader", "narrower"})


def bracketed_disease(name: str, main: str) -> bool:
    """Whether a name in brackets is a disease: one the terminology knows, or one whose head
    noun it knows in another branch than the main name ("plaque psoriasis (papulopustular
    rosacea)"); an unknown name otherwise may be a lay name of the main one ("(canker
    sores)")."""
    words = tokens(name)
    terms = default_terminology()
    # ending in a name it knows ("(acute type A aortic dissection)": aortic dissection); or
    # naming a disease by its words and sharing none with the main name: a lay name is no
    # "-itis" or "-oma" ("(leukemia cutis)", "(pyostomatitis vegetans)")
    return (terms.known(name) or head_apart(name, [main])
            or (len(words) > 2 and terms.known(" ".join(words[-2:]))
                and not restates(" ".join(words[-2:]), main, loosely=True))
            or (disease_by_words(name) and not set(words) & set(tokens(main))))


def restates(name: str, other: str, *, loosely: bool = False) -> bool:
    """Whether the terminology links two names: a synonym (of any scope), or a hierarchy two
    sources state; ``loosely`` (a name in brackets after the other, where doctors put
    another name of it: "primary hyperaldosteronism (Conn's syndrome)"), one source's
    hierarchy either way will do, or the two names' words naming one concept together."""
    relations = (compare(name, other), compare(other, name)) if loosely else (
        compare(name, other),)
    # A sibling is another disease, however few sources say so ("rheumatoid arthritis
    # (ankylosing spondylitis)", "intussusception (Kawasaki disease)").
    return any(r.kind in ("same", "synonym") or (r.kind in KIN and r.sure and r.curated)
               or (loosely and r.kind in KIN)
               for r in relations) or (loosely and one_concept(name, other))


def one_concept(name: str, other: str) -> bool:
    """Whether the words of two names together are a name of one concept the terminology
    knows: the bracket says which one, as a manifestation with its disease ("erythema migrans
    (Lyme disease)" is MeSH's "Erythema Migrans of Lyme Disease"), not another diagnosis."""
    a, b = key(name), key(other)
    return bool(a and b and not a <= b and not b <= a) and default_terminology().known(a | b)


def opens_with_known(name: str) -> bool:
    """Whether ``name`` opens with a disease the terminology knows, two words or more, and
    says which kind after it ("anorexia nervosa - purging type"): a kind of that disease."""
    words = name.split()
    terms = default_terminology()
    return any(terms.disease_like(" ".join(words[:i])) and not terms.symptom(
        " ".join(words[:i])) for i in range(len(words) - 1, 1, -1))


def has_condition_word(name: str) -> bool:
    """Whether a name has a word that names a condition, or ends in a name the terminology
    knows ("acute type A aortic dissection": aortic dissection), or names an injury or a
    state of pregnancy (a second condition the answer gives, not a finding of the first)."""
    words = tokens(name)
    return (any(w.endswith(CONDITION_SUFFIXES) or w in INJURIES_AND_STATES for w in words)
            or (len(words) > 2 and default_terminology().known(" ".join(words[-2:]))))



def known_apart(name: str, accepted: Sequence[str]) -> bool:
    """Whether the terminology knows ``name`` and a name of the truth, and so places them in
    other branches (then "unrelated" is sure, and no moderator is asked)."""
    terms = default_terminology()
    return terms.known(name) and any(
        terms.known(form) for truth in accepted for form in _forms(truth)[:1])


def head_apart(name: str, accepted: Sequence[str]) -> bool:
    """Whether a name the terminology does not know has a head noun it knows that it places
    in another branch than the truth ("papulopustular rosacea" for plaque psoriasis)."""
    words = tokens(name)
    terms = default_terminology()
    if not words or terms.known(name) or not terms.known(words[-1]):
        return False
    judged = [judge(words[-1], truth) for truth in accepted]
    return all(j.relation == "different" and j.sure for j in judged) and known_apart(
        words[-1], accepted)


def another_site(reading: frozenset[str], truth: frozenset[str]) -> bool:
    """Whether ``reading`` names the truth's disease at another site: the words it adds are
    sites (ICD-10-CM's site words, no side or severity) and the truth has a site word it
    lacks ("Melanoma, pulmonary" for cutaneous melanoma). ICD-10-CM codes a disease by its
    site: another site is another code."""
    sites = default_terminology().site_words - NEUTRAL_QUALIFIERS
    added, lacking = reading - truth, truth - reading
    return bool(added) and added <= sites and bool(lacking & sites)
