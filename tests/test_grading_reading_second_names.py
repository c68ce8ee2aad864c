""""T; W": a second name after a semicolon is a second diagnosis however it is written. Two
ways it was lost (found by CRAFT-MD's truths in the must-not shape "{truth}; {other}"):
a bracket after a long name ("W caused by X (ABBR)") pushed the sentence past the words a
bare name may have, so it was read as prose; and a name whose head is "disorder" was read
as a sign when MeSH files it under Signs and Symptoms alone (DSM-5's somatic symptom
disorder), so it was a finding beside T (docs/grading.md, *A second name after a
semicolon*)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.statement import bare_name
from pytest_agentclinic.grading.terms.concepts import default_terminology

STRICT = CraftMDGrader()
T = "Lichen planus"


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("answer", [
    "Lichen planus; Iron deficiency anemia caused by gastrointestinal blood loss "
    "(GI bleeding)",
    "Lichen planus; somatic symptom disorder",
    "Lichen planus. Somatic symptom disorder.",
])
def test_a_second_name_after_a_semicolon_is_another_diagnosis(answer: str, wrap: str) -> None:
    assert STRICT.grade_frq(wrap.format(answer), T).verdict == 0


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("answer", [
    "Lichen planus; I would confirm it with a punch biopsy (4 mm).",
    "Lichen planus with chest pain",
    "Lichen planus; fatigue",
])
def test_prose_and_signs_after_the_name_leave_it_alone(answer: str, wrap: str) -> None:
    assert STRICT.grade_frq(wrap.format(answer), T).verdict == 1


def test_a_bracket_does_not_lengthen_a_bare_name() -> None:
    assert bare_name("Iron deficiency anemia caused by gastrointestinal blood loss "
                     "(GI bleeding)")
    assert not bare_name("The lesions on both wrists are flat, violaceous, polygonal and "
                         "itchy papules")


def test_a_disorder_is_no_sign_whatever_tree_files_it() -> None:
    terms = default_terminology()
    assert not terms.symptom("Somatic symptom disorder")
    assert terms.symptom("chest pain")
