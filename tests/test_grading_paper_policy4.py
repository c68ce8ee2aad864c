"""Issue 31, "`paper` means the paper", round 4: rules found by reading fold A's
disagreements with the recorded GPT-4 verdicts again, under both policies (docs/grading.md,
"The recorded verdicts, round 4").

The truths and answers are our own; the specifiers are DSM-5's ("Coding and Recording
Procedures" of the depressive and the bipolar disorders), not cases of the shared data.
"""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")

MDD, BIPOLAR_1, BIPOLAR_2 = ("major depressive disorder", "bipolar I disorder",
                             "bipolar II disorder")


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # the episode, as DSM-5 records it after the name
    ("Bipolar I disorder, current episode manic", BIPOLAR_1),
    ("**Final Diagnosis:** Bipolar I Disorder, current episode manic.", BIPOLAR_1),
    ("Bipolar II disorder, current episode hypomanic, with mixed features", BIPOLAR_2),
    # DSM-5's own wording "current or most recent": no alternative
    ("Bipolar I disorder, current or most recent episode manic, severe, with "
     "mood-congruent psychotic features", BIPOLAR_1),
    ("Bipolar I disorder, most recent episode depressed, severe, with anxious distress",
     BIPOLAR_1),
    # the course and the remission: no items of a list
    ("Major depressive disorder, single episode, in full remission", MDD),
    ("Final diagnosis: major depressive disorder, recurrent episode, in partial remission, "
     "with seasonal pattern", MDD),
    ("Major depressive disorder, single episode, with melancholic features", MDD),
    ("Major depressive disorder, recurrent episode, with peripartum onset", MDD),
    ("Bipolar II disorder, with rapid cycling, current episode depressed", BIPOLAR_2),
])
def test_dsm5_specifiers_after_the_name_are_no_second_disorder(
        grader: CraftMDGrader, answer: str, truth: str) -> None:
    # "current episode manic" was a second disease beside the main one under strict;
    # "single episode, in full remission" and "current episode manic, with mixed features"
    # made a list of three, and "current or most recent" two alternatives, under both
    graded = grader.grade_frq(answer, truth)
    assert (graded.verdict, graded.sure) == (1, True), graded.reason


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # a specifier names no disorder: the episode's kind is not the truth
    ("Bipolar I disorder, current episode manic", "mania"),
    ("Bipolar II disorder, current episode depressed", MDD),
    # another disorder beside or against the one specified is read as before
    ("Generalized anxiety disorder, panic disorder, major depressive disorder, single "
     "episode", MDD),
    ("Major depressive disorder or bipolar II disorder, current episode depressed", MDD),
    ("Cyclothymic disorder, current episode hypomanic", BIPOLAR_2),
])
def test_dsm5_specifiers_match_nothing_else(grader: CraftMDGrader, answer: str,
                                            truth: str) -> None:
    assert grader.grade_frq(answer, truth).verdict == 0


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # complications unnamed: concurrent, and none named
    ("Acute cholecystitis with possible complications.", "acute cholecystitis"),
    ("**Final Diagnosis:** Acute otitis media with complications", "acute otitis media"),
    ("Plaque psoriasis with no complications", "plaque psoriasis"),
    ("Acute pancreatitis, potential complications", "acute pancreatitis"),
    # the need of more evaluation before a firmer diagnosis
    ("Sarcoidosis; further evaluation needed for a definitive diagnosis.", "sarcoidosis"),
    ("Final diagnosis: Lyme disease (further information required for specific diagnosis)",
     "lyme disease"),
    ("Hashimoto thyroiditis, additional workup recommended to confirm the diagnosis",
     "hashimoto thyroiditis"),
])
def test_notes_on_what_may_follow_name_no_second_disease(grader: CraftMDGrader, answer: str,
                                                         truth: str) -> None:
    # strict read "complications" and "further evaluation needed for ... diagnosis" as a
    # second disease beside the main one (several diagnoses); CRAFT-MD's step 1 returns the
    # main diagnosis beside either
    graded = grader.grade_frq(answer, truth)
    assert (graded.verdict, graded.sure) == (1, True), graded.reason


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # complications unnamed name none of them
    ("Acute otitis media with complications", "mastoiditis"),
    # the note alone names no diagnosis
    ("Further evaluation needed for a definitive diagnosis.", "sarcoidosis"),
    ("Possible complications", "acute pancreatitis"),
    # another disease beside the note is still another disease
    ("Sarcoidosis; further evaluation needed to exclude tuberculosis.", "tuberculosis"),
])
def test_notes_on_what_may_follow_match_nothing_else(grader: CraftMDGrader, answer: str,
                                                     truth: str) -> None:
    assert grader.grade_frq(answer, truth).verdict == 0
