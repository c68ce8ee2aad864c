"""The leave-one-source-out setting of ``bench_synonyms.py``: each source's pairs and the
terminology of the other sources.

A source's synonym pairs (a preferred name and one of its other names) and sibling pairs
(preferred names of two concepts under one parent), sampled in a fixed order by a hash of
their names; the clusters, optionally joined by biomappings' curated matches; the terminology
of every source but one, with what the build learns from the sources (word forms, eponyms,
abbreviations) learned again without it; and the grader's verdict on a pair with such a
terminology in place of the bundled one.
"""

from __future__ import annotations

import hashlib
import re
import sys
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

# The build helpers live in the repository's tools/, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_agentclinic.core.text import clear_caches
from pytest_agentclinic.grading.terminology import (
    icd_name_forms,
    key,
    set_word_forms,
    word_forms,
)
from pytest_agentclinic.grading.terminology_memory import MemoryIndex
from pytest_agentclinic.grading.terminology_table import Row
from pytest_agentclinic.grading.terms import concepts as concepts_module
from pytest_agentclinic.grading.terms import eponym_words, readings
from pytest_agentclinic.grading.terms.concepts import Terminology
from pytest_agentclinic.grading.terms.eponym_words import eponyms_in
from pytest_agentclinic.grading.terms.equivalence import judge
from tools.terminology_mining import abbreviations, mine_word_forms, site_words
from tools.terminology_sources import Concept, link_clusters, table_rows

#: Sources that are one witness: EFO's disease branch is MONDO's.
WITNESS = {"EFO": "MONDO"}
_BRACKET = re.compile(r"\[([^\]]*)\]")
_NOTE = re.compile(r"(?:\(|,\s*)(?:formerly|included)\)?\s*$", re.I)


def witness(concept: Concept) -> str:
    """The source a concept's row stands for (EFO counts as MONDO)."""
    source = concept.id.split(":")[0]
    return WITNESS.get(source, source)


def _rank(*parts: str) -> str:
    return hashlib.sha1("\t".join(parts).encode()).hexdigest()


def _written(name: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", name.lower()))


def synonym_pairs(concepts: list[Concept], source: str, *,
                  stated: bool = True) -> list[tuple[str, str]]:
    """(synonym, preferred name) pairs of one source, different as written.

    ``stated`` (the definition since round 3): pairs a source states as other names of one
    disease. For ICD-10-CM that is a square bracket ending a *disease* code's description
    (chapters A to R: not injuries, poisonings, external causes or encounter reasons, whose
    brackets rename a drug or a bone, "psychodysleptics [hallucinogens]", "trapezoid [smaller
    multangular]"), each bracket once (a bracket repeated over the codes that split one
    condition by site or side is one statement, not 18); for MONDO, not a synonym carrying
    OMIM's note "included" or "formerly". Without ``stated``, the round-2
    definition: every bracketed name form of every code, a name each time it is repeated.
    """
    pairs: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    for c in concepts:
        # MeSH's pairs are its descriptors' (its supplementary records, "MESH:C...", added
        # in round 3, are left out with it but sampled from no more than before).
        if witness(c) != source or c.id.startswith(("EFO:", "MESH:C")):
            continue
        if source == "ICD":
            label = " ".join(_BRACKET.sub(" ", c.label).split())
            if stated:
                if c.id[4] in "STUVWXYZ":
                    continue
                names = [n for n in _ending_brackets(c.label) if n.lower() not in seen]
                seen.update(n.lower() for n in names)
            else:
                # The name forms before the last two (the description with and without its
                # parentheses); its inclusion terms are as often kinds of the code's
                # condition as other names of it.
                names = list(icd_name_forms(c.label))[:-2]
        else:
            # OMIM's notes in MONDO's synonyms mark other entities, not names of this one: a
            # condition "included" in the entry, a name a subtype had "formerly".
            names = [n for g, n in c.names if g != "p" and not (stated and _NOTE.search(n))]
            label = c.label
        for name in names:
            # Different as written, whatever the normaliser makes of them: a pair it folds
            # into one key is found, not left out of the sample.
            if key(name) and key(label) and _written(name) != _written(label):
                pairs.setdefault((name, label), _rank(c.id, name))
    return sorted(pairs, key=pairs.__getitem__)


def _ending_brackets(label: str) -> list[str]:
    """The alternative names of a whole ICD-10-CM description: a bracket that ends it, or
    ends a part before a comma (not an acronym, nor a scope such as "[any part]")."""
    names = []
    for name in icd_name_forms(label):
        match = next((m for m in _BRACKET.finditer(label) if m.group(1).strip() == name), None)
        if match and label[match.end():].lstrip()[:1] in ("", ",", "("):
            names.append(name)
    return names


#: ICD-10-CM codes that split one condition by side, trimester, degree or encounter (and
#: its chapters of injuries and external causes) are no sibling diseases: the grader reads an
#: answer that adds or drops where as the same condition, by design.
_ICD_SPLIT = re.compile(r"\b(?:left|right|bilateral|unspecified|trimester|degree|other|"
                        r"encounter|sequela)\b", re.I)


def sibling_pairs(concepts: list[Concept], source: str) -> list[tuple[str, str]]:
    """Preferred names of two concepts of one parent in the source, of different keys."""
    children: dict[str, list[Concept]] = {}
    for c in concepts:
        if c.id.startswith("ICD:") and (c.id[4] in "STVWXYZ" or _ICD_SPLIT.search(c.label)):
            continue
        if witness(c) == source and not c.id.startswith("EFO:"):
            for parent in c.parents:
                children.setdefault(parent, []).append(c)
    pairs: dict[tuple[str, str], str] = {}
    for kids in children.values():
        kids = sorted(kids, key=lambda c: c.id)
        for i, a in enumerate(kids):
            for b in kids[i + 1:]:
                if key(a.label) and key(b.label) and key(a.label) != key(b.label):
                    pairs.setdefault((a.label, b.label), _rank(a.id, b.id))
    return sorted(pairs, key=pairs.__getitem__)


#: biomappings' curated mappings (the data CC0 1.0, the package MIT), read from its wheel.
MAPPINGS_MEMBER = "biomappings/resources/positive.sssom.tsv"
_MAPPED = {"mesh": "MESH", "doid": "DOID", "mondo": "MONDO", "efo": "EFO"}


def curated_matches(wheel: Path) -> list[tuple[str, str]]:
    """The exact matches between concepts of the sources that biomappings' curators made
    by hand (``skos:exactMatch``, ``semapv:ManualMappingCuration``), as the table's ids."""
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(MAPPINGS_MEMBER).decode()
    matches = []
    for line in text.splitlines():
        fields = line.split("\t")
        if (len(fields) < 6 or fields[2] != "skos:exactMatch"
                or not fields[5].endswith("ManualMappingCuration")):
            continue
        (a, a_id), (b, b_id) = (f.split(":", 1) for f in (fields[0], fields[3]))
        if a in _MAPPED and b in _MAPPED:
            matches.append((f"{_MAPPED[a]}:{a_id}", f"{_MAPPED[b]}:{b_id}"))
    return matches


def clusters_with(concepts: list[Concept],
                  matches: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The build's clusters, then those two curated matches join (never two concepts of one
    ontology in a cluster, the build's own rule): what the mappings would add."""
    clusters = link_clusters(concepts)
    members: dict[str, set[str]] = {}
    for ident, cluster in clusters.items():
        members.setdefault(cluster, set()).add(ident)
    for a, b in matches:
        if a not in clusters or b not in clusters or clusters[a] == clusters[b]:
            continue
        keep, drop = sorted((clusters[a], clusters[b]))
        if _ontologies(members[keep]) & _ontologies(members[drop]):
            continue
        for ident in members[drop]:
            clusters[ident] = keep
        members[keep] |= members.pop(drop)
    return clusters


def _ontologies(idents: set[str]) -> set[str]:
    # as link_clusters counts them: ICD-10-CM may name one disease twice, and a MeSH
    # supplementary record is no descriptor
    return {"MESH-SCR" if i.startswith("MESH:C") else i.split(":")[0] for i in idents} - {"ICD"}


def terminology(concepts: list[Concept], rows: dict[str, Row], leave_out: str | None,
                matches: Sequence[tuple[str, str]] = ()) -> Terminology:
    """The terminology of every source but ``leave_out``, clusters linked again without it
    (the keys as ``rows`` computed them: with the bundled word forms)."""
    kept = [c for c in concepts if witness(c) != leave_out]
    clusters = clusters_with(kept, matches)
    held = (Row(r.id, clusters[r.id], r.parents, r.grades, r.keys, r.names)
            for r in (rows[c.id] for c in kept if c.id in rows))
    return Terminology(MemoryIndex(held, site_words(kept)))


@contextmanager
def held_out(concepts: list[Concept], leave_out: str,
             matches: Sequence[tuple[str, str]] = ()) -> Iterator[Terminology]:
    """The terminology of every source but ``leave_out`` with what the build learns from the
    sources learned again without it too: the word forms (and so every key), the eponyms
    and the abbreviations. The bundled files are learned from every source, the one left
    out among them: its own pairs would be found through what it taught them. Restored on
    leaving."""
    kept = [c for c in concepts if witness(c) != leave_out]
    shipped_forms = dict(word_forms())
    set_word_forms(mine_word_forms(kept))
    # The grader's modules read them through these names (each calls ``eponym_words.eponyms``).
    places = [(eponym_words, "eponyms"), (readings, "_abbreviations")]
    saved = [getattr(module, name) for module, name in places]
    try:
        clusters = clusters_with(kept, matches)
        rows = list(table_rows(kept, clusters))
        learned = eponyms_in(name for row in rows for name in row.names)
        found = {letters: tuple(names)
                 for letters, names in abbreviations(kept, clusters).items()}
        for (module, name), value in zip(places, [learned, found], strict=True):
            setattr(module, name, lambda *_, value=value: value)
        yield Terminology(MemoryIndex(rows, site_words(kept)))
    finally:
        for (module, name), value in zip(places, saved, strict=True):
            setattr(module, name, value)
        set_word_forms(shipped_forms)


@contextmanager
def grading_with(terms: Terminology) -> Iterator[None]:
    """Every lookup of the grader answered by ``terms`` (its caches emptied before and after)."""
    loaded = concepts_module._loaded
    clear_caches()
    concepts_module._loaded = lambda: terms  # type: ignore[assignment]
    try:
        yield
    finally:
        concepts_module._loaded = loaded
        clear_caches()


def same(given: str, truth: str) -> bool:
    """Whether the grader scores ``given`` for ``truth`` as the same disease ("same" or
    "synonym"; sure or not: offline, an unsure synonym scores too)."""
    verdict = judge(given, truth)
    return verdict.correct and verdict.relation in ("same", "synonym")


def judge_pairs(pairs: list[tuple[str, str]], held: Terminology) -> list[bool]:
    """Whether each pair is found with ``held`` as the terminology."""
    with grading_with(held):
        return [same(a, b) for a, b in pairs]
