"""Issue 31: the project's own glossaries of disease names, lay names
(grading/data/lay_names.tsv) and clinical synonyms a textbook states
(grading/data/clinical_synonyms.tsv), read by one reader (grading/terms/glossaries.py;
docs/terminology.md "Lay names", "Clinical synonyms"). Each row resolves to a known concept;
a name scores for its disease and not for a sibling; in a hedge or a differential it reads as
other names do."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pytest_agentclinic.core.errors import InputError
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.terminology import GENERIC, key
from pytest_agentclinic.grading.terminology_memory import load_memory
from pytest_agentclinic.grading.terminology_table import DATA_FILE
from pytest_agentclinic.grading.terms import glossaries
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.equivalence import judge
from pytest_agentclinic.grading.terms.glossaries import GLOSSARIES, Glossary, glossary

needs_table = pytest.mark.skipif(not DATA_FILE.exists(), reason=f"{DATA_FILE} not built")
each_glossary = pytest.mark.parametrize("source", GLOSSARIES, ids=lambda g: g.path.stem)


@each_glossary
def test_each_glossary_states_its_rules_and_has_its_size(source: Glossary) -> None:
    head = source.path.read_text(encoding="utf-8").split("\n\n")[0]
    assert "general clinical" in head and "name_classes.tsv" in head
    assert 200 <= len(source.rows()) <= 400
    # a name is a name of its own, never its clinical name again
    assert all(key(name) != key(clinical) for name, clinical in source.rows().items())


def test_the_glossaries_are_read_as_one() -> None:
    assert len(glossary()) == sum(len(source.rows()) for source in GLOSSARIES)


@needs_table
def test_every_clinical_name_is_one_the_terminology_knows() -> None:
    terms = default_terminology()
    unknown = [c for c in glossary().values() if not terms.named_by_sources(key(c))]
    assert unknown == []


@needs_table
def test_no_name_is_a_name_of_a_related_disease() -> None:
    """A name no source gives reads as its clinical name; one a source gives keeps its
    concepts and may stay only when the sources do not relate it to the disease otherwise
    (a sibling, a wider class, a kind of it: docs/terminology.md)."""
    terms = default_terminology()
    wrong = []
    for name, clinical in glossary().items():
        name_key = key(name)
        assert name_key and not name_key <= GENERIC, name
        if not terms.named_by_sources(name_key):
            continue
        link = terms.link(name_key, key(clinical))
        if link is not None and link.kind != "synonym":
            wrong.append((name, clinical, link.kind))
    assert wrong == []


@needs_table
def test_a_name_no_source_gives_denotes_its_clinical_concepts() -> None:
    terms = default_terminology()
    for name, clinical in (("piles", "hemorrhoids"), ("Hutchinson freckle", "lentigo maligna"),
                           ("discoid eczema", "nummular dermatitis")):
        assert not terms.named_by_sources(key(name))
        assert terms.concepts(name)[1] == terms.concepts(clinical)[1]
    assert terms.one_word_name("pile") and terms.one_word_name("clap")
    assert terms.one_word_name("basalioma") and terms.one_word_name("framboesia")
    # a word left when a generic head is dropped names nothing alone
    assert not terms.one_word_name("viking")


# Pairs asked both ways: names no source gives ("piles", "Sutton nevus"), and names a source
# gives to a concept of its own ("bunion": MeSH's Bunion beside Hallux Valgus; "Bowen
# disease": MeSH's beside MONDO's squamous cell carcinoma in situ of the skin). Each textbook
# pair scored 0, or was unsure, before its glossary.
LAY = [("piles", "Hemorrhoids"), ("glue ear", "Otitis media with effusion"),
       ("head lice", "Pediculosis capitis"), ("the clap", "Gonorrhea"),
       ("bunion", "Hallux valgus"), ("diaper rash", "Diaper dermatitis"),
       ("shaking palsy", "Parkinson disease"), ("water on the brain", "Hydrocephalus"),
       ("tooth decay", "Dental caries"), ("swimmer's ear", "Otitis externa")]
TEXTBOOK = [("epidermal inclusion cyst", "Epidermoid cyst"), ("trichilemmal cyst", "Pilar cyst"),
            ("Bowen disease", "Squamous cell carcinoma in situ of skin"),
            ("Hutchinson freckle", "Lentigo maligna"), ("Sutton nevus", "Halo nevus"),
            ("discoid eczema", "Nummular dermatitis"), ("molluscum sebaceum", "Keratoacanthoma"),
            ("Vaquez disease", "Polycythemia vera"),
            ("palmar fibromatosis", "Dupuytren contracture"),
            ("Wenckebach block", "Mobitz type I atrioventricular block"),
            ("expressive aphasia", "Broca aphasia"),
            ("spermatic cord torsion", "Testicular torsion")]


@needs_table
@pytest.mark.parametrize(("name", "clinical"), LAY + TEXTBOOK)
def test_a_name_scores_for_its_disease_both_ways(name: str, clinical: str) -> None:
    grader = CraftMDGrader(policy="strict")
    for answer, truth in ((name, clinical), (clinical, name)):
        verdict = judge(answer, truth)
        assert (verdict.correct, verdict.sure) == (True, True), (answer, truth)
        graded = grader.grade_frq(f"The diagnosis is {answer}.", truth)
        assert (graded.verdict, graded.sure) == (1, True), (answer, truth)


SIBLINGS = [("head lice", "Pediculosis pubis"), ("pubic lice", "Pediculosis capitis"),
            ("German measles", "Measles"), ("knock knees", "Genu varum"),
            ("funnel chest", "Pectus carinatum"), ("long-sightedness", "Myopia"),
            ("underactive thyroid", "Hyperthyroidism"), ("wall eye", "Esotropia"),
            ("scalp ringworm", "Tinea pedis"), ("bunion", "Hallux rigidus"),
            ("piles", "Anal fissure"), ("glue ear", "Otitis externa"),
            # the sources keep the sebaceous cyst apart from the epidermoid cyst
            ("epidermal inclusion cyst", "Sebaceous cyst"),
            ("trichilemmal cyst", "Epidermoid cyst"), ("expressive aphasia", "Wernicke aphasia"),
            ("receptive aphasia", "Broca aphasia"), ("discoid eczema", "Atopic dermatitis"),
            ("Sutton nevus", "Blue nevus"), ("Bowen disease", "Basal cell carcinoma"),
            ("Vaquez disease", "Essential thrombocythemia"),
            ("palmar fibromatosis", "Plantar fibromatosis")]


@needs_table
@pytest.mark.parametrize(("name", "other"), SIBLINGS)
def test_a_name_does_not_score_for_a_sibling(name: str, other: str) -> None:
    for answer, truth in ((name, other), (other, name)):
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
@each_glossary
def test_siblings_under_the_glossarys_concepts_are_not_made_one(
        source: Glossary, children: dict[str, list[str]]) -> None:
    """The synonym benchmark's sibling check on each glossary: the preferred names of each
    row's disease's siblings in the sources' hierarchies are no more the name's synonyms than
    they are its clinical name's (a name no source gives), and no sibling is the same as a
    name a source gives by the glossary's statement (its pair is the row's alone)."""
    terms = default_terminology()
    asked, wrong = 0, []
    for name, clinical in source.rows().items():
        given = terms.named_by_sources(key(name))
        for sibling in itertools.islice(_sibling_names(clinical, children), 3):
            asked += 1
            # each way round, against the same pair with the clinical name for the row's
            for (answer, truth), (by_name, truth_name) in (
                    ((name, sibling), (clinical, sibling)), ((sibling, name), (sibling, clinical))):
                verdict = judge(answer, truth)
                by_glossary = ("glossary" in verdict.reason if given else
                               verdict.correct and not judge(by_name, truth_name).correct)
                if by_glossary:
                    wrong.append((answer, truth))
    assert asked > 100 and wrong == []


def _sibling_names(clinical: str, children: dict[str, list[str]]) -> list[str]:
    """Preferred names of the concepts under a parent of the disease, neither of its cluster
    nor under a concept of it (ICD-10-CM's "unspecified" code has its category above it)."""
    terms = default_terminology()
    idents = sorted(terms.concepts(clinical)[1])
    own = {terms.cluster(i) for i in idents}
    names = {terms.backend.label_of(child) for ident in idents
             for parent in terms.backend.parents_of(ident) if terms.cluster(parent) not in own
             for child in children.get(parent, ()) if terms.cluster(child) not in own}
    return sorted(names)


@needs_table
@pytest.mark.parametrize(("name", "clinical"), [("piles", "Hemorrhoids"),
                                                ("glue ear", "Otitis media with effusion"),
                                                ("bunion", "Hallux valgus"),
                                                ("Hutchinson freckle", "Lentigo maligna"),
                                                ("epidermal inclusion cyst", "Epidermoid cyst"),
                                                ("Bowen disease",
                                                 "Squamous cell carcinoma in situ of skin")])
@pytest.mark.parametrize("shape", [
    "Probably {name}.",
    "I suspect {name}, but cannot be sure without an examination.",
    "Differential diagnosis: 1. {name} 2. Anal fissure 3. Pilonidal sinus",
    "Most likely {name}; differential includes contact dermatitis.",
    "It is not {name}.",
])
def test_a_name_in_a_hedge_or_differential_reads_as_its_clinical_name(
        name: str, clinical: str, shape: str) -> None:
    for policy in ("strict", "paper"):
        grader = CraftMDGrader(policy=policy)
        by_name = grader.grade_frq(shape.format(name=name), clinical)
        by_clinical = grader.grade_frq(shape.format(name=clinical), clinical)
        assert (by_name.verdict, by_name.sure) == (by_clinical.verdict, by_clinical.sure), policy


def test_a_name_in_two_glossaries_is_refused(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    first.write_text("piles\themorrhoids\n", encoding="utf-8")
    second.write_text("# a note\npiles\tanal fissure\n", encoding="utf-8")
    monkeypatch.setattr(glossaries, "GLOSSARIES",
                        (Glossary(first, "the lay name"), Glossary(second, "a synonym")))
    glossaries._entries.cache_clear()
    try:
        with pytest.raises(InputError, match=r"given in first\.tsv too") as raised:
            glossaries.glossary()
        assert raised.value.line == 2
    finally:
        monkeypatch.undo()
        glossaries._entries.cache_clear()
