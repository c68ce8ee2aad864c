"""Issue 31, the red team's round 5: shapes nobody had written (typesetting, a clinician's
shorthand, multiple-choice habits, notes of status or medication, a name with "with" in it
before a cause or a finding), which ``bench_adversarial.py`` found read wrongly. Each rule
with its own names, in both protocols' wrapping, offline; "sure" matters for the answers
that must not score: a moderator model is never asked."""

from __future__ import annotations

import pytest
from helpers import RIGHT, WRONG, decided

# --- typesetting: LaTeX, citations, a name broken at its hyphen ------------------------------

@pytest.mark.parametrize("answer", [
    "\\textbf{Sarcoidosis}",
    "$\\boxed{\\text{Sarcoidosis}}$",
    "\\(\\mathrm{Sarcoidosis}\\)",
    "Sarcoidosis (ref. 2)",
    "Sarcoidosis [1, 3]",
    "Sarcoidosis [2]\n\nReferences:\n1. A textbook of medicine, 5th ed.\n2. A review.",
])
def test_typesetting_and_citations_are_markup(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


def test_a_name_broken_across_lines_at_its_hyphen_is_one_name() -> None:
    assert decided("Churg-\nStrauss syndrome", "Churg-Strauss syndrome") == RIGHT
    truth = "Glucose-6-phosphate dehydrogenase deficiency"
    assert decided("Glucose-\n6-phosphate dehydrogenase deficiency", truth) == RIGHT


# --- a clinician's shorthand ----------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "Findings c/w sarcoidosis",
    "Sarcoidosis w/ splenomegaly",
])
def test_consistent_with_and_with_in_shorthand_read_as_the_words(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


@pytest.mark.parametrize("answer", [
    "R/O sarcoidosis",
    "Rule out sarcoidosis",
    "s/p sarcoidosis, now tuberculosis",
    "h/o sarcoidosis; presenting with tuberculosis",
])
def test_a_plan_to_rule_out_or_a_past_history_never_scores(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == WRONG


@pytest.mark.parametrize("answer", [
    "Sarcoidosis (resolved); now pseudodementia",
    "Sarcoidosis - resolved; now pseudodementia",
])
def test_a_resolved_condition_before_what_the_patient_has_now_is_history(answer: str) -> None:
    assert [c for c, _ in decided(answer, "Sarcoidosis")] == [False, False]
    assert decided(answer, "Pseudodementia")[0][0]


@pytest.mark.parametrize("answer", [
    "Sarcoidosis (90%), pseudodementia (10%)",
    "Sarcoidosis - 70%\nPseudodementia - 30%",
])
def test_percentages_beside_two_names_weigh_alternatives(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == WRONG


def test_one_percentage_is_a_note_of_confidence() -> None:
    assert decided("Sarcoidosis (85%)", "Sarcoidosis") == RIGHT


@pytest.mark.parametrize("answer", [
    "Sarcoidosis\nHematocrit: 26%, transferrin saturation: 8%.",
    "Sarcoidosis. Supporting findings: lymphocytes - 45%, CD4/CD8 ratio - 5.",
    "Sarcoidosis (confidence: 85%). ACE elevated, uptake 60% (normal: <35%).",
])
def test_measurements_in_percent_beside_one_answer_weigh_nothing(answer: str) -> None:
    # A value after a colon or a dash inside a sentence is a measurement: two of them do
    # not make a differential by percentages (they did, in the rule's first form).
    assert decided(answer, "Sarcoidosis") == RIGHT


def test_the_other_answer_after_status_post_is_the_diagnosis() -> None:
    assert decided("s/p appendectomy, now sarcoidosis", "Sarcoidosis") == RIGHT


# --- multiple-choice habits in a free response ------------------------------------------------

@pytest.mark.parametrize("answer", [
    "Answer: (C) Sarcoidosis",
    "(c) Sarcoidosis",
    "Option C: Sarcoidosis",
    "Choice 3 - Sarcoidosis",
])
def test_an_options_letter_before_the_name_labels_it(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


def test_a_bracketed_letter_is_no_second_name_beside_the_answer() -> None:
    # read as a name in brackets, "C" was a second diagnosis beside some truths
    assert decided("Answer: (C) Mitral stenosis", "Mitral stenosis") == RIGHT


def test_a_letter_alone_names_nothing() -> None:
    assert [c for c, _ in decided("(C)", "C")] == [False, False]


# --- notes of status or medication ------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "Sarcoidosis (dx of exclusion)",
    "Sarcoidosis (a diagnosis of exclusion)",
    "Sarcoidosis; on warfarin",
    "Sarcoidosis, currently taking oral contraceptives",
])
def test_a_note_of_status_or_of_what_the_patient_takes_names_no_disease(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


# --- a name with "with" in it, before a cause or a finding --------------------------------------

EGPA = "Eosinophilic granulomatosis with polyangiitis"


@pytest.mark.parametrize("tail", [
    " in the setting of long-standing asthma",
    " following a viral illness",
    ", with hepatomegaly on examination",
])
def test_a_name_with_with_in_it_is_found_whole_before_a_cause_or_a_finding(tail: str) -> None:
    assert decided(EGPA + tail, EGPA) == RIGHT


def test_the_truth_as_the_setting_of_another_never_scores() -> None:
    assert decided("Tuberculosis in the setting of sarcoidosis", "Sarcoidosis") == WRONG


# --- a condition the answer calls co-existing; a problem list; hedges kept open ----------------

@pytest.mark.parametrize("answer", [
    "Sarcoidosis; known asthma",
    "Sarcoidosis, with comorbid asthma",
    "Sarcoidosis (primary), asthma (comorbidity)",
])
def test_a_condition_the_answer_calls_co_existing_is_concurrent(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT
    # the truth as the co-existing one never scores
    assert [c for c, _ in decided(answer, "Asthma")] == [False, False]


def test_without_the_role_word_a_second_disease_is_still_another_diagnosis() -> None:
    assert decided("Sarcoidosis, asthma", "Sarcoidosis") == WRONG


@pytest.mark.parametrize("answer", [
    "Assessment & Plan:\n1. Sarcoidosis - start treatment\n2. Follow up in 2 weeks",
    "A&P: sarcoidosis. Start prednisone.",
    "Sarcoidosis\n\n<details><summary>Reasoning</summary>Tuberculosis was excluded.</details>",
])
def test_a_problem_list_with_its_plan_and_a_collapsed_section_answer_one(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


@pytest.mark.parametrize("answer", [
    "Likely tuberculosis; sarcoidosis less likely but possible",
    "Tuberculosis; sarcoidosis unlikely but not excluded",
])
def test_a_name_weighed_lower_but_kept_open_is_an_alternative(answer: str) -> None:
    for truth in ("Sarcoidosis", "Tuberculosis"):
        assert [c for c, _ in decided(answer, truth)] == [False, False]
