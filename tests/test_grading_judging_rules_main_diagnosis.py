"""Issue 31: the main diagnosis decides beside a concurrent condition, one reader and one
grading entry for both protocols, guard rails, and a ``paper`` policy that follows CRAFT-MD's
grader. Fast: the offline grader only, no pytester."""

from __future__ import annotations

import asyncio

import pytest
from helpers import make_case

from pytest_agentclinic.commands.grade import grade_record
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.terms.concurrent import concurrent, finding, linked
from pytest_agentclinic.grading.terms.equivalence import judge

T, W, W2 = "Acute pancreatitis", "Migraine", "Peptic ulcer disease"
STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
WRAPPERS = ("DIAGNOSIS READY: {}", "Final Diagnosis: {}")


def scores(answer: str, truth: str = T, grader: CraftMDGrader = STRICT) -> list[int]:
    """The verdict in each protocol's wrapping."""
    return [grader.grade_frq(wrap.format(answer), truth).verdict for wrap in WRAPPERS]


# --- main and concurrent ----------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    f"{T} with hepatomegaly", f"{T} with splenomegaly", f"{T} with right inguinal lymphadenopathy",
    f"{T} with leukocytosis", f"{T} with bilateral pleural effusions", f"{T} with dehydration",
    f"{T} with a small pericardial effusion", f"{T}, hypokalemia and leukocytosis",
    f"{T} with secondary bacterial infection", f"{T}, complicated by sepsis",
    f"{T} (with mild dehydration)",
])
def test_a_concurrent_finding_or_complication_leaves_the_main_diagnosis_graded(
        answer: str) -> None:
    assert scores(answer) == [1, 1]


@pytest.mark.parametrize("answer", [
    f"{T}, {W}", f"{T} and {W}", f"{T} with {W}", f"{W} with {T}",
    f"{T}, iron deficiency anemia", f"{T}, rib fracture", f"{T}, intrauterine pregnancy",
    f"Concussion with features suggestive of {T}", f"Pregnancy with features suggestive of {T}",
    f"{W} complicated by {T}", "Rheumatoid arthritis with ankylosing spondylitis",
])
def test_another_disease_or_the_truth_in_a_secondary_role_never_scores(answer: str) -> None:
    truth = "Ankylosing spondylitis" if answer.startswith("Rheumatoid") else T
    assert scores(answer, truth) == [0, 0]


def test_a_state_suggesting_the_truth_leaves_the_state_main() -> None:
    # a hydatidiform mole lies under pregnancy complications: still not the main diagnosis
    truth = "Complete hydatidiform mole"
    assert scores(f"Pregnancy with features suggestive of {truth}", truth) == [0, 0]


def test_concurrent_reads_the_terminology_and_the_convention() -> None:
    assert finding("massive splenomegaly") and finding("a small pericardial effusion")
    assert not finding("iron deficiency anemia") and not finding("familial hypercholesterolemia")
    assert linked("diabetic ketoacidosis", "diabetes mellitus")  # two sources' hierarchies
    assert linked("orchitis", "mumps")  # ICD-10-CM's "mumps orchitis"
    # one source alone places ankylosing spondylitis under rheumatoid arthritis: siblings
    assert not linked("ankylosing spondylitis", "rheumatoid arthritis")
    assert not concurrent("migraine", "acute pancreatitis")
    assert concurrent("secondary bacterial infection", "atopic dermatitis")
    assert not concurrent("secondary syphilis", "atopic dermatitis")  # a disease of its own


def test_a_true_name_containing_with_keeps_its_finding_apart() -> None:
    truth = "Granulomatosis with polyangiitis"
    assert scores(f"{truth} with cervical lymphadenopathy", truth) == [1, 1]


# --- one reader for both protocols -----------------------------------------------------------

@pytest.mark.parametrize("answer", [
    f"{T}, confirmed by elevated lipase",
    f"{T} \u2014 classic presentation with epigastric pain radiating to the back",
    f"{T}: the history and examination are classic",
    f"{W2} was considered, but {T} fits better",
    f"**{T}**\n\n| Differential | Why less likely |\n|---|---|\n| {W2} | no |\n| {W} | no |",
    f"{T}\n\nRuled out:\n- {W2}\n- {W}",
    f"{T}\n\n**Differential diagnosis:**\n1. {W2}\n2. {W}",
    f"**{T}**\n\n**Reasoning:**\n1. Epigastric pain radiating to the back\n2. Raised lipase",
    f"{T}\n\n## Reasons\n- epigastric pain\n- raised lipase",
    f'```json\n{{"assessment": {{"final_diagnosis": "{T}"}}}}\n```',
    f'{{"assessment": {{"final_diagnosis": "{T}", "differential": ["{W2}", "{W}"]}}}}',
])
def test_real_models_shapes_are_read_alike_in_both_protocols(answer: str) -> None:
    assert scores(answer) == [1, 1]


@pytest.mark.parametrize("answer", [
    f"{T}\n{W2}\n{W}", f"{T}\n1. {W2}\n2. {W}", f"{T}\nAlternative diagnosis: {W2}",
    f"| Diagnosis | Likelihood |\n|---|---|\n| {W2} | 60% |\n| {T} | 40% |",
    f'```json\n{{"assessment": {{"final_diagnosis": "{W2}"}}, "diagnosis": "{T}"}}\n```',
])
def test_several_diagnoses_stay_several_in_both_protocols(answer: str) -> None:
    assert scores(answer) == [0, 0]


def _drug_case() -> Case:
    choices = ["Amoxicillin", "Doxycycline", "Ceftriaxone", "Observation"]
    return Case.model_validate({**make_case(1, diagnosis="Amoxicillin", choices=choices),
                                "dataset": "t"})


def test_the_cli_and_a_craftmd_run_grade_a_drug_truth_alike() -> None:
    # CRAFT-MD asks every doctor for a diagnosis: a drug names none, in a run as in the CLI
    case = _drug_case()
    answer = "Final Diagnosis: Amoxicillin"
    run = asyncio.run(grade_answer(answer, case, OfflineModerator(), 0, diagnosis_asked=True))
    _fmt, cli = grade_record(STRICT, {"correct_answer": case.diagnosis, "response": answer,
                                      "format": "frq"}, {}, False)
    _fmt, with_choices = grade_record(STRICT, {"correct_answer": case.diagnosis,
                                               "response": answer, "format": "frq",
                                               "choices": list(case.choices)}, {}, False)
    assert run.category == cli["category"] == with_choices["category"] == "none"
    assert not run.verdict.correct and cli["verdict"] == with_choices["verdict"] == 0


def test_a_question_whose_answer_is_a_drug_takes_one_when_it_does_not_ask_a_diagnosis() -> None:
    # an AgentClinic NEJM question asking for a treatment: the drug is the answer
    run = asyncio.run(grade_answer("DIAGNOSIS READY: Amoxicillin", _drug_case(),
                                   OfflineModerator(), 0))
    assert run.verdict.correct and run.category == "single"


# --- guard rails ------------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "truth"), [
    ("osteoblastoma", "osteoclastoma"), ("osteoclastoma", "osteoblastoma")])
def test_a_known_name_is_no_slip_of_another(given: str, truth: str) -> None:
    assert not judge(given, truth).correct
    assert scores(given, truth) == [0, 0]


def test_a_true_slip_still_scores() -> None:
    assert scores("Achaeasia", "Achalasia") == [1, 1]
    assert scores("Acute pancreatitsi", T) == [1, 1]


@pytest.mark.parametrize(("given", "truth"), [
    ("fracture", "scaphoid fracture"), ("cyst", "epidermoid cyst"), ("ulcer", "peptic ulcer"),
    ("hemorrhage", "subarachnoid hemorrhage"), ("colitis", "ulcerative colitis")])
def test_a_bare_head_noun_never_scores_under_strict(given: str, truth: str) -> None:
    assert scores(given, truth) == [0, 0]


# --- paper means the paper ---------------------------------------------------------------------

def test_paper_lets_a_concurrent_name_match_but_no_alternative_or_cause() -> None:
    assert scores(f"{W}, {T}", grader=PAPER) == [1, 1]
    assert scores(f"{W} with {T}", grader=PAPER) == [1, 1]
    assert scores(f"{W}, {T}") == [0, 0]  # strict: the truth in a secondary role
    assert scores(f"{W} or {T}", grader=PAPER) == [0, 0]
    assert scores(f"{W} due to {T}", grader=PAPER) == [0, 0]
    assert scores(f"{W} vs {T}", grader=PAPER) == [0, 0]
    assert scores("fracture", "scaphoid fracture", grader=PAPER) == [1, 1]  # any broader name


def test_the_lesion_a_cancer_arose_in_is_no_second_diagnosis() -> None:
    assert scores("Melanoma arising in a congenital melanocytic nevus", "Melanoma") == [1, 1]
    # the truth as the lesion it arose in is in a secondary role
    assert scores("Melanoma arising in a congenital melanocytic nevus",
                  "Congenital melanocytic nevus") == [0, 0]


def test_under_paper_a_drug_is_no_diagnosis_in_the_cli_and_a_run_alike() -> None:
    # CRAFT-MD's grader was asked for "the ... diagnosis name", else "None"
    case = _drug_case()
    answer = "Final Diagnosis: Amoxicillin"
    run = asyncio.run(grade_answer(answer, case, OfflineModerator(), 0, policy="paper"))
    _fmt, cli = grade_record(PAPER, {"correct_answer": case.diagnosis, "response": answer,
                                     "choices": list(case.choices), "format": "frq"}, {}, False)
    assert run.category == cli["category"] == "none"
    assert not run.verdict.correct and cli["verdict"] == 0


@pytest.mark.parametrize(("truth", "companion"), [
    ("Acute pancreatitis", "pancreatic pseudocyst"), ("Mumps", "orchitis"),
    ("Type 1 diabetes mellitus", "diabetic ketoacidosis"),
    ("Acute appendicitis", "perforation"), ("Diverticulitis", "abscess formation"),
    ("Diabetes mellitus", "diabetic ketoacidosis"),
])
def test_the_truth_with_its_typical_complication_scores(truth: str, companion: str) -> None:
    assert scores(f"{truth} with {companion}", truth) == [1, 1]
    # the complication named as the main diagnosis, the truth beside it: never
    assert scores(f"{companion.capitalize()} with {truth.lower()}", truth) == [0, 0]


@pytest.mark.parametrize(("truth", "other"), [
    ("Rheumatoid arthritis", "psoriatic arthritis"), ("Crohn disease", "ulcerative colitis"),
    ("Acute pancreatitis", "peptic ulcer disease"), ("Migraine", "tension headache"),
    ("Graves disease", "diabetic ketoacidosis"), ("Multiple sclerosis", "pulmonary embolism"),
    ("Multiple sclerosis", "normal pressure hydrocephalus"),
    ("Multiple myeloma", "multiple sclerosis"),
    ("Obstructive sleep apnea", "hypertrophic obstructive cardiomyopathy"),
    ("Acute pericarditis", "acute type A aortic dissection")])
def test_a_sibling_or_a_competing_disease_beside_the_truth_is_a_second_diagnosis(
        truth: str, other: str) -> None:
    assert scores(f"{truth} with {other}", truth) == [0, 0]
    assert scores(f"{truth}, {other}", truth) == [0, 0]


@pytest.mark.parametrize("answer", [
    "Mucormycosis (also known as zygomycosis or black fungus)",
    "Final Diagnosis: Mucormycosis (also known as black fungus).",
    "DIAGNOSIS READY: Mucormycosis, also known as black fungus",
    "Mucormycosis, a.k.a. black fungus",
])
def test_another_name_the_answer_claims_is_no_second_diagnosis(answer: str) -> None:
    # "black fungus" is a name no source lists: the answer says it names its one diagnosis
    # again, so the main diagnosis is graded (the paper's step 1), in both policies
    for policy in ("strict", "paper"):
        verdict = CraftMDGrader(policy=policy).grade_frq(answer, "Mucormycosis")
        assert verdict.category == "single" and verdict.verdict == 1, (policy, verdict.reason)


@pytest.mark.parametrize("answer", [
    "Rosacea (also known as mucormycosis)", "Rosacea, i.e. mucormycosis",
    "DIAGNOSIS READY: Rosacea (aka mucormycosis)",
])
def test_a_claimed_name_never_scores_by_itself(answer: str) -> None:
    verdict = CraftMDGrader().grade_frq(answer, "Mucormycosis")
    assert verdict.verdict == 0 and verdict.sure, verdict.reason


@pytest.mark.parametrize(("comma", "bracket"), [
    ("Bacterial pneumonia, possibly with lung abscess",
     "Bacterial pneumonia (possibly with lung abscess)"),
    ("Acute appendicitis, possibly complicated by perforation",
     "Acute appendicitis (possibly complicated by perforation)"),
    ("Acute pancreatitis, likely with pseudocyst formation",
     "Acute pancreatitis (likely with pseudocyst formation)"),
])
def test_a_hedged_companion_reads_alike_after_a_comma_and_in_a_bracket(comma: str,
                                                                       bracket: str) -> None:
    # one reader: "(possibly with Y)" is what the disease may bring with it, as
    # ", possibly with Y" is, never an alternative diagnosis "with Y"
    for truth in (comma.split(",")[0], "Lung abscess"):
        for grader in (STRICT, PAPER):
            a, b = grader.grade_frq(comma, truth), grader.grade_frq(bracket, truth)
            assert (a.category, a.verdict) == (b.category, b.verdict), (comma, truth)
    assert STRICT.grade_frq(bracket, "Lung abscess").category == "single"
