"""Issue 31, other models' styles (round 2): a chain of reasoning that ends in its
conclusion, a TL;DR, a SOAP note, and a heading of confidence or of reasons after the
answer each read as the one diagnosis the answer gives (the paper's grader, step 1)."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.soap import soap_assessment


@pytest.mark.parametrize(("answer", "diagnosis"), [
    # a numbered chain of reasoning, then its conclusion
    ("1. The rash has lasted two weeks.\n2. The papules are violaceous and flat-topped.\n"
     "3. The wrists are involved.\n\nTherefore, the diagnosis is lichen planus.",
     "lichen planus"),
    ("Let's think step by step. The itch is worse at night. Burrows are seen. So the answer "
     "is scabies.", "scabies"),
    ("The lesions are itchy. Thus, the most likely diagnosis is nummular eczema.",
     "nummular eczema"),
    ("TL;DR: scabies", "scabies"),
    ("TLDR: pityriasis rosea\n\nThe herald patch came first.", "pityriasis rosea"),
    ("Bottom line: erythema multiforme", "erythema multiforme"),
    # a SOAP note: the assessment holds the diagnosis
    ("S: Itchy rash for a week.\nO: Burrows in the finger webs.\nA: Scabies\nP: Permethrin; "
     "review in two weeks.", "Scabies"),
    # a heading of how sure, or of why, after the answer
    ("**Diagnosis**\nPityriasis rosea\n\n**Confidence**\nHigh", "Pityriasis rosea"),
    ("**Diagnosis: Pityriasis rosea**\n\nHere's why:\n\n*   **History:** a herald patch.\n"
     "*   **Examination:** a fir-tree pattern.", "Pityriasis rosea"),
])
def test_one_committed_diagnosis_in_another_style_is_read(answer: str, diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == ("single", diagnosis)


@pytest.mark.parametrize("answer", [
    "1. The history fits.\n2. The examination fits.\n\nTherefore, the diagnosis is "
    "granulomatosis with polyangiitis.",
    "TL;DR: Granulomatosis with polyangiitis",
    "S: Sinusitis and haemoptysis.\nO: Nasal crusting.\nA: Granulomatosis with polyangiitis\n"
    "P: Refer.",
    "**Diagnosis**\nGranulomatosis with polyangiitis\n\n**Confidence**\nHigh",
    "**Diagnosis: Granulomatosis with polyangiitis**\n\nHere's why:\n\n* the history fits",
])
def test_a_name_with_with_in_it_is_read_whole_in_these_styles(answer: str) -> None:
    truth = "Granulomatosis with polyangiitis"
    for policy in ("strict", "paper"):
        assert CraftMDGrader(policy=policy).grade_frq(answer, truth).verdict


@pytest.mark.parametrize("answer", [
    # the conclusion keeps two open
    "1. The history fits.\n2. The examination fits.\n\nTherefore, the diagnosis is scabies "
    "or atopic dermatitis.",
    # the conclusion names another diagnosis than the label
    "Final diagnosis: scabies\n\nThe burrows are typical. Therefore, the diagnosis is "
    "atopic dermatitis.",
    # the sentences before the conclusion are a differential
    "Differential diagnosis:\n1. Scabies\n2. Atopic dermatitis",
])
def test_what_still_offers_several(answer: str) -> None:
    assert extract(answer).category == "multiple"


def test_a_soap_note_is_read_as_its_assessment_only_in_a_note() -> None:
    note = "S: Itch.\nO: Burrows.\nA: Scabies\nP: Permethrin."
    assert soap_assessment(note) == "Final Diagnosis: Scabies"
    assert extract(note).diagnosis == "Scabies"
    # an option's letter alone is no note
    assert soap_assessment("A: Scabies") == "A: Scabies"


@pytest.mark.parametrize("answer", [
    "Primary diagnosis: Bipolar II disorder, current episode depressed\nSecondary diagnoses: "
    "none",
    "Diagnosis: Bipolar II disorder, current episode depressed\nComorbidities: nil\n"
    "Allergies: N/A",
])
def test_a_line_after_the_answer_that_says_there_is_nothing_names_nothing(answer: str) -> None:
    found = extract(answer)
    assert found.category == "single"
    # the episode is a DSM-5 specifier, a note the statement is read without (docs/grading.md,
    # "The recorded verdicts, round 4")
    assert (found.diagnosis, found.statement) == ("Bipolar II disorder", "Bipolar II disorder")


def test_a_later_label_of_the_answer_itself_that_says_none_is_kept() -> None:
    assert extract("Working diagnosis: scabies\nFinal diagnosis: none").category != "single"


@pytest.mark.parametrize(("answer", "diagnosis"), [
    ("Final diagnosis:\n1. von Willebrand disease", "von Willebrand disease"),
    ("Final diagnosis:\n1. 21-hydroxylase deficiency", "21-hydroxylase deficiency"),
    # a letter before a lower-case word is an initial, not an option's letter
    ("Final diagnosis: C. difficile colitis", "C. difficile colitis"),
])
def test_an_items_number_before_a_name_in_lower_case_or_digits_is_dropped(
        answer: str, diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == ("single", diagnosis)
