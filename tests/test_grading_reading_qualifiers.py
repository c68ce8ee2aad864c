"""Words that say how, not what: coordinate adjectives joined by commas before one noun
("Acute, severe pancreatitis") and a bracket of qualifiers inside or after a name ("Third
degree (complete) AV block") name no second disease (docs/grading.md, *Qualifiers joined by
commas or in brackets*)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.written_names import coordinate_end, only_qualifiers

STRICT = CraftMDGrader()


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize(("answer", "truth"), [
    ("Acute, severe pancreatitis", "Acute pancreatitis"),
    ("Severe, acute pancreatitis", "Acute pancreatitis"),
    ("Chronic, nonbacterial prostatitis", "Chronic nonbacterial prostatitis"),
    ("Third degree (complete) AV block", "Third degree AV block"),
    ("Pulmonary embolism (acute, bilateral)", "Pulmonary embolism"),
])
def test_qualifiers_joined_by_commas_or_in_brackets_leave_one_name(answer: str, truth: str,
                                                                   wrap: str) -> None:
    assert STRICT.grade_frq(wrap.format(answer), truth).verdict == 1


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize(("answer", "truth"), [
    # causes offered as alternatives stay alternatives
    ("Bacterial, viral or fungal pneumonia", "Fungal pneumonia"),
    # a disease before the comma is still a second name
    ("Psoriasis, atopic dermatitis", "Atopic dermatitis"),
    ("Sarcoidosis, tuberculosis", "Tuberculosis"),
])
def test_names_and_alternatives_beside_the_comma_still_do_not_score(answer: str, truth: str,
                                                                    wrap: str) -> None:
    assert STRICT.grade_frq(wrap.format(answer), truth).verdict == 0


def test_coordinate_end_covers_only_a_run_of_qualifiers() -> None:
    assert coordinate_end("Acute, severe pancreatitis") == len("Acute, ")
    assert coordinate_end("Chronic, recurrent, multifocal osteomyelitis") == len(
        "Chronic, recurrent, ")
    assert coordinate_end("Psoriasis, eczema") == 0  # a disease, not an adjective
    assert coordinate_end("Bacterial, viral or fungal pneumonia") == 0  # alternatives
    assert coordinate_end("Acute pancreatitis") == 0  # no comma


def test_only_qualifiers() -> None:
    assert only_qualifiers("complete")
    assert only_qualifiers("mild, bilateral")
    assert not only_qualifiers("lupus")
    assert not only_qualifiers("")


def test_a_bracket_of_qualifiers_is_no_mention() -> None:
    found = extract("Third degree (complete) AV block")
    assert [m.text for m in found.mentions] == ["Third degree AV block"]
