"""Issue 31, the red team's round 6: shapes nobody had written (a revised final diagnosis,
the writer's disclaimer of its role, "you are suffering from", a closing line that sends the
patient to a clinician, a condition said to be absent without a comma), which
``bench_adversarial.py`` found read wrongly. Each rule with its own names, in both
protocols' wrapping, offline; "sure" matters for the answers that must not score: a
moderator model is never asked."""

from __future__ import annotations

import pytest
from helpers import RIGHT, WRONG, decided

from pytest_agentclinic.grading.reading.revisions import drop_absent, revised

# --- a revised diagnosis supersedes what came before it --------------------------------------

@pytest.mark.parametrize("answer", [
    "Tuberculosis\n\nFinal diagnosis (revised): Sarcoidosis",
    "Diagnosis: tuberculosis. Revised diagnosis: sarcoidosis",
    "Tuberculosis\n\n**Updated final diagnosis:** Sarcoidosis",
    "Working diagnosis: tuberculosis\nCorrected diagnosis - sarcoidosis",
])
def test_a_revised_diagnosis_answers(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT
    assert decided(answer, "Tuberculosis") == WRONG


def test_the_revision_answers_wherever_the_protocol_marker_stands() -> None:
    # "DIAGNOSIS READY: W ... Final diagnosis (revised): T" in AgentClinic was two claims
    said = "DIAGNOSIS READY: Tuberculosis\n\nFinal diagnosis (revised): Sarcoidosis"
    assert revised("Tuberculosis\n\nFinal diagnosis (revised): Sarcoidosis") == (
        "Final Diagnosis: Sarcoidosis")
    assert decided(said.removeprefix("DIAGNOSIS READY: "), "Sarcoidosis") == RIGHT


def test_a_revision_with_nothing_after_it_revises_nothing() -> None:
    assert revised("Sarcoidosis\nRevised diagnosis:") == "Sarcoidosis\nRevised diagnosis:"
    # "revised" inside a sentence is no label
    assert decided("Sarcoidosis, after the revised criteria", "Sarcoidosis") == RIGHT


# --- the writer's disclaimer of its role ------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "I am an AI, not a doctor, but sarcoidosis is most likely; please see a clinician.",
    "I'm not a doctor, but it sounds like sarcoidosis.",
    "As an AI language model: sarcoidosis.",
    "While I am not a medical professional, sarcoidosis fits best.",
])
def test_a_disclaimer_of_role_before_the_answer_names_nothing(answer: str) -> None:
    assert decided(answer, "Sarcoidosis") == RIGHT


def test_a_disclaimer_before_a_hedge_keeps_it_a_hedge() -> None:
    said = "I am an AI and cannot diagnose you; it could be sarcoidosis or tuberculosis."
    assert decided(said, "Sarcoidosis") == WRONG


def test_you_are_suffering_from_leads_to_the_name() -> None:
    said = "Based on our conversation, I believe you are suffering from sarcoidosis."
    assert decided(said, "Sarcoidosis") == RIGHT


def test_a_line_sending_the_patient_to_a_clinician_names_nothing() -> None:
    # "please see a clinician" was a name of its own, which kept a name with "with" in it
    # from being read whole
    truth = "Granulomatosis with polyangiitis"
    assert decided(f"{truth}. Please see a clinician.", truth) == RIGHT
    assert decided(f"{truth}; please consult a rheumatologist.", truth) == RIGHT
    # a plan to rule a disease out names nothing either (the recorded GPT-4 grader extracts
    # the main diagnosis alone from such answers); a clause after it that keeps one open does
    assert decided("Sarcoidosis. Please see a clinician to rule out tuberculosis.",
                   "Sarcoidosis") == RIGHT
    assert decided("Sarcoidosis. Please see a clinician; tuberculosis is possible.",
                   "Sarcoidosis") == WRONG


# --- what the patient does not have, without a comma -----------------------------------------

def test_a_disease_without_another_sets_the_other_aside() -> None:
    assert decided("Sarcoidosis without tuberculosis", "Sarcoidosis") == RIGHT
    assert decided("Tuberculosis without sarcoidosis", "Sarcoidosis") == WRONG
    assert decided("Acute appendicitis without perforation", "Acute appendicitis") == RIGHT


def test_a_name_with_without_in_it_stays_one_name() -> None:
    for name in ("Migraine without aura", "Preeclampsia without severe features"):
        assert drop_absent(name) == (name, ())
    assert decided("Migraine without aura", "Migraine without aura") == RIGHT
    assert decided("Preeclampsia without severe features",
                   "Preeclampsia with severe features") != RIGHT


def test_with_or_without_names_both_forms() -> None:
    said = "Imperforate anus with or without a fistula (possibly a rectovaginal fistula)"
    assert drop_absent(said) == (said, ())


def test_what_is_set_aside_is_the_name_after_without() -> None:
    text, excluded = drop_absent("Sarcoidosis without evidence of tuberculosis")
    assert (text.strip(), excluded) == ("Sarcoidosis", ("tuberculosis",))


def test_the_name_after_without_keeps_its_bracket_and_a_generic_word_links_nothing() -> None:
    # "disorder without X and Y" was read as a known name ("disorder" is no word of a name)
    text, excluded = drop_absent("Advanced sleep phase disorder without esophageal atresia and "
                                 "tracheoesophageal fistula")
    assert text.strip() == "Advanced sleep phase disorder" and len(excluded) == 1
    said = "Acute lymphoblastic leukemia without tuberculosis (TB)"
    assert decided(said, "Acute lymphoblastic leukemia") == RIGHT
    # a bracket right before "without" ends the answer's name: nothing runs across it
    said = "Primary hyperaldosteronism (Conn syndrome) without metastatic colorectal cancer"
    assert decided(said, "Primary hyperaldosteronism") == RIGHT


# --- a name set aside with its grounds ---------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "Sarcoidosis is unlikely given the normal examination; pseudodementia",
    "Sarcoidosis was ruled out by the normal biopsy; the diagnosis is melanonychia",
    "Sarcoidosis is excluded based on the normal ACE level; pseudodementia",
])
def test_a_name_set_aside_with_its_grounds_is_excluded(answer: str) -> None:
    # the truth was the main diagnosis, wrong only where the name after it is one the reader
    # counts as another disease beside it (not these, which the terminology does not know)
    assert decided(answer, "Sarcoidosis") == WRONG
