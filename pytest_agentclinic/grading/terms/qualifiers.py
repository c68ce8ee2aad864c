"""The words that qualify a disease's name without naming another disease: how severe, how
long, how sure or which side (neutral), and where, at what age, from what cause or of which
kind (narrowing). Stage 2 (relate) reads an answer that differs from the truth only by these
as the truth, or as a kind of it (:mod:`.equivalence`, :mod:`.concurrent`)."""

from __future__ import annotations

import re

#: Words that say how severe, how long, how sure or which side, not what or where: an answer
#: adding only these to the truth is still the truth ("severe acute pericarditis").
NEUTRAL_QUALIFIERS = frozenset({
    "left", "right", "bilateral", "unilateral", "sided", "side", "mild", "moderate", "severe",
    "early", "late", "new", "onset", "recurrent", "suspected", "isolated", "simple", "classic",
    "classical", "typical", "true", "active", "significant", "symptomatic", "clinical",
    "presumed", "uncomplicated", "likely", "possible", "current", "lesion", "case", "stage",
    "state", "episode", "acute", "suspicious", "malignant", "reaction",
    # Latin names keep "chronica" ("chondrodermatitis nodularis chronica helicis"); English
    # "chronic" often names another disease ("chronic pancreatitis"), and is no qualifier
    "chronica",
    "first", "second", "third", "fourth", "fifth",
})

#: Neutral words that outside cancer name a distinct form, not a degree ("malignant
#: hyperthermia" is no hyperthermia): where the terminology knows both names and not as one
#: disease, its sources decide, not the word (docs/grading.md, *Broader and narrower*).
DISTINCT_FORMS = frozenset({"malignant"})

#: Words that say where, at what age, from what cause or of which kind. The dermatologists
#: who validated CRAFT-MD's grader called an answer adding one narrower, so wrong
#: ("cutaneous leishmaniasis" for leishmaniasis, "infantile seborrheic dermatitis" for
#: seborrheic dermatitis); a truth adding one is a kind of the answer, which is right.
NARROWING_QUALIFIERS = frozenset({
    "adult", "pediatric", "childhood", "neonatal", "infantile", "juvenile", "newborn",
    "infant", "child", "adolescent", "elderly", "senile", "infantum",
    "primary", "idiopathic", "benign", "related", "induced", "acquired", "community",
    "congenital", "bacterial", "viral", "infectious", "infective", "infected", "traumatic",
    "postpartum", "intrauterine", "focal", "localized", "generalized", "disseminated",
    # Latin sites of skin diseases ("tinea pedis") and other sites
    "pedis", "manuum", "corporis", "capitis", "cruris", "faciei", "barbae", "unguium",
    "versicolor", "lumbar", "cervical", "thoracic", "sacral", "vulvar", "vaginal", "oral",
    "nasal", "facial", "heart",
})

#: Every qualifier: a truth that adds only these is the answer's disease of some kind.
SOFT_QUALIFIERS = NEUTRAL_QUALIFIERS | NARROWING_QUALIFIERS


#: The soft qualifiers that say where: a name of one word cannot drop them.
PLACES = frozenset({"heart", "lumbar", "cervical", "thoracic", "sacral", "vulvar", "vaginal",
                    "oral", "nasal", "facial", "pedis", "manuum", "corporis", "capitis",
                    "cruris", "faciei", "barbae", "unguium", "left", "right", "bilateral",
                    "unilateral"})


#: Nouns that name no place by themselves, only the one the word before them names: "the
#: perianal region", "the epidural space", "the hepatobiliary system" are the perianal, the
#: epidural, the hepatobiliary. An answer adding or dropping one names the same place.
PLACE_NOUNS = frozenset({"region", "area", "space", "system", "zone"})


#: Leading words of severity, course or side ("Severe", "Recurrent left-sided"): bounded, at
#: most three.
_LEAD = re.compile(r"^\s*(?:(?:mild|moderate|severe|recurrent|bilateral|left|right|"
                   r"sided|early|late|suspected|presumed)[-\s]+){1,3}(?=\S)", re.I)


def leading_qualifiers(name: str) -> tuple[str, str]:
    """The words of severity, course or side that open ``name``, and the name behind them
    ("Severe osteoblastoma": "Severe ", "osteoblastoma"); ("", name) when none do. They
    narrow nothing (docs/grading.md, *Broader and narrower*), so a slip and a near-miss
    sibling are read behind them (red team round 16)."""
    lead = _LEAD.match(name)
    return ("", name) if lead is None else (lead[0], name[lead.end():])
