"""What the build learns from the sources' concepts beyond their rows: the words ICD-10-CM
uses for body sites, the word forms (a noun and its adjective, two spellings of one word) that
names of one concept differ by, and the abbreviations the sources give for diseases.

Build time only (see ``tools/build_terminology.py``), on the :class:`.Concept` rows of
``tools/terminology_sources.py``; the grader reads what is learned from the bundled files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from pytest_agentclinic.grading.terminology import (
    CONDITION_SUFFIXES,
    FILLER,
    GENERIC,
    base_key,
    content,
    key,
)
from pytest_agentclinic.grading.terms.readings import ADJECTIVE_ENDINGS, NOUN_ENDINGS
from tools.terminology_sources import Concept, is_acronym, ontology

# --- body sites -------------------------------------------------------------------------

_SITE_PHRASE = re.compile(r"\b(?:of|in)\s+((?:the\s+)?"
                          r"(?:right|left|bilateral|unspecified|upper|lower)?"
                          r"\s*[a-z]+(?:\s+[a-z]+)?)")
_SIDED = re.compile(r"\b(?:right|left|bilateral)\s+([a-z]+(?:\s+[a-z]+)?)")
# Injuries, poisonings, external causes and encounter reasons say "of" of substances,
# vehicles and places: their phrases teach nothing about body sites.
_NOT_ANATOMY_CHAPTERS = tuple("STVWXYZ")
SITE_MIN_USES = 5
SITE_SHARE = 0.15


def site_words(concepts: Iterable[Concept]) -> frozenset[str]:
    """Words ICD-10-CM mostly uses for *where* a condition is ("... of lip", "of knee")."""
    sites: Counter[str] = Counter()
    uses: Counter[str] = Counter()
    for concept in concepts:
        if not concept.id.startswith("ICD:"):
            continue
        code = concept.id[4:]
        for _, name in concept.names:
            uses.update(content(name))
            lowered = name.lower()
            phrases = _SIDED.findall(lowered)
            if not code.startswith(_NOT_ANATOMY_CHAPTERS):
                phrases += _SITE_PHRASE.findall(lowered)
            for site in phrases:
                sites.update(w for w in content(site) if not _is_condition_word(w))
    return frozenset(w for w, n in sites.items()
                     if n >= SITE_MIN_USES and n >= SITE_SHARE * uses[w])


def _is_condition_word(word: str) -> bool:
    return word in GENERIC or (len(word) > 4 and word.endswith(CONDITION_SUFFIXES))


# --- word forms learned from the sources -------------------------------------------------

#: How many concepts, and how many independent sources (EFO counts as MONDO), must use two
#: words for one another before they are one word form.
FORM_MIN_CONCEPTS = 3
FORM_MIN_SOURCES = 2
#: A larger group of forms has drifted along a chain of pairs and is not taken.
FORM_MAX_GROUP = 4
#: Endings of an adjective made from a noun ("testicular", "ovarian", "uterine") and what a
#: noun may end in beyond the stem its adjective keeps ("test-is", "ovar-y", "uter-us",
#: "laryn-x", "sple-en"; "osteo-id" is no noun of "osteogenic"): the grader's own
#: (:func:`pytest_agentclinic.grading.terms.readings.noun_and_adjective`).


def word_form_pairs(concepts: Iterable[Concept]) -> dict[tuple[str, str], set[str]]:
    """Pairs of words that two names of one concept differ by, and nothing else ("torsion of
    the testis", "testicular torsion"), with the concepts that show them."""
    pairs: dict[tuple[str, str], set[str]] = {}
    for concept in concepts:
        keys = sorted({" ".join(sorted(base_key(n))) for _, n in concept.names} - {""})
        sets = [frozenset(k.split()) for k in keys[:40]]
        for i, a in enumerate(sets):
            for b in sets[i + 1:]:
                only_a, only_b = a - b, b - a
                if len(only_a) == 1 and len(only_b) == 1:
                    pair = (min(*only_a, *only_b), max(*only_a, *only_b))
                    pairs.setdefault(pair, set()).add(concept.id)
    return pairs


def is_word_form(a: str, b: str, conditions: AbstractSet[str] = frozenset()) -> bool:
    """Whether two words are forms of one word: a noun and its adjective ("ovary",
    "ovarian": the adjective keeps the noun's stem, all but a noun ending, and adds at most
    five letters), or two spellings (at most two letters apart, the first two letters and
    any disease ending kept: "generalised", "foetal", "disk"; not "internal" and
    "external", "dermatosis" and "dermatitis"). A noun in ``conditions`` (a disease named
    by one word: "hemorrhage", "cyst") has no adjective here: "hemorrhagic disease" and
    "cystic disease" are diseases of their own."""
    if not (a.isalpha() and b.isalpha()) or min(len(a), len(b)) < 4:
        return False
    if {a, b} & (GENERIC | FILLER):
        return False
    for noun, adjective in ((a, b), (b, a)):
        # A tumour's name ("lymphoma") has no adjective among the words it shares a stem
        # with ("lymphatic", "lymphoid").
        if (adjective.endswith(ADJECTIVE_ENDINGS) and len(noun) <= len(adjective)
                and noun not in conditions and not noun.endswith(CONDITION_SUFFIXES)):
            shared = len(_common_prefix(noun, adjective))
            if (shared >= 3 and noun[shared:] in NOUN_ENDINGS
                    and len(adjective) - shared <= 5):
                return True
    if a.endswith(ADJECTIVE_ENDINGS) != b.endswith(ADJECTIVE_ENDINGS):
        return False  # a noun and an adjective that are not its own ("hemorrhagic")
    a, b = _american(a), _american(b)
    if a[:2] != b[:2] or _ending(a) != _ending(b):
        return False
    return _distance(a, b) <= (1 if min(len(a), len(b)) < 6 else 2)


def _american(word: str) -> str:
    # British "ae" and "oe" ("caecum", "foetal", "gonorrhoea") are the American "e".
    return word.replace("ae", "e").replace("oe", "e")


def _ending(word: str) -> str:
    # Parasitic infestations end in "-iasis" or "-osis" alike (babesiosis, babesiasis).
    ending = next((s for s in CONDITION_SUFFIXES if word.endswith(s)), "")
    return "osis" if ending == "iasis" else ending


def mine_word_forms(concepts: Iterable[Concept]) -> dict[str, str]:
    """Variant -> canonical word, from the pairs many concepts of two sources show.

    Each group of forms takes the one most preferred names use.
    """
    concepts = list(concepts)
    pairs = word_form_pairs(concepts)
    root: dict[str, str] = {}

    def find(word: str) -> str:
        while root.setdefault(word, word) != word:
            word = root[word]
        return word

    # Diseases named by one word as written ("Hemorrhage", "Cysts"; not "Spleen Diseases").
    conditions = {w for c in concepts for g, n in c.names if g == "p" and " " not in n.strip()
                  for w in base_key(n)}
    for (a, b), idents in sorted(pairs.items()):
        sources = {ontology(i).replace("EFO", "MONDO") for i in idents}
        if (len(idents) >= FORM_MIN_CONCEPTS and len(sources) >= FORM_MIN_SOURCES
                and is_word_form(a, b, conditions)):
            ra, rb = find(a), find(b)
            if ra != rb:
                root[max(ra, rb)] = min(ra, rb)
    use: Counter[str] = Counter(w for c in concepts for g, n in c.names if g == "p"
                                for w in base_key(n))
    groups: dict[str, list[str]] = {}
    for word in root:
        groups.setdefault(find(word), []).append(word)
    forms: dict[str, str] = {}
    for members in groups.values():
        if len(members) > FORM_MAX_GROUP:
            continue  # a chain of pairs that drifted from one word to others

        canonical = max(sorted(members), key=lambda w: (use[w], -len(w)))
        forms.update({w: canonical for w in members if w != canonical})
    return dict(sorted(forms.items()))


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _distance(a: str, b: str) -> int:
    """Levenshtein distance (words are short)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


# --- abbreviations ----------------------------------------------------------------------

# An acronym in parentheses or brackets that ends a name abbreviates it ("discoid lupus
# erythematosus (DLE)", "Severe combined immunodeficiency [SCID]"); inside a name it may
# abbreviate only some of its words ("multiple endocrine neoplasia (MEN) IIa").
_END_ACRONYM = re.compile(r"[(\[]([A-Za-z0-9]{2,8})[)\]]\s*(?:NOS)?\s*$")
_ENCLOSED = re.compile(r"\s*[(\[][^)\]]*[)\]]")
#: Letters an abbreviation is compared by: 2 to 8 of them ("SLE", "MEN2A").
_ABBREVIATION = re.compile(r"^[a-z0-9]{2,8}$")


def abbreviations(concepts: Iterable[Concept], clusters: dict[str, str]) -> dict[str, list[str]]:
    """Abbreviation (lower case) -> the names of the diseases the sources give it for, one
    per disease (concepts of one cluster, or of one name, count once).

    Taken from the acronyms among the sources' synonyms and from a parenthesis or an
    ICD-10-CM bracket that ends a name and holds one.
    """
    found: dict[str, dict[str, str]] = {}
    for concept in concepts:
        label = " ".join(_ENCLOSED.sub(" ", concept.label).split())
        if not label or is_acronym(label):
            continue
        written = set(concept.acronyms)
        for _, name in concept.names:
            end = _END_ACRONYM.search(name)
            if end and is_acronym(end.group(1)):
                written.add(end.group(1))
        for acronym in written:
            letters = acronym.lower()
            if _ABBREVIATION.match(letters):
                found.setdefault(letters, {}).setdefault(clusters[concept.id], label)
    out: dict[str, list[str]] = {}
    for letters, named in sorted(found.items()):
        # Concepts of several clusters that share a name are one disease the clustering
        # kept apart: one name per key.
        by_key = {" ".join(sorted(key(label))): label for label in sorted(named.values())}
        out[letters] = sorted(by_key.values())
    return out
