"""A name said to fit the evidence ("T is consistent with the history", "T fits the clinical
picture"): the evidence names nothing, so the name before it is the answer (the paper's
grader, step 1: return the diagnosis the answer gives). "The history is consistent with T"
reads the other way round, and a name after the evidence still counts as a second one."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT = CraftMDGrader()
T, W = "Lichen planus", "Psoriasis"


def _grade(answer: str, wrap: str) -> int:
    return STRICT.grade_frq(wrap.format(answer.format(t=T, w=W)), T).verdict


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("answer", [
    # read "history" (and the other evidence words) as the diagnosis before
    "{t} is consistent with the history.",
    "{t} is consistent with her history and examination.",
    "{t} is compatible with the laboratory results.",
    "{t} fits the history.",
    "{t} fits the clinical picture.",
    # kept as before
    "{t} is consistent with the presentation.",
    "{t}, a condition that fits the history and the examination findings.",
    "The history is consistent with {t}.",
])
def test_a_name_said_to_fit_the_evidence_is_the_answer(answer: str, wrap: str) -> None:
    assert _grade(answer, wrap) == 1


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("answer", [
    "{w} is consistent with the history.",
    "{w} fits the clinical picture.",
    "{w} is consistent with the history, or {t}.",
    "The history is consistent with {w}.",
])
def test_another_name_said_to_fit_the_evidence_does_not_score(answer: str, wrap: str) -> None:
    assert _grade(answer, wrap) == 0
