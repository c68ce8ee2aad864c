"""Issue 31: a plan or a closing line after a committed answer names nothing, and a clause
after ";" that keeps a disease open still keeps it ("T. Please see a dermatologist; W is
possible" offers two, as "T. W is possible" does). A plan to rule a disease out or to test
for it after a committed answer leaves the answer single: the paper's recorded GPT-4 grader
extracts the main diagnosis alone from such answers (docs/grading.md, step 1)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
KEEPS_OPEN = ["{t}. Please see a dermatologist; {w} is possible.",
              "{t}. I recommend a biopsy; {w} is possible.",
              "{t}.\nPlease consult a dermatologist; {w} is also possible.",
              "{t}. We will arrange a biopsy; {w} remains possible."]
PLANS = ["{t}. Recommend biopsy to rule out {w}.", "{t}. I recommend testing for {w}.",
         "{t}. Please see a dermatologist; I hope this helps.",
         "{t}. Recommend biopsy to confirm."]


@pytest.mark.parametrize("shape", KEEPS_OPEN)
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_clause_after_a_plan_that_keeps_a_disease_open_keeps_it(shape: str, wrap: str) -> None:
    # the plan hid the clause after it: the answer read as a single psoriasis
    answer = wrap.format(shape.format(t="Psoriasis", w="eczema"))
    assert extract(answer).category == "multiple"
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 0
    assert PAPER.grade_frq(answer, "Psoriasis").verdict == 0


@pytest.mark.parametrize("shape", PLANS)
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_plan_after_a_committed_answer_names_nothing(shape: str, wrap: str) -> None:
    answer = wrap.format(shape.format(t="Psoriasis", w="eczema"))
    read = extract(answer)
    assert (read.category, read.diagnosis) == ("single", "Psoriasis")
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 1


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
def test_the_truth_only_in_the_plan_never_scores(grader: CraftMDGrader) -> None:
    answer = "Final Diagnosis: Eczema. Recommend biopsy to rule out psoriasis."
    assert grader.grade_frq(answer, "Psoriasis").verdict == 0


#: A hedge written as a sentence or clause of its own after the answer: "T. W cannot be
#: excluded." keeps W open as "T, but W cannot be excluded" does (the paper's step 1).
KEPT_OPEN = ["{t}. {w} cannot be excluded.", "{t}; {w} cannot be ruled out.",
             "{t}. {w} has not been ruled out.", "{t}. {w} is not excluded.",
             "{t}.\n{w} cannot be entirely excluded."]
SET_ASIDE = ["{t}. {w} was excluded.", "{t}. {w} is unlikely.", "{t}; {w} ruled out."]


@pytest.mark.parametrize("shape", KEPT_OPEN)
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_hedge_of_its_own_after_the_answer_keeps_the_disease_open(shape: str,
                                                                    wrap: str) -> None:
    # "cannot be excluded" was read as "excluded": the hedged name was set aside
    answer = wrap.format(shape.format(t="Psoriasis", w="Eczema"))
    assert extract(answer).category == "multiple"
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 0
    assert STRICT.grade_frq(answer, "Eczema").verdict == 0


@pytest.mark.parametrize("shape", SET_ASIDE)
def test_a_name_said_to_be_excluded_is_still_set_aside(shape: str) -> None:
    read = extract(shape.format(t="Psoriasis", w="Eczema"))
    assert (read.category, read.diagnosis) == ("single", "Psoriasis")
