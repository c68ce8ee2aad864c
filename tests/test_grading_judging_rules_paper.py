"""Issue 31, round 3: the ``paper`` policy reads CRAFT-MD's grader text (docs/grading.md).

Each rule cites the paper's grader (``../shared/papers/craft-md.txt``, steps 1 and 2), a
relation of the terminology or a convention docs/grading.md states; the truths here are
textbook pairs of our own, not cases of the shared data.
"""

from __future__ import annotations

import asyncio
from typing import NoReturn

import pytest
from helpers import make_case

from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.judging.rules import SUBTYPE_LEVELS, decide
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.terms.equivalence import judge

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")


@pytest.mark.parametrize(("answer", "truth"), [
    # one level: the paper's own example ("lymphoma" for Hodgkin's lymphoma), families too
    ("Lymphoma", "Hodgkin lymphoma"),
    ("Arthritis", "rheumatoid arthritis"),
    ("Dementia", "frontotemporal dementia"),
    # two levels: one disease with its variants (the dermatologists accepted "melanoma")
    ("Melanoma", "superficial spreading melanoma"),
])
def test_paper_accepts_a_broader_name_the_truth_is_a_subtype_of(answer: str,
                                                                 truth: str) -> None:
    relation = judge(answer, truth)
    assert relation.relation == "broader"
    assert (relation.height or 0) <= SUBTYPE_LEVELS or not relation.family
    graded = PAPER.grade_frq(f"Final Diagnosis: {answer}", truth)
    assert (graded.verdict, graded.sure) == (1, True)


@pytest.mark.parametrize(("answer", "truth"), [
    # a family two levels up or more: a class of the truth's class
    ("Hepatitis", "chronic hepatitis C"),
    ("Purpura", "thrombotic thrombocytopenic purpura"),
    ("Leukemia", "chronic myeloid leukemia"),
    ("Anemia", "sickle cell anemia"),
    ("Anemia", "pernicious anemia"),
    ("Leukemia", "acute promyelocytic leukemia"),
])
def test_paper_rejects_a_family_two_levels_or_more_above_the_truth(
        answer: str, truth: str) -> None:
    relation = judge(answer, truth)
    # the terminology still calls it broader; the decision reads how far and how wide
    assert relation.relation == "broader" and relation.family
    assert (relation.height or 0) > SUBTYPE_LEVELS
    for text in (answer, f"Final Diagnosis: {answer}", f"DIAGNOSIS READY: {answer}"):
        graded = PAPER.grade_frq(text, truth)
        # sure: no moderator model is asked to accept what the rule rejects
        assert (graded.verdict, graded.sure, graded.relation) == (0, True, "broader")
        assert "no subtype" in graded.reason
    assert not decide(extract(answer), [truth], (), "paper").correct
    # strict reads it as a family as well
    assert STRICT.grade_frq(answer, truth).verdict == 0


def test_the_subtype_bound_reads_the_truth_not_a_companion() -> None:
    # a class of classes named beside the truth takes nothing from the truth itself
    assert PAPER.grade_frq("Sickle cell anemia", "sickle cell anemia").verdict == 1
    assert PAPER.grade_frq("Sickle cell anemia with splenomegaly",
                           "sickle cell anemia").verdict == 1


class _NeverAsked:
    """A moderator that fails the test when asked: the rules must be sure."""

    model = "never-asked"
    policy = "paper"

    async def judge(self, case: Case, diagnosis: str, sample: int) -> NoReturn:
        raise AssertionError(f"the moderator was asked about {diagnosis!r}")


@pytest.mark.parametrize("protocol", ["DIAGNOSIS READY: Anemia", "Final Diagnosis: Anemia"])
def test_a_run_under_paper_rejects_a_class_of_classes_without_asking_a_model(
        protocol: str) -> None:
    case = Case.model_validate({**make_case(1, diagnosis="Sickle cell anemia"), "dataset": "t"})
    grade = asyncio.run(grade_answer(protocol, case, _NeverAsked(), 0,  # type: ignore[arg-type]
                                     policy="paper"))
    assert grade.category == "single" and not grade.verdict.correct
    assert grade.verdict.decided_by == "offline" and "no subtype" in grade.verdict.reason
