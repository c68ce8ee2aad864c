"""Step 2 of the CRAFT-MD grader: is the extracted diagnosis equivalent to the correct one?

The paper's rule: synonyms and equivalent names are correct; an answer *broader* than the
truth is correct (the truth is a subtype of it); an answer *more specific* than the truth is
not, since the model may have leapt to a subtype the case does not support.

Names are compared by their keys (see :mod:`.terminology`), word by word with tolerance for
spelling slips, then by ICD-10-CM: names of the same code are synonyms, a code's ancestors are
broader. The result says which relation decided, so a caller can tell a sure verdict from a
guess and ask a model about the latter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .terminology import Key, Terminology, compact, content, default_terminology, key

Relation = Literal["same", "synonym", "broader", "narrower", "overlap", "different"]

#: Words that make a name more specific without naming a different condition: where and
#: how severe, not what. An answer adding only these to the truth is still the truth.
SOFT_QUALIFIERS = frozenset({
    "left", "right", "bilateral", "unilateral", "sided", "side", "mild", "moderate", "severe",
    "early", "late", "new", "onset", "recurrent", "suspected", "isolated", "simple", "classic",
    "classical", "typical", "true", "active", "significant", "symptomatic", "clinical",
    "presumed", "uncomplicated", "adult", "pediatric", "childhood", "neonatal", "infantile",
    "juvenile", "primary", "idiopathic", "benign", "episode", "likely", "possible", "current",
    "lesion", "case", "stage", "state", "related", "induced", "acquired", "community",
})


@dataclass(frozen=True)
class Judgement:
    """Whether a given name is right for the truth, how they relate and why."""

    correct: bool
    relation: Relation
    reason: str
    #: False when the rules had to guess (a partial overlap): the case for asking a model.
    sure: bool = True


def _similar(a: str, b: str) -> bool:
    """Two normalised words are the same word, allowing a slip or an adjectival ending."""
    if a == b:
        return True
    if min(len(a), len(b)) < 5:
        return False
    if a[:5] == b[:5] and abs(len(a) - len(b)) <= 2 and (a.startswith(b) or b.startswith(a)):
        return True  # "placenta"/"placental", "amebic"/"amebiasis" is not (length)
    return _edit_distance_at_most_one(a, b)


def _edit_distance_at_most_one(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (  # one substitution or one transposition
            i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:])
    return a[i:] == b[i + 1:]  # one insertion


def _covered(words: Key, by: Key) -> frozenset[str]:
    """The words of ``words`` that some word of ``by`` matches."""
    return frozenset(w for w in words if any(_similar(w, v) for v in by))


def truth_forms(truth: str) -> list[str]:
    """The truth, its form without parentheses and each parenthetical ("... (VSD)")."""
    truth = truth.strip().strip("\"'").strip()
    inner = [m.strip() for m in re.findall(r"\(([^)]*)\)", truth) if m.strip()]
    bare = re.sub(r"\([^)]*\)", " ", truth).strip()
    return [f for f in dict.fromkeys([bare, *inner, truth]) if f and content(f)]


@lru_cache(maxsize=262144)
def relate(given: str, truth: str) -> tuple[Relation, str]:
    """The relation of one given name to one form of the truth."""
    return _relate(given, truth, default_terminology())


def _relate(given: str, truth: str, terms: Terminology) -> tuple[Relation, str]:
    g, t = key(given), key(truth)
    if not g or not t:
        return "different", "nothing to compare"
    if g == t or compact(given) == compact(truth):
        return "same", "same name"
    icd = terms.relation(g, t)
    if icd in ("same", "broader"):
        return ("synonym" if icd == "same" else "broader"), f"ICD-10-CM: {icd}"
    g_in_t, t_in_g = _covered(g, t), _covered(t, g)
    if g_in_t == g and t_in_g == t:
        return "same", "same words up to spelling"
    if g_in_t == g:
        return "broader", "the answer's words are all in the truth"
    if t_in_g == t:
        extra = {w for w in g if w not in _covered(g, t)}
        if extra <= SOFT_QUALIFIERS:
            return "same", f"only qualifiers added: {' '.join(sorted(extra))}"
        return "narrower", f"the answer adds {' '.join(sorted(extra))}"
    if icd == "narrower":
        return "narrower", "ICD-10-CM: the answer is a subtype"
    if g_in_t:
        return "overlap", f"shared words: {' '.join(sorted(g_in_t))}"
    return "different", "no shared word"


def judge(given: str, truth: str) -> Judgement:
    """Step 2 for one extracted name against the correct answer."""
    best: tuple[Relation, str] = ("different", "no shared word")
    for form in truth_forms(truth):
        relation, reason = relate(given, form)
        if relation in ("same", "synonym", "broader"):
            return Judgement(True, relation, reason)
        if _RANK[relation] > _RANK[best[0]]:
            best = (relation, reason)
    return Judgement(False, best[0], best[1], sure=best[0] != "overlap")


_RANK: dict[Relation, int] = {"different": 0, "narrower": 1, "overlap": 2, "same": 3,
                              "synonym": 3, "broader": 3}
