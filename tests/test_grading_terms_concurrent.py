"""Issue 31, round 3: the main diagnosis and what stands beside it, read as a clinician reads
them (docs/grading.md, "Main and concurrent"). Truths here are of our own choosing."""

from __future__ import annotations

import pytest
from helpers import POLICIES

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract


@pytest.mark.parametrize("answer", ["Dysthymia", "Depression", "Final Diagnosis: Neuralgia",
                                    "DIAGNOSIS READY: Dysthymia"])
def test_a_noun_alone_is_a_diagnosis_not_an_adjective(answer: str) -> None:
    # The terminology's tokens read "depression" as "depressive": the written word decides.
    found = extract(answer)
    assert found.category == "single"
    assert found.diagnosis.lower() == answer.rsplit(":", 1)[-1].strip().lower()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    ("Jaundice due to choledocholithiasis", "Choledocholithiasis"),
    ("Splenomegaly secondary to hereditary spherocytosis", "Hereditary spherocytosis"),
    ("Final Diagnosis: Fever likely caused by infectious mononucleosis",
     "Infectious mononucleosis"),
])
def test_a_finding_explained_by_its_cause_names_the_cause(answer: str, truth: str,
                                                          policy: str) -> None:
    verdict = CraftMDGrader(policy=policy).grade_frq(answer, truth)  # type: ignore[arg-type]
    assert verdict.verdict == 1, verdict.reason


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a disease caused by another stays the diagnosis: the cause is not graded
    ("Bronchiectasis due to cystic fibrosis", "Cystic fibrosis"),
    # the finding itself is no answer for its cause's truth when the cause is another disease
    ("Jaundice due to hepatitis A", "Choledocholithiasis"),
])
def test_a_disease_with_its_cause_is_graded_on_the_disease(answer: str, truth: str,
                                                           policy: str) -> None:
    verdict = CraftMDGrader(policy=policy).grade_frq(answer, truth)  # type: ignore[arg-type]
    assert verdict.verdict == 0, verdict.reason


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("answer", [
    "Cholangitis, whiplash",
    "Cholangitis, dog bite",
    "Cholangitis, menopause",
    "Whiplash with features suggestive of cholangitis",
    "Menopause with features suggestive of cholangitis",
])
def test_an_injury_or_a_state_like_pregnancy_is_a_second_condition(answer: str,
                                                                   policy: str) -> None:
    # strict: two conditions; paper: the main one (the injury or the state) is graded
    truth = "Cholangitis"
    verdict = CraftMDGrader(policy=policy).grade_frq(answer, truth)  # type: ignore[arg-type]
    expected = 0 if policy == "strict" or not answer.startswith("Cholangitis") else 1
    assert verdict.verdict == expected, verdict.reason


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    ("Abdominal aortic aneurysm (possible rupture)", "Abdominal aortic aneurysm"),
    ("Chest pain, possibly pericarditis", "Pericarditis"),
    ("Granulomatosis with polyangiitis secondary to dermatomyositis",
     "Granulomatosis with polyangiitis"),
    ("Granulomatosis with polyangiitis with abscess formation",
     "Granulomatosis with polyangiitis"),
    ("Fever due to granulomatosis with polyangiitis", "Granulomatosis with polyangiitis"),
    ("Cholangitis secondary to granulomatosis with polyangiitis", "Cholangitis"),
])
def test_complications_causes_and_names_holding_with(answer: str, truth: str,
                                                     policy: str) -> None:
    verdict = CraftMDGrader(policy=policy).grade_frq(answer, truth)  # type: ignore[arg-type]
    assert verdict.verdict == 1, verdict.reason
