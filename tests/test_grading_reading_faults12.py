"""Issue 31, "Main and concurrent" and "`paper` means the paper": the reading faults the
paper policy's disagreements with the recorded verdicts found (docs/grading.md, "Three
reading faults the paper policy found"). Of the three, one rule was kept: a kind of a
disease named after it ("X (possibly Y)", "X (e.g. Y)", "X, specifically Y", "X, namely Y",
Y a kind of X) is the diagnosis; the other two were measured and dropped (the section says
why), so they have no test here.

The truths and answers are textbook examples of our own, not cases of the shared data. The
rule is pinned under both policies, beside mirrors it must leave as they were.
"""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
BOTH = pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])


# "X (possibly Y)", "X (e.g. Y)", "X, specifically Y", "X, namely Y": Y a kind of X ------


@BOTH
@pytest.mark.parametrize(("answer", "named"), [
    ("Lymphoma (specifically Hodgkin lymphoma)", "Hodgkin lymphoma"),
    ("Lymphoma, namely Hodgkin lymphoma", "Hodgkin lymphoma"),
    ("Leishmaniasis (e.g. cutaneous leishmaniasis)", "cutaneous leishmaniasis"),
    ("Final Diagnosis: Leishmaniasis, e.g. cutaneous leishmaniasis", "cutaneous leishmaniasis"),
    ("Inflammatory bowel disease (possibly Crohn disease)", "Crohn disease"),
])
def test_a_kind_named_after_its_class_is_the_diagnosis(grader: CraftMDGrader, answer: str,
                                                        named: str) -> None:
    # the answer names one disease, the more specific: right for it, and a subtype (so no)
    # of the class it was named after (the paper's step 2: "if Diagnosis 2 is a subtype of
    # Diagnosis 1 respond with no")
    graded = grader.grade_frq(answer, named, ())
    assert (graded.category, graded.extracted, graded.verdict) == ("single", named, 1), \
        graded.reason
    broader = answer.removeprefix("Final Diagnosis: ").split(" (")[0].split(",")[0]
    assert grader.grade_frq(answer, broader, ()).verdict == 0


@BOTH
def test_a_kind_named_after_its_class_is_graded_against_its_siblings(
        grader: CraftMDGrader) -> None:
    # Crohn disease, not inflammatory bowel disease, is graded against ulcerative colitis
    graded = grader.grade_frq("Inflammatory bowel disease (possibly Crohn disease)",
                              "ulcerative colitis", ())
    assert (graded.verdict, graded.sure) == (0, True), graded.reason


@BOTH
@pytest.mark.parametrize("answer", [
    "Anxiety (possibly hyperthyroidism)",  # not a kind of anxiety: another possible disease
    "Anxiety, e.g. hyperthyroidism",
    # several examples are several possible diagnoses, kinds of the name or not
    "Thyroid disease (e.g., hyperthyroidism, thyroiditis, goiter)",
])
def test_a_hedged_name_of_another_disease_stays_an_alternative(grader: CraftMDGrader,
                                                                answer: str) -> None:
    assert grader.grade_frq(answer, "hyperthyroidism", ()).category == "multiple"
