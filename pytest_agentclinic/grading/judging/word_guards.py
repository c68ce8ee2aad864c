"""Names that reach the truth only through its words (stage 2, for :mod:`.relate`).

A fragment (modifiers of the true name without what it names: "plaque" of plaque psoriasis)
and a bare head noun ("adenocarcinoma" of pancreatic adenocarcinoma) share words with the
truth without naming it; docs/grading.md's guard rails keep them from scoring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..terminology import CONDITION_SUFFIXES, FILLER, GENERIC, key, tokens
from ..terms.qualifiers import NEUTRAL_QUALIFIERS
from ..terms.truth_forms import forms_of as _forms

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
    words = written_words(name)
    if len(words) != 1:
        return False
    names = [written_words(t) for t in accepted]
    heads = [t for t in names if len(t) > 1 and t[-1] == words[0]
             and not set(t[:-1]) <= NEUTRAL_QUALIFIERS | FILLER]
    return bool(heads) and all(t != words for t in names)


def written_words(name: str) -> list[str]:
    """The words as written, without a bracket's ("ventricular septal defect (VSD)")."""
    name = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", name)
    return [w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in FILLER]
