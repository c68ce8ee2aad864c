""""T, but W": the contrast opens W's clause and is no word of W's name. Kept in the name,
"but secondary syphilis" was an unknown name the answer called secondary, so a concurrent
condition of T, and the answer scored T though it prefers W (found by the round-10 truths
drawn from the sources: docs/grading.md, *Round 10 (a)*)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT = CraftMDGrader()
T = "Psoriasis"


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("answer", [
    "You might have psoriasis, but secondary syphilis is more likely.",
    "Psoriasis, but secondary hyperparathyroidism",
    "It could be psoriasis, yet secondary syphilis fits better.",
    "You might have psoriasis, but lichen planus is more likely.",
    # a finding set against T by the contrast is preferred to T, not beside it
    "You might have psoriasis, but hypokalemia is more likely.",
    "Psoriasis, yet hyperinsulinemia",
])
def test_a_disease_after_but_is_another_diagnosis(answer: str, wrap: str) -> None:
    assert STRICT.grade_frq(wrap.format(answer), T).verdict == 0


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("answer", [
    "Psoriasis, but with secondary bacterial infection",
    "Psoriasis, but no secondary infection",
    "Psoriasis, but mild",
    "Psoriasis with hypokalemia",
])
def test_a_secondary_condition_after_but_is_still_concurrent(answer: str, wrap: str) -> None:
    assert STRICT.grade_frq(wrap.format(answer), T).verdict == 1
