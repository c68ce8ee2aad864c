"""Issue 31, the red team's round 4: shapes other doctor models write a committed answer or
a hedge in, which ``bench_adversarial.py`` found read wrongly (or left to the moderator, who
could accept them). Each rule with its own names, in both protocols' wrapping, offline;
"sure" matters for the answers that must not score: a moderator model is never asked."""

from __future__ import annotations

import pytest
from helpers import RIGHT, WRONG, decided

# --- set aside after the committed answer -----------------------------------------------------

@pytest.mark.parametrize("answer", [
    "Sarcoidosis; tuberculosis less likely",
    "Sarcoidosis. Tuberculosis is much less likely",
    "Sarcoidosis \u2014 tuberculosis and lymphoma are less likely.",
    "Sarcoidosis, without complications",
    "Sarcoidosis, with no signs of tuberculosis",
])
def test_a_name_set_aside_or_absent_after_the_answer_is_no_second_diagnosis(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


def test_the_truth_set_aside_after_another_answer_never_scores() -> None:
    assert decided("Tuberculosis; sarcoidosis less likely", "Sarcoidosis") == WRONG
    assert decided("Tuberculosis, with no evidence of sarcoidosis", "Sarcoidosis") == WRONG


def test_without_inside_a_name_stays_part_of_it() -> None:
    # no comma: ICD-10-CM's "preeclampsia without severe features" is one name
    assert [c for c, _ in decided("Preeclampsia without severe features",
                                  "Preeclampsia with severe features")] == [False, False]


@pytest.mark.parametrize("answer", [
    "Sarcoidosis was my initial impression, but tuberculosis is more likely.",
    "Tuberculosis mimicking sarcoidosis",
    "Tuberculosis masquerading as sarcoidosis",
])
def test_a_first_thought_or_what_the_answer_resembles_never_scores(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == WRONG


def test_the_answer_after_a_first_thought_scores() -> None:
    assert decided("Tuberculosis was my initial impression, but sarcoidosis is more likely.",
                   "Sarcoidosis") == RIGHT


# --- alternatives in other notations ----------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "Tuberculosis > Sarcoidosis",
    "Sarcoidosis > Tuberculosis > Lymphoma",
    "Tuberculosis ?sarcoidosis",
    "Tuberculosis (?sarcoidosis)",
    "Sarcoidosis cannot be distinguished from tuberculosis without biopsy.",
    "Sarcoidosis and tuberculosis are equally likely.",
])
def test_ranks_queries_and_undecided_pairs_offer_several(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == WRONG


def test_a_sign_in_a_note_of_confidence_is_no_rank() -> None:
    assert decided("Sarcoidosis (probability > 80%)", "Sarcoidosis") == RIGHT


# --- the patient's history, a resemblance, a secondary role -----------------------------------

@pytest.mark.parametrize("answer", [
    "History of tuberculosis, now presenting with sarcoidosis",
    "Previously diagnosed tuberculosis; current diagnosis sarcoidosis",
])
def test_a_history_before_what_the_patient_presents_with_now_is_no_diagnosis(
        answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT
    assert decided(answer, "Tuberculosis") == WRONG


def test_what_resembles_the_truth_is_not_the_truth() -> None:
    assert decided("Sarcoidosis-like illness", "Sarcoidosis") == WRONG
    assert decided("Progressive multifocal leukoencephalopathy (PML)-like illness",
                   "Progressive multifocal leukoencephalopathy") == WRONG
    # a truth written with "-like" keeps it
    assert decided("Serum sickness-like reaction", "Serum sickness-like reaction") == RIGHT


def test_the_truth_superimposed_on_another_answer_never_scores() -> None:
    # the main name split at its "with": the relation of its first half is unsure, so only
    # the truth's secondary role can make the verdict sure
    assert decided("Granulomatosis with polyangiitis with superimposed sarcoidosis",
                   "Sarcoidosis") == WRONG
    assert decided("Atopic dermatitis with superimposed impetigo",
                   "Atopic dermatitis") == RIGHT


# --- a plan after the answer; a heading over the differential ---------------------------------

@pytest.mark.parametrize("answer", [
    "Granulomatosis with polyangiitis; recommend biopsy to confirm",
    "I believe you have granulomatosis with polyangiitis. I recommend seeing a specialist.",
])
def test_a_plan_after_the_answer_names_nothing(answer: str) -> None:
    assert decided(answer, "Granulomatosis with polyangiitis") == RIGHT


def test_a_final_diagnosis_heading_over_a_differential_declares_what_answers_after_it(
        ) -> None:
    answer = ("Differential diagnosis:\n1. Tuberculosis\n2. Sarcoidosis\n\n"
              "Most likely diagnosis: Sarcoidosis")
    assert decided(answer, "Sarcoidosis") == RIGHT
    assert [c for c, _ in decided(answer, "Tuberculosis")] == [False, False]
