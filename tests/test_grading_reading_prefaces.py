"""Issue 31, section 3: openings other models write before the name (the grounds, their
stance, a first-person judgement) and an answer's other fields in tags leave the name read
as it is; an opening that lists findings one by one, or offers two names, is not dropped."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.prefaces import drop_preface

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
T, W = "Retinal detachment", "Acute angle-closure glaucoma"


def scores(answer: str, truth: str = T, grader: CraftMDGrader = STRICT) -> list[int]:
    """The verdict in each protocol's wrapping."""
    return [grader.grade_frq(wrap.format(answer), truth).verdict
            for wrap in ("DIAGNOSIS READY: {}", "Final Diagnosis: {}")]


@pytest.mark.parametrize("answer", [
    "Based on the clinical findings, retinal detachment.",
    "Given the history and examination, retinal detachment.",
    "Considering the patient's symptoms, retinal detachment is most likely.",
    "In my opinion, retinal detachment.", "Clinically, retinal detachment.",
    "In summary, retinal detachment.",
    "I think retinal detachment.", "I believe retinal detachment.",
    "I strongly suspect retinal detachment.", "I'd diagnose retinal detachment.",
    "I would diagnose retinal detachment.", "My suspicion is retinal detachment.",
])
def test_an_opening_before_the_name_leaves_it(answer: str) -> None:
    assert scores(answer) == [1, 1]
    assert scores(answer, W, PAPER) == [0, 0]


@pytest.mark.parametrize("answer", [
    "Based on the clinical findings, acute angle-closure glaucoma or retinal detachment.",
    "I suspect acute angle-closure glaucoma, but retinal detachment is possible.",
    "In my opinion, acute angle-closure glaucoma; retinal detachment cannot be excluded.",
])
def test_an_opening_before_two_names_still_offers_both(answer: str) -> None:
    assert scores(answer) == [0, 0]


def test_findings_listed_one_by_one_are_no_opening_to_drop() -> None:
    # their commas would cut the list: only grounds named as such are dropped
    text = "Given fever, rash and arthralgia, X"
    assert drop_preface(text) == text
    assert drop_preface("Given the history, X") == "X"


@pytest.mark.parametrize("answer", [
    "<diagnosis>Prostatitis</diagnosis>\n<confidence>high</confidence>",
    "<answer>Prostatitis</answer><confidence>0.9</confidence>",
])
def test_the_other_fields_of_a_tagged_answer_are_no_mention(answer: str) -> None:
    # "<confidence>high</confidence>" was a second mention, hiding a bare head noun
    assert scores(answer, "Chronic bacterial prostatitis") == [0, 0]
    assert scores(answer, "Prostatitis") == [1, 1]


def test_two_tagged_diagnoses_are_still_two() -> None:
    assert scores("<diagnosis>Prostatitis</diagnosis>\n<diagnosis>Cystitis</diagnosis>",
                  "Prostatitis") == [0, 0]


@pytest.mark.parametrize("answer", ["Favor retinal detachment.", "I favor retinal detachment",
                                    "Leaning towards retinal detachment"])
def test_a_leaning_before_the_name_leaves_it(answer: str) -> None:
    assert scores(answer) == [1, 1]


@pytest.mark.parametrize("heading", [
    "**Key Supporting Features:**", "Pertinent negatives:", "## Summary", "Investigations:",
    "Further workup:", "Follow-up:", "Clinical reasoning:", "Red flags:",
])
def test_a_section_after_the_answer_names_nothing_more(heading: str) -> None:
    # under "Key Supporting Features:" the findings were read as a second diagnosis
    answer = f"**Most Likely Diagnosis:** Retinal detachment\n\n{heading}\n- rash for two weeks"
    assert scores(answer) == [1, 1]
