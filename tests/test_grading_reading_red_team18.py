"""Red team round 18: a qualified symptom before the disease suspected behind it, a lead of
support inside a bracket, a look-alike's name written open, a task list, two names weighed
with one chosen, and "acute on chronic" (docs/grading.md, round 18; the paper's step 1;
issue 31, *Main and concurrent* and *Alternatives*)."""

from __future__ import annotations

import pytest
from helpers import POLICIES, assert_linear, scores

from pytest_agentclinic.grading.judging.rules import grade_text
from pytest_agentclinic.grading.reading.typography import ticked
from pytest_agentclinic.grading.terms.concurrent import finding


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a symptom with a qualifier the sources do not list is the symptom (ICD-10-CM's index:
    # a qualifier not listed under a main term codes to it), so the bracket after it names
    # the disease suspected behind it
    ("Thunderclap headache (possible subarachnoid hemorrhage)", "subarachnoid hemorrhage"),
    ("Pleuritic chest pain (possible pulmonary embolism)", "pulmonary embolism"),
    ("Productive cough, probably pneumonia", "pneumonia"),
    ("Sudden severe headache (likely subarachnoid hemorrhage)", "subarachnoid hemorrhage"),
    # a lead of support inside a finding's bracket: the name up to the bracket's close
    ("Hepatomegaly (indicative of hepatitis A)", "hepatitis A"),
    ("Jaundice (suggestive of hepatitis A). Plan: serology.", "hepatitis A"),
    # a look-alike's name written open, as the sources write it
    ("Seckel like syndrome majoor-krakauer type", "Seckel like syndrome majoor-krakauer type"),
    # a task list: the ticked item is the answer
    ("- [x] Pneumonia\n- [ ] Appendicitis\n- [ ] Influenza", "pneumonia"),
    ("Final diagnosis:\n- [ ] Appendicitis\n- [X] Pneumonia", "pneumonia"),
    # two names weighed, one chosen
    ("Pneumonia vs. appendicitis \u2014 favour pneumonia", "pneumonia"),
    ("Appendicitis vs pneumonia; favouring pneumonia", "pneumonia"),
    ("Appendicitis vs pneumonia, leaning towards the latter", "pneumonia"),
    ("Dx: Appendicitis versus pneumonia (favor pneumonia)", "pneumonia"),
])
def test_scores(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a disease, not a symptom, before a hedged disease: two possible diagnoses
    ("Migraine (possible subarachnoid hemorrhage)", "subarachnoid hemorrhage"),
    ("Thunderclap headache (possible subarachnoid hemorrhage or migraine)", "migraine"),
    # a disease's bracket of support is its own: "W (indicative of T)" as "W, indicative
    # of T"; under both policies the truth only as W's cause
    ("Appendicitis (indicative of pneumonia)", "pneumonia"),
    # "X like syndrome" names a look-alike of X, as "X-like syndrome" does
    ("Seckel like syndrome", "Seckel syndrome"),
    ("Influenza like illness", "influenza"),
    # the task list's unticked item, or two ticked
    ("- [x] Appendicitis\n- [ ] Pneumonia", "pneumonia"),
    ("- [x] Pneumonia\n- [x] Appendicitis", "pneumonia"),
    # the other name chosen, or a third one
    ("Pneumonia vs. appendicitis - favour appendicitis", "pneumonia"),
    ("Appendicitis vs. pneumonia \u2014 favour influenza", "pneumonia"),
])
def test_does_not_score(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (False, True)


@pytest.mark.parametrize(("answer", "truth"), [
    # "W, probably T" with W a disease: under ``strict`` T is a second disease beside W
    # (docs/grading.md, round 18: reading it as "W, possibly T" under both policies was
    # measured and dropped, it lost recorded refinements in both folds)
    ("Appendicitis, probably pneumonia", "pneumonia"),
    ("Appendicitis (likely pneumonia)", "pneumonia"),
    ("Pneumonia, most likely appendicitis", "pneumonia"),
])
def test_a_second_disease_after_a_likelihood_hedge_does_not_score_strict(answer: str,
                                                                          truth: str) -> None:
    assert scores(answer, truth, "strict") == (False, True)


def test_a_kind_after_a_likelihood_hedge_is_still_the_answer() -> None:
    # "IBD, probably Crohn disease": a kind of the name before it names the kind (round 9)
    assert scores("IBD, probably Crohn disease", "Crohn disease") == (True, True)
    assert scores("Dermatitis, probably psoriasis", "psoriasis") == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # "acute on chronic X": acute X and chronic X, which ICD-10-CM codes both (Official
    # Guidelines, I.B.8); either may match
    ("Acute on chronic pancreatitis", "pancreatitis"),
    ("Acute on chronic pancreatitis", "acute pancreatitis"),
    ("Acute-on-chronic heart failure", "heart failure"),
])
def test_acute_on_chronic_names_both_phases(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (True, True)


def test_acute_on_chronic_is_no_other_disease() -> None:
    assert scores("Acute on chronic pancreatitis", "appendicitis") == (False, True)


def test_a_possessive_makes_a_symptom_a_name() -> None:
    # "traveler's diarrhea" is a disease's name, not a sign with a qualifier
    assert not finding("traveler's diarrhea")
    assert scores("Traveler's diarrhea, likely due to a noninvasive enteric pathogen",
                  "traveler's diarrhea") == (True, True)


def test_the_label_of_a_lead_in_a_bracket_has_no_bracket() -> None:
    extraction = grade_text("Hepatomegaly (indicative of hepatitis A)", ["hepatitis A"])[0]
    assert extraction.diagnosis == "hepatitis A"


def test_a_qualified_symptom_is_a_finding() -> None:
    assert finding("thunderclap headache") and finding("productive cough")
    assert finding("acute chest pain")  # "acute" is MeSH's Acute Disease alone
    # a word that names a condition of its own is no qualifier
    assert not finding("migraine headache") and not finding("appendicitis pain")


def test_a_task_list_reads_what_it_ticks() -> None:
    assert ticked("- [x] A\n- [ ] B\n") == "- A\n"
    # no box ticked: a list as written
    assert ticked("- [ ] A\n- [ ] B") == "- [ ] A\n- [ ] B"


def test_new_patterns_are_linear() -> None:
    # each new pattern on 64 KB of its own keywords
    from pytest_agentclinic.grading.reading import negations, typography
    texts = {negations._CHOSEN_OF_TWO: ": a vs b, favour " * 4000,
             typography._TASK_ITEM: "[x] " * 16000, typography._UNTICKED_LINE: " [ ] a" * 10000}
    assert_linear(texts)
