"""Issue 31: lay names of diseases, the project's own glossary (grading/data/lay_names.tsv,
docs/terminology.md "Lay names"). Each row resolves to a known concept; a lay name scores for
its disease and not for a sibling; in a hedge or a differential it reads as other names do."""

from __future__ import annotations

import itertools

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.terminology import GENERIC, key
from pytest_agentclinic.grading.terminology_memory import load_memory
from pytest_agentclinic.grading.terminology_table import DATA_FILE
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.equivalence import judge
from pytest_agentclinic.grading.terms.lay_names import LAY_NAMES_FILE, glossary

needs_table = pytest.mark.skipif(not DATA_FILE.exists(), reason=f"{DATA_FILE} not built")


def test_the_glossary_states_its_rules_and_has_its_size() -> None:
    head = LAY_NAMES_FILE.read_text(encoding="utf-8").split("\n\n")[0]
    assert "general clinical usage" in head and "name_classes.tsv" in head
    assert 200 <= len(glossary()) <= 400
    # a lay name is a name of its own, never its clinical name again
    assert all(key(lay) != key(clinical) for lay, clinical in glossary().items())


@needs_table
def test_every_clinical_name_is_one_the_terminology_knows() -> None:
    terms = default_terminology()
    unknown = [c for c in glossary().values() if not terms.named_by_sources(key(c))]
    assert unknown == []


@needs_table
def test_no_lay_name_is_a_name_of_another_disease() -> None:
    """A lay name no source gives reads as its clinical name; one a source gives keeps its
    concepts and may stay only when the sources do not relate it to the disease otherwise
    (a sibling, a wider class, a kind of it: docs/terminology.md)."""
    terms = default_terminology()
    wrong = []
    for lay, clinical in glossary().items():
        lay_key = key(lay)
        assert lay_key and not lay_key <= GENERIC, lay
        if not terms.named_by_sources(lay_key):
            continue
        link = terms.link(lay_key, key(clinical))
        if link is not None and link.kind != "synonym":
            wrong.append((lay, clinical, link.kind))
    assert wrong == []


@needs_table
def test_a_lay_name_no_source_gives_denotes_its_clinical_concepts() -> None:
    terms = default_terminology()
    assert not terms.named_by_sources(key("piles"))
    assert terms.concepts("piles")[1] == terms.concepts("hemorrhoids")[1]
    assert terms.one_word_name("pile") and terms.one_word_name("clap")
    # a word left when a generic head is dropped names nothing alone
    assert not terms.one_word_name("viking")


# Pairs asked both ways: lay names no source gives ("piles"), and lay names a source gives to
# a concept of its own ("bunion": MeSH's Bunion beside Hallux Valgus).
LAY = [("piles", "Hemorrhoids"), ("glue ear", "Otitis media with effusion"),
       ("head lice", "Pediculosis capitis"), ("the clap", "Gonorrhea"),
       ("bunion", "Hallux valgus"), ("diaper rash", "Diaper dermatitis"),
       ("shaking palsy", "Parkinson disease"), ("water on the brain", "Hydrocephalus"),
       ("tooth decay", "Dental caries"), ("swimmer's ear", "Otitis externa")]


@needs_table
@pytest.mark.parametrize(("lay", "clinical"), LAY)
def test_a_lay_name_scores_for_its_disease_both_ways(lay: str, clinical: str) -> None:
    grader = CraftMDGrader(policy="strict")
    for answer, truth in ((lay, clinical), (clinical, lay)):
        verdict = judge(answer, truth)
        assert (verdict.correct, verdict.sure) == (True, True), (answer, truth)
        graded = grader.grade_frq(f"The diagnosis is {answer}.", truth)
        assert (graded.verdict, graded.sure) == (1, True), (answer, truth)


SIBLINGS = [("head lice", "Pediculosis pubis"), ("pubic lice", "Pediculosis capitis"),
            ("German measles", "Measles"), ("knock knees", "Genu varum"),
            ("funnel chest", "Pectus carinatum"), ("long-sightedness", "Myopia"),
            ("underactive thyroid", "Hyperthyroidism"), ("wall eye", "Esotropia"),
            ("scalp ringworm", "Tinea pedis"), ("bunion", "Hallux rigidus"),
            ("piles", "Anal fissure"), ("glue ear", "Otitis externa")]


@needs_table
@pytest.mark.parametrize(("lay", "other"), SIBLINGS)
def test_a_lay_name_does_not_score_for_a_sibling(lay: str, other: str) -> None:
    for answer, truth in ((lay, other), (other, lay)):
        assert not judge(answer, truth).correct, (answer, truth)
        graded = CraftMDGrader(policy="strict").grade_frq(f"The diagnosis is {answer}.", truth)
        assert graded.verdict == 0, (answer, truth)


@pytest.fixture(scope="module")
def children() -> dict[str, list[str]]:
    """Each concept's children in its own source (the table read into memory once)."""
    out: dict[str, list[str]] = {}
    for child, parents in load_memory(DATA_FILE).parents.items():
        for parent in parents:
            out.setdefault(parent, []).append(child)
    return out


@needs_table
def test_siblings_under_the_glossarys_concepts_are_not_made_one(
        children: dict[str, list[str]]) -> None:
    """The synonym benchmark's sibling check on the glossary: for each lay name no source
    gives, the preferred names of its disease's siblings in the sources' hierarchies are no
    more its synonyms than they are its clinical name's."""
    terms = default_terminology()
    asked, wrong = 0, []
    for lay, clinical in glossary().items():
        if terms.named_by_sources(key(lay)):
            continue
        for sibling in itertools.islice(_sibling_names(clinical, children), 3):
            asked += 1
            # each way round, against the same pair with the clinical name for the lay one
            for (answer, truth), (by_name, truth_name) in (
                    ((lay, sibling), (clinical, sibling)), ((sibling, lay), (sibling, clinical))):
                if judge(answer, truth).correct and not judge(by_name, truth_name).correct:
                    wrong.append((answer, truth))
    assert asked > 100 and wrong == []


def _sibling_names(clinical: str, children: dict[str, list[str]]) -> list[str]:
    """Preferred names of the concepts under a parent of the disease, not of its cluster."""
    terms = default_terminology()
    idents = sorted(terms.concepts(clinical)[1])
    own = {terms.cluster(i) for i in idents}
    names = {terms.label(child) for ident in idents
             for parent in terms.backend.parents_of(ident)
             for child in children.get(parent, ()) if terms.cluster(child) not in own}
    return sorted(names)


@needs_table
@pytest.mark.parametrize(("lay", "clinical"), [("piles", "Hemorrhoids"),
                                               ("glue ear", "Otitis media with effusion"),
                                               ("bunion", "Hallux valgus")])
@pytest.mark.parametrize("shape", [
    "Probably {name}.",
    "I suspect {name}, but cannot be sure without an examination.",
    "Differential diagnosis: 1. {name} 2. Anal fissure 3. Pilonidal sinus",
    "Most likely {name}; differential includes contact dermatitis.",
    "It is not {name}.",
])
def test_a_lay_name_in_a_hedge_or_differential_reads_as_its_clinical_name(
        lay: str, clinical: str, shape: str) -> None:
    for policy in ("strict", "paper"):
        grader = CraftMDGrader(policy=policy)
        by_lay = grader.grade_frq(shape.format(name=lay), clinical)
        by_name = grader.grade_frq(shape.format(name=clinical), clinical)
        assert (by_lay.verdict, by_lay.sure) == (by_name.verdict, by_name.sure), policy
