"""An option's letter before a disease name written in lower case (truths drawn from the
terminology's own sources, ``bench_adversarial.py --truths sources``): "C. eosinophilic
gastritis" answers eosinophilic gastritis, as "C. Asthma" answers asthma, while "C. difficile
colitis" keeps the genus's initial."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.rules import grade_text
from pytest_agentclinic.grading.reading.option_letters import without_option_letter


@pytest.mark.parametrize(("answer", "truth"), [
    # the Disease Ontology's and MONDO's lower-case names after an option's letter
    ("C. lymphocytic colitis", "Lymphocytic colitis"),
    ("B. membranous nephropathy", "membranous nephropathy"),
    ("D. sarcoidosis", "sarcoidosis"),
    ("Final answer: A. chronic pancreatitis", "chronic pancreatitis"),
    ("The correct answer is E. pemphigus vulgaris", "pemphigus vulgaris"),
    # a concurrent finding after the name leaves it graded
    ("C. acute cholecystitis with leukocytosis", "acute cholecystitis"),
])
def test_an_option_letter_before_a_lower_case_name_labels_it(answer: str, truth: str) -> None:
    extraction, decision = grade_text(answer, [truth])
    assert decision.correct, (extraction, decision)
    assert not extraction.diagnosis.startswith(("A.", "B.", "C.", "D.", "E."))


@pytest.mark.parametrize(("answer", "truth"), [
    # an alternative after the labelled name is still two diagnoses
    ("C. acute cholecystitis or acute pancreatitis", "acute cholecystitis"),
    # the letter labels another option's name
    ("C. ulcerative colitis", "Crohn disease"),
])
def test_the_labelled_name_is_graded_as_any_answer(answer: str, truth: str) -> None:
    assert not grade_text(answer, [truth])[1].correct


@pytest.mark.parametrize("text", [
    # a genus's initial and its species: the name of an organism or of its infection
    "C. difficile colitis", "H. pylori gastritis", "E. coli infection",
    # a species epithet that also names its disease is one word without a disease's ending
    "B. pertussis", "V. cholerae",
    # not an option's letter (F and beyond), or a capital already read as one
    "F. nucleatum infection",
    # words after the letter that name no disease the terminology knows
    "C. see the notes below",
])
def test_a_genus_initial_or_unknown_words_keep_the_letter(text: str) -> None:
    assert without_option_letter(text) == text


def test_the_letter_goes_when_a_known_name_follows() -> None:
    assert without_option_letter("C. eosinophilic gastritis") == "eosinophilic gastritis"
    assert without_option_letter("A. membranous nephropathy, biopsy-proven") \
        == "membranous nephropathy, biopsy-proven"


@pytest.mark.parametrize(("answer", "truth"), [
    # one word without an epithet's ending, a name with "with" in it
    ("C. kwashiorkor", "kwashiorkor"),
    ("B. rhinophyma", "rhinophyma"),
    ("D. granulomatosis with polyangiitis", "granulomatosis with polyangiitis"),
])
def test_one_word_or_a_name_with_a_join_after_the_letter(answer: str, truth: str) -> None:
    extraction, decision = grade_text(answer, [truth])
    assert decision.correct, (extraction, decision)
