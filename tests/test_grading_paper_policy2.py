"""Issue 31, "`paper` means the paper", round 2: the ``paper`` policy against CRAFT-MD's
grader text (``../shared/papers/craft-md.txt``, steps 1 and 2; docs/grading.md, "The paper
policy against the recorded verdicts, round 2").

The truths, choices and answers are textbook examples of our own, not cases of the shared
data. ``strict`` is pinned beside each rule: no rule here changes it.
"""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")

KIDNEY = ("Pyelonephritis", "Cystitis", "Nephrolithiasis", "Appendicitis")
ORBIT = ("Orbital cellulitis", "Preseptal cellulitis", "Sinusitis", "Conjunctivitis")
LUNG = ("Aspergilloma", "Bronchiectasis", "Tuberculosis", "Sarcoidosis")


@pytest.mark.parametrize(("answer", "truth", "choices"), [
    # the truth concurrent with another of the case's choices
    ("Nephrolithiasis with pyelonephritis", "pyelonephritis", KIDNEY),
    ("Final Diagnosis: Sinusitis with orbital cellulitis", "orbital cellulitis", ORBIT),
    ("Bronchiectasis and aspergilloma", "aspergilloma", LUNG),
    # the truth the main diagnosis, another choice concurrent with it
    ("Pyelonephritis with nephrolithiasis", "pyelonephritis", KIDNEY),
])
def test_paper_matches_the_truth_beside_another_choice(answer: str, truth: str,
                                                        choices: tuple[str, ...]) -> None:
    # The paper's step 2 saw the correct answer alone, never the case's choices, and its
    # step 1 returned the main diagnosis with its concurrent ones: the truth named there
    # scores, whatever other choice it stands beside.
    graded = PAPER.grade_frq(answer, truth, choices)
    assert (graded.verdict, graded.sure) == (1, True), graded.reason
    # strict: another disease beside the main one is a second diagnosis, as before
    assert STRICT.grade_frq(answer, truth, choices).verdict == 0


@pytest.mark.parametrize(("answer", "truth", "choices"), [
    # alternatives stay several diagnoses (step 1: "more than one diagnoses present")
    ("Cystitis or pyelonephritis", "pyelonephritis", KIDNEY),
    # the truth only as the cause of another choice: no role the paper's grader compared
    ("Pyelonephritis caused by nephrolithiasis", "nephrolithiasis", KIDNEY),
    # two choices and neither the truth
    ("Cystitis with nephrolithiasis", "pyelonephritis", KIDNEY),
])
def test_paper_still_rejects_two_choices_without_the_truth_in_a_paper_role(
        answer: str, truth: str, choices: tuple[str, ...]) -> None:
    assert PAPER.grade_frq(answer, truth, choices).verdict == 0
    assert STRICT.grade_frq(answer, truth, choices).verdict == 0
