"""Issue 31, other models' styles (round 3): an answer given as one record (CSV, a one-row
table, a Python dictionary, wrapped XML fields, a numbered step), a label with a note or an
arrow, a heading of advice, and the sentences the round-2 styles left misread, each read as
the one diagnosis the answer gives (the paper's grader, step 1)."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.records import as_labelled_lines


@pytest.mark.parametrize(("answer", "diagnosis"), [
    # a CSV header over one row; the name's own comma stays in its cell
    ("diagnosis,confidence\nLichen planus,0.9", "Lichen planus"),
    ("final_diagnosis,icd10,confidence\nBipolar I disorder, current episode manic,F31.2,high",
     "Bipolar I disorder"),
    # a table whose header names a diagnosis column, over one row
    ("| Diagnosis | Confidence | Key findings |\n|---|---|---|\n| Lichen planus | High | "
     "flat-topped papules |", "Lichen planus"),
    # a Python dictionary
    ("{'diagnosis': 'Lichen planus', 'confidence': 0.9}", "Lichen planus"),
    # tagged fields inside a wrapper element
    ("<response>\n  <diagnosis>Lichen planus</diagnosis>\n  <confidence>0.9</confidence>\n"
     "</response>", "Lichen planus"),
    # the last of numbered steps
    ("Step 1: Review the history. The papules itch.\nStep 2: Examine the skin.\nStep 3: "
     "Diagnosis: Lichen planus", "Lichen planus"),
    # a label with a note in brackets, or an arrow
    ("Diagnosis (ICD-10): Lichen planus", "Lichen planus"),
    ("Diagnosis \u2192 Lichen planus", "Lichen planus"),
    ("Final answer -> Lichen planus", "Lichen planus"),
    # a heading of advice after the answer
    ("Here's a breakdown:\n\n**Most Likely Diagnosis:** Lichen planus\n\n**Important "
     "Considerations:**\n\n*   A biopsy can confirm it.\n*   Review in two weeks.",
     "Lichen planus"),
    # the findings, subject of the verb, are what the diagnosis explains
    ("Purpura and corkscrew hairs are consistent with scurvy", "scurvy"),
    ("I suspect the rash and the fever are consistent with measles.", "measles"),
    # grounds before a name that holds a comma of its own
    ("Given the history and the examination findings, erythema migrans, indicative of early "
     "Lyme disease, is the most likely diagnosis.", "erythema migrans"),
    # the case retold, then a diagnosis given before a note of what is still needed
    ("A 45-year-old woman presents with the symptoms described. The most likely diagnosis is "
     "lichen planus, further evaluation needed.", "lichen planus"),
    ("The patient has the history described. I suspect lichen planus, but a biopsy is "
     "required.", "lichen planus"),
])
def test_one_committed_diagnosis_in_another_style_is_read(answer: str, diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == ("single", diagnosis)


@pytest.mark.parametrize("answer", [
    # "formerly known as" names the main diagnosis again wherever the statement goes on
    "Eosinophilic granulomatosis with polyangiitis (formerly known as Churg-Strauss syndrome) "
    "is the most likely diagnosis given the history.",
    "Eosinophilic granulomatosis with polyangiitis (formerly known as Churg-Strauss syndrome) "
    "- confidence: high",
    "I think it's eosinophilic granulomatosis with polyangiitis (formerly known as "
    "Churg-Strauss syndrome), but I would confirm it with a biopsy.",
    "The patient is likely suffering from eosinophilic granulomatosis with polyangiitis "
    "(formerly known as Churg-Strauss syndrome).",
])
def test_an_alias_is_read_against_the_name_not_the_sentence(answer: str) -> None:
    truth = "Eosinophilic granulomatosis with polyangiitis"
    for policy in ("strict", "paper"):
        assert CraftMDGrader(policy=policy).grade_frq(answer, truth).verdict


@pytest.mark.parametrize("answer", [
    # several rows: a differential, not one record
    "diagnosis,confidence\nLichen planus,0.6\nLichenoid drug eruption,0.3",
    "| Diagnosis | Probability |\n|---|---|\n| Lichen planus | 60% |\n| Lichenoid drug "
    "eruption | 30% |",
    # two answers in a dictionary's list
    "{'diagnosis': ['Lichen planus', 'Lichenoid drug eruption']}",
])
def test_what_still_offers_several(answer: str) -> None:
    assert extract(answer).category == "multiple"


@pytest.mark.parametrize("answer", [
    # a disease before a clause of its reasons keeps its place
    "Psoriasis, as the plaques are consistent with it",
    "Rosacea with features suggestive of lupus",
])
def test_a_disease_before_its_reasons_stays_the_answer(answer: str) -> None:
    assert extract(answer).diagnosis in ("Psoriasis", "Rosacea")


def test_a_sentence_that_gives_no_diagnosis_yet_is_still_passed_over() -> None:
    found = extract("The patient presents with a rash. Further tests are needed for a "
                    "diagnosis.")
    assert found.category == "none"


def test_records_are_left_alone_when_they_are_no_record() -> None:
    for text in ("Lichen planus, hypertrophic", "Diagnosis: Lichen planus",
                 "{\"diagnosis\": \"Lichen planus\"}", "| W | ruled out |"):
        assert as_labelled_lines(text) == text


def test_a_label_with_a_note_in_brackets_heads_the_answer() -> None:
    # read as a name "ICD-10" beside the statement, the bare head noun was accepted whole
    answer = "Diagnosis (ICD-10): Dermatitis"
    assert [m.text for m in extract(answer).mentions] == ["Dermatitis"]
    assert not CraftMDGrader(policy="strict").grade_frq(answer, "Atopic dermatitis").verdict


def test_a_heading_of_advice_after_the_answer_names_nothing() -> None:
    answer = ("Here's a breakdown:\n\n**Most Likely Diagnosis:** Granulomatosis with "
              "polyangiitis\n\n**Important Considerations:**\n\n*   A biopsy can confirm it.")
    for policy in ("strict", "paper"):
        assert CraftMDGrader(policy=policy).grade_frq(
            answer, "Granulomatosis with polyangiitis").verdict


def test_a_python_dictionary_with_an_apostrophe_left_in_its_quotes() -> None:
    found = extract("{'diagnosis': 'Addison's disease', 'confidence': 0.9}")
    assert (found.category, found.diagnosis) == ("single", "Addison's disease")
