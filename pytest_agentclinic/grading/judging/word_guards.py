"""Names that reach the truth only through its words (stage 2, for :mod:`.relate`).

A fragment (modifiers of the true name without what it names: "plaque" of plaque psoriasis)
and a bare head noun ("adenocarcinoma" of pancreatic adenocarcinoma) share words with the
truth without naming it; docs/grading.md's guard rails keep them from scoring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..terminology import CONDITION_SUFFIXES, FILLER, GENERIC, key, tokens
from ..terminology_memory import joined
from ..terms.concepts import default_terminology
from ..terms.eponym_words import eponyms
from ..terms.qualifiers import NEUTRAL_QUALIFIERS
from ..terms.truth_forms import forms_of as _forms
from ..wording import SLIP_WORD, neighbours

# Endings of words that name a condition ("-itis", "-oma", "pneumonia", "deficiency"...).
CONDITION_ENDINGS = (*CONDITION_SUFFIXES, "ia", "ias", "iasis", "ema", "ism", "sis")


def fragment(name: str, accepted: Sequence[str]) -> bool:
    """Whether ``name`` is only modifiers of an accepted name ("plaque" of plaque psoriasis,
    "drug reaction" of drug reaction with eosinophilia..., "IgA" of IgA nephropathy).

    A broader name keeps a word that names a condition ("psoriasis", "lymphoma",
    "pneumonia"); modifiers alone say which or where, not what.
    """
    words = key(name)
    if not words or any(w in GENERIC or w.endswith(CONDITION_ENDINGS) for w in tokens(name)):
        return False
    # The truth's head noun (its last word) names what it is: an answer keeping it is broader.
    return any(words < key(form) and tokens(form)[-1] not in tokens(name)
               for truth in accepted for form in _forms(truth) if tokens(form))


def bare_head(name: str, accepted: Sequence[str]) -> bool:
    """Whether ``name`` is one word, the last word (the head noun) of an accepted name of
    two words or more that are not just neutral qualifiers, and no accepted name itself."""
    # the words as written: the normaliser splits a word into its parts ("adenocarcinoma")
    written = written_words(name)
    # "A large cyst": a size before the head says how big, not which kind, as a severity
    # does (red team round 12); unless the truth is written with it ("giant cyst")
    words = written[1:] if len(written) == 2 and written[0] in _SIZE else written
    if len(words) != 1:
        return False
    names = [written_words(t) for t in accepted]
    heads = [t for t in names if len(t) > 1 and t[-1] == words[0]
             and not set(t[:-1]) <= NEUTRAL_QUALIFIERS | FILLER]
    return bool(heads) and all(t != words and t != written for t in names)


#: Words of size alone (not "small cell", which is a kind of cell).
_SIZE = frozenset({"large", "small", "big", "giant", "huge", "tiny", "massive", "enlarging"})


def head_of_variants(head: str, accepted: Sequence[str]) -> bool:
    """Whether a bare head noun may name the truth as the one disease whose variant it is:
    a source states the head and an accepted name are one concept ("zoster", herpes zoster;
    "thrush", oral thrush), or ICD-10-CM gives no accepted name a code of its own apart from
    the codes the head noun describes. ICD-10-CM classifies what it holds to be distinct
    conditions under codes of their own ("Primary sclerosing cholangitis" K83.01 beside
    "Cholangitis" K83.0, "Takotsubo syndrome" I51.81 apart from "Cardiomyopathy" I42) and
    leaves a disease's morphological variants to ICD-O under the disease's code (melanoma is
    coded by site, C43, not by its growth pattern: "superficial spreading melanoma" has no
    code). A growth pattern only: ICD-10-CM codes no acute, chronic or primary form of the
    truth apart either (:func:`_coded_by_course`), no source files the truth under another
    disease (:func:`_filed_elsewhere`), and the words before the head name no disease, cause
    or eponym of their own (:func:`_named_by_a_disease`)."""
    terms = default_terminology()
    # a synonym a source states, not the normaliser's: "stress-induced cardiomyopathy" reads
    # as "cardiomyopathy" once its words of cause are dropped, and names no concept so
    if any(key(t) != key(head) and (link := terms.link(key(head), key(t))) is not None
           and link.kind == "synonym" for t in accepted):
        return True
    if any(_named_by_a_disease(head, t) or _filed_elsewhere(head, t) for t in accepted):
        return False
    described = _icd_codes(head, described=True)
    return not any((_icd_codes(t) | _coded_by_course(t)) - described for t in accepted)


def _filed_elsewhere(head: str, truth: str) -> bool:
    """Whether a source files ``truth`` under a disease that is not the head noun's disease
    nor a kind of it: an organ's disease ("cerebral toxoplasmosis" under the central nervous
    system's diseases), an infection ("bacillary angiomatosis" under bartonellosis), another
    disease ("lipoid nephrosis" under nephrotic syndrome). The truth is then the head noun
    at a site, from a cause or as a form of another disease, which ICD-10-CM codes by site or
    by etiology, not one disease's variant (a growth pattern of melanoma is filed under
    melanoma alone, by every source)."""
    terms = default_terminology()
    home = {terms.cluster(i) for i in terms.concepts(head)[1]}
    if not home:
        return False
    for ident in terms.concepts(truth)[1]:
        for member in terms.backend.members_of(terms.cluster(ident)) or (ident,):
            for parent in terms.backend.parents_of(member):
                above = {parent, *terms.ancestors(parent)}
                if not any(terms.cluster(a) in home for a in above):
                    return True
    return False


#: Words of a condition's course ICD-10-CM subdivides a disease by ("Acute angle-closure
#: glaucoma" H40.21, "Chronic constrictive pericarditis" I31.1, "Primary angle-closure
#: glaucoma" H40.2): a code so named is a code of the truth's own.
_COURSE = ("acute", "chronic", "subacute", "primary")


def _coded_by_course(truth: str) -> set[str]:
    """The ICD-10-CM codes whose description names ``truth`` with a word of its course
    added (:data:`_COURSE`)."""
    backend = default_terminology().backend
    words = key(truth)
    return {code for word in _COURSE if word not in words
            for code in backend.icd_described(joined(key(f"{word} {truth}")))}


# An adjective by its ending ("cerebral", "cutaneous", "uterine", "hereditary"): a word of
# where or which kind, whatever the normaliser makes of it alone ("brain disease").
_ADJECTIVE = re.compile(r"(?:al|ic|ous|ive|ed|ing|ary|ar|ine|oid|form)$")


def _named_by_a_disease(head: str, truth: str) -> bool:
    """Whether the words before the head noun of ``truth`` name a disease of their own, its
    cause or its eponym ("cytomegalovirus retinitis", "Takayasu arteritis"): the truth is the
    head noun as a manifestation of that disease, which ICD-10-CM codes by its etiology (its
    "code first" convention for an underlying disease), not a variant of the head noun."""
    words = written_words(truth)
    if len(words) < 2 or words[-1] != head.lower():
        return False
    # an eponym names the disease its author described, a distinct entity, not a variant
    # ("Wernicke aphasia", "Takayasu arteritis"): the sources' possessives (eponym_words.eponyms)
    if key(" ".join(words[:-1])) & eponyms():
        return True
    before = [w for w in words[:-1] if not _ADJECTIVE.search(w) and w not in NEUTRAL_QUALIFIERS]
    terms = default_terminology()
    return bool(before) and terms.known(" ".join(before)) and not terms.symptom(
        " ".join(before))


def _icd_codes(name: str, described: bool = False) -> set[str]:
    """The ICD-10-CM codes a name has: codes naming it (by their description alone when
    ``described``: an inclusion term is a condition classified there, not the code's name)
    and the codes of the concepts the name denotes in any source."""
    terms = default_terminology()
    name_key = joined(key(name))
    codes = set(terms.backend.icd_described(name_key) if described
                else terms.backend.icd_codes(name_key))
    for ident in terms.concepts(name)[1]:
        codes.update(m for m in terms.backend.members_of(terms.cluster(ident)) or (ident,)
                     if m.startswith("ICD:"))
    return codes


_WRITTEN = re.compile(r"[A-Za-z0-9]+")


def unslipped(name: str, truth: str) -> str | None:
    """``truth``, when ``name`` is its words as written but for a one-letter slip (a letter
    dropped, added, changed, or two swapped) in one word of the truth of
    :data:`..wording.SLIP_WORD` letters or more, the slip no known word, and no other known
    name as close: no word one edit from the slip makes, in its place, a name the
    terminology knows ("Pleural efusion": "fusion" is a word, "pleural fusion" no name;
    "Crohn disese" for Crohn disease). Else None. Issue 31's guard rail: a slip is accepted
    only when no other known name is as close."""
    given, true = _WRITTEN.findall(name.lower()), _WRITTEN.findall(truth.lower())
    if len(given) != len(true):
        return None
    diffs = [i for i, (a, b) in enumerate(zip(given, true, strict=True)) if a != b]
    if len(diffs) != 1:
        return None
    i = diffs[0]
    slip, word = given[i], true[i]
    if (len(word) < SLIP_WORD or not (slip.isalpha() and word.isalpha())
            or abs(len(slip) - len(word)) > 1):
        # (one edit changes a length by one at most: the word one edit from a slip of
        # 16,000 letters are ~850,000 strings of its length, built for nothing)
        return None
    near = neighbours(slip)
    terms = default_terminology()
    if word not in near or terms.is_word(slip) or terms.known(name):
        return None
    for other in near - {word}:
        if terms.is_word(other) and terms.known(" ".join([*given[:i], other, *given[i + 1:]])):
            return None
    return truth


def written_words(name: str) -> list[str]:
    """The words as written, without a bracket's ("ventricular septal defect (VSD)")."""
    name = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", name)
    return [w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in FILLER]
