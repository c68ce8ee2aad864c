"""Red team round 7: a disease kept open is a second possible diagnosis, whatever condition
follows the hedge ("W cannot be excluded without a biopsy") and whether it stands in
brackets ("T (W cannot be excluded)"): CRAFT-MD's grader, step 1, counts "more than one
possible diagnosis" as multiple (docs/grading.md, round 7)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
#: A hedge with the condition that would settle it, or in brackets after the answer
KEPT_OPEN = ["{t}. {w} cannot be excluded without a biopsy.",
             "{t} ({w} cannot be excluded).",
             "{t}. {w} cannot be excluded at this stage.",
             "{t}. {w} cannot be completely ruled out on clinical grounds alone.",
             "{t}. However, {w} cannot be excluded without a biopsy.",
             "{t}; {w} cannot be ruled out until the culture results are back.",
             "{t} [{w} cannot be excluded]",
             "{t} ({w} not excluded)",
             "{t} ({w} has not been ruled out)",
             "{t} (cannot exclude {w})",
             "{t} (cannot rule out {w} without a biopsy)"]
#: The same sentences that set the name aside
SET_ASIDE = ["{t}. {w} was excluded by the biopsy.", "{t} ({w} excluded).",
             "{t} ({w} ruled out)"]


@pytest.mark.parametrize("shape", KEPT_OPEN)
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_disease_kept_open_is_a_second_possible_diagnosis(shape: str, wrap: str) -> None:
    # the condition after the hedge, or the bracket, hid it: a single psoriasis
    answer = wrap.format(shape.format(t="Psoriasis", w="eczema"))
    assert extract(answer).category == "multiple"
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 0
    assert PAPER.grade_frq(answer, "Psoriasis").verdict == 0
    assert STRICT.grade_frq(answer, "Eczema").verdict == 0


@pytest.mark.parametrize("shape", SET_ASIDE)
def test_a_name_set_aside_is_still_set_aside(shape: str) -> None:
    read = extract(shape.format(t="Psoriasis", w="eczema"))
    assert (read.category, read.diagnosis) == ("single", "Psoriasis")
    assert STRICT.grade_frq(shape.format(t="Psoriasis", w="eczema"), "Psoriasis").verdict == 1
