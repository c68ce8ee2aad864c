"""Other readings of a name the terminology does not know whole (grading/terms/readings.py): an
abbreviation spelled out by the other name's initials, and the known names made of a name's
own words. Each reading counts only when the terminology knows what it gives."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.terms.concepts import Terminology, default_terminology
from pytest_agentclinic.grading.terms.equivalence import judge
from pytest_agentclinic.grading.terms.readings import ambiguous, cores, expansions, spelled_out


@pytest.fixture(scope="module")
def terms() -> Terminology:
    return default_terminology()


def test_an_abbreviation_opening_a_name_is_spelled_out_by_the_other_names_initials(
        terms: Terminology) -> None:
    written = spelled_out("EBS-Dowling Meara", "epidermolysis bullosa simplex", terms)
    assert written == "epidermolysis bullosa simplex, Dowling Meara"
    assert terms.known(written)


@pytest.mark.parametrize(("name", "other"), [
    ("AD flare", "atopic dermatitis"),           # two letters: "AD" reads two ways
    ("XBS-Dowling Meara", "epidermolysis bullosa simplex"),  # spells nothing of the other
    ("EBS-Smith Jones", "epidermolysis bullosa simplex"),    # the name so written is unknown
    ("psoriasis", "plaque psoriasis"),           # a known name is read as written
])
def test_no_abbreviation_is_spelled_out_unless_the_terminology_knows_the_result(
        terms: Terminology, name: str, other: str) -> None:
    assert spelled_out(name, other, terms) is None


def test_the_cores_of_an_unknown_name_are_the_largest_known_names_of_its_words(
        terms: Terminology) -> None:
    found = cores("IgA-mediated small vessel vasculitis", terms)
    assert "iga vasculitis" in found
    assert all(terms.known(c) and c.endswith("vasculitis") for c in found)
    assert cores("psoriasis", terms) == ()  # known whole: no other reading


@pytest.mark.parametrize(("answer", "truth", "correct", "relation"), [
    # the truth's abbreviation spelled out: the answer is the disease above the named kind
    ("epidermolysis bullosa simplex", "EBS-Dowling Meara", True, "broader"),
    # a name of IgA vasculitis, which the truth's own words name with qualifiers
    ("Henoch-Schönlein purpura", "IgA-mediated small vessel vasculitis", True, "broader"),
    # a synonym of the known name the truth's words make, the rest of them a site
    ("Morton's neuroma", "intermetatarsal plantar nerve neuroma", True, "synonym"),
    ("glucagonoma", "Tumor of pancreatic alpha cells", True, "synonym"),
    # another kind under the same words is no broader name
    ("IgA nephropathy", "IgA-mediated small vessel vasculitis", False, None),
    # the answer's abbreviation spelled out by the truth's words
    ("PLEVA", "pityriasis lichenoides et varioliformis acuta", True, None),
])
def test_the_grader_relates_names_through_these_readings(
        answer: str, truth: str, correct: bool, relation: str | None) -> None:
    judged = judge(answer, truth)
    assert judged.correct is correct, judged.reason
    if relation is not None:
        assert judged.relation == relation


@pytest.mark.parametrize(("answer", "truth"), [
    # the sources give each for two diseases: the answer does not say which
    ("HSP", "Henoch-Schonlein purpura"),
    ("HSP", "hereditary spastic paraplegia"),
    ("BPD", "borderline personality disorder"),
])
def test_an_abbreviation_with_several_expansions_is_not_read_as_the_truth(
        answer: str, truth: str) -> None:
    assert len(expansions(answer)) >= 2
    judged = judge(answer, truth)
    assert not judged.correct, judged.reason


@pytest.mark.parametrize(("answer", "truth"), [
    ("DLE", "discoid lupus erythematosus"),  # one disease in the sources
    # the sources' two expansions are one disease and a kind of it
    ("PLEVA", "pityriasis lichenoides et varioliformis acuta"),
])
def test_an_abbreviation_of_one_disease_is_still_spelled_out(answer: str, truth: str) -> None:
    assert judge(answer, truth).correct


def test_expansions_that_the_terminology_links_are_one_disease(terms: Terminology) -> None:
    assert ambiguous("HSP", "Henoch-Schonlein purpura", terms)
    assert not ambiguous("PLEVA", "pityriasis lichenoides et varioliformis acuta", terms)


@pytest.mark.parametrize(("answer", "truth"), [
    ("AIH", "autoimmune hepatitis"),  # the sources give AIH for this disease alone
    ("SSc", "systemic sclerosis"),
    ("CF", "cystic fibrosis"),  # two capitals alone too (red team round 20)
])
def test_an_abbreviation_the_sources_give_for_one_disease_is_read_as_it(
        answer: str, truth: str) -> None:
    assert len(expansions(answer)) == 1
    assert judge(answer, truth).correct


@pytest.mark.parametrize("answer", [
    "MS",   # the shared table's ambiguous abbreviations stay as written
    "Aih",  # an abbreviation is written in capitals
])
def test_no_other_name_is_read_as_the_one_disease_of_an_abbreviation(answer: str) -> None:
    assert not judge(answer, "autoimmune hepatitis").correct
    assert spelled_out(answer, "myeloid sarcoma", default_terminology()) is None


@pytest.mark.parametrize(("given", "truth"), [
    # a binomial's genus shortened to its initial, as microbiology writes it after first use
    ("H. pylori gastritis", "Helicobacter pylori gastritis"),
    ("Helicobacter pylori gastritis", "H. pylori gastritis"),
    ("S. aureus pneumonia", "Staphylococcus aureus pneumonia"),
    ("C. difficile colitis", "Clostridioides difficile colitis"),
    ("E coli urinary tract infection", "Escherichia coli urinary tract infection"),
])
def test_a_genus_written_as_its_initial_is_the_genus_the_other_name_spells_out(
        given: str, truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)


@pytest.mark.parametrize(("given", "truth"), [
    # the initial of another genus, or another species of it
    ("S. aureus pneumonia", "Streptococcus pneumoniae pneumonia"),
    ("E. faecalis endocarditis", "Escherichia coli endocarditis"),
    # a letter before a class word, and an acronym of that initial: no binomial
    ("C syndrome", "CHIME syndrome"),
])
def test_a_genus_initial_is_no_other_organism(given: str, truth: str) -> None:
    assert not judge(given, truth).correct


def test_a_genus_initial_is_not_read_as_the_disease_named_after_the_genus() -> None:
    from pytest_agentclinic.grading.terms.readings import binomial
    assert binomial("E. chaffeensis", "Ehrlichiosis chaffeensis") is None
    assert binomial("E. chaffeensis", "Ehrlichia chaffeensis infection") == (
        "Ehrlichia chaffeensis")
