"""A heading of its own before the name ("Verdict: T", "Prediction: T", "Doctor: T") heads
the answer, as "Answer:" does; a heading that sets the name aside or gives a history
("Rejected: T", "Previous diagnosis: T", "Considered: T") names no diagnosis of the patient
now (docs/grading.md, *A heading of its own*; the paper's step 1: the diagnosis given)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.prefaces import drop_heading

STRICT = CraftMDGrader()
PAPER = CraftMDGrader(policy="paper")
T, W = "Sarcoidosis", "Gout"


def _said(shape: str, wrap: str = "{}") -> str:
    return wrap.format(shape.format(t=T, w=W))


@pytest.mark.parametrize("shape", [
    "Verdict: {t}", "Prediction: {t}", "Classification: {t}", "Doctor: {t}", "AI: {t}",
    "**Result:** {t}", "## Interpretation: {t}", "Final thoughts: {t}", "Summary: {t}",
    "Identified condition: {t}",
    # once the first heading's name is set aside, the next heading heads the answer
    "Considered: {w}\nVerdict: {t}", "History: {w}\nDoctor: {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
def test_a_neutral_heading_heads_the_answer(shape: str, wrap: str,
                                            grader: CraftMDGrader) -> None:
    assert grader.grade_frq(_said(shape, wrap), T).verdict == 1, extract(_said(shape, wrap))


@pytest.mark.parametrize("shape", [
    "Rejected: {t}", "Not: {t}", "Wrong: {t}", "Doubtful: {t}", "Also considered: {t}",
    "**Rejected**: {t}", "Previous diagnosis: {t}", "Past medical history: {t}",
    "History: {t}", "Considered: {t}\nVerdict: {w}", "History: {t}\nDoctor: {w}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
def test_a_heading_that_sets_the_name_aside_names_no_diagnosis(
        shape: str, wrap: str, grader: CraftMDGrader) -> None:
    decision = grader.grade_frq(_said(shape, wrap), T)
    # sure: no moderator model is asked, so none can say Yes to it
    assert (decision.verdict, decision.sure) == (0, True), extract(_said(shape, wrap))


@pytest.mark.parametrize("text", [
    # a name the sources know, or one opening with a name they know, is no heading
    "Psoriasis: plaque type", "Papulopustular rosacea: ruled out", "Hepatitis B: chronic",
    # a disease by its words ("-itis"), a heading of another role, a query
    "Lymphangitis carcinomatosa: extensive", "Differential: gout", "Q: gout?",
    "Symptoms: fever", "Etiology: gout",
    # a heading on a later line, or no heading at all
    "Gout\nVerdict: gout", "Gout: verdict"])
def test_what_is_no_neutral_heading_is_kept(text: str) -> None:
    assert drop_heading(text) == text


def test_a_neutral_heading_is_dropped_with_its_emphasis() -> None:
    assert drop_heading("**Verdict:** gout") == "gout"
    assert drop_heading("Model 3 output: gout") == "gout"
