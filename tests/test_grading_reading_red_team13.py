"""Red team round 13: a note's closing "Summary:" line, struck-through text, a "Less likely:"
label, "I'm going with T", "diagnostic of T", a family history alone, "unlikely to be T",
shares after a colon, and "T is a red herring" (docs/grading.md, round 13; the paper's step
1: the main diagnosis; several possible diagnoses or none score 0)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED, RIGHT, WRONG, decided

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract

STRICT = CraftMDGrader()
T, W, W2 = "Sarcoidosis", "Gout", "Psoriasis"


def _said(shape: str, wrap: str = "{}") -> str:
    return wrap.format(shape.format(t=T, w=W, w2=W2))


@pytest.mark.parametrize("shape", [
    # a SOAP note closed by "Summary:", "Impression:" or "Conclusion:" instead of "A:"
    "S: two weeks of cough\nO: hilar nodes on the radiograph\n\nSummary: {t}",
    "S: two weeks of cough\nO: hilar nodes\nImpression: {t}\nP: biopsy",
    "S: two weeks of cough\nO: hilar nodes\n\nBottom line: {t}",
    "S: two weeks of cough\nO: hilar nodes\n\nIn summary, the most likely diagnosis is {t}.",
    # struck-through text is deleted: the answer is what is left
    "~~{w}~~ {t}", "<del>{w}</del> {t}",
    # "Less likely:" after the answer sets its name aside, as "W less likely" does
    "Leading diagnosis: {t}. Less likely: {w}.",
    # a present-tense commitment, and findings that settle the diagnosis
    "I'm going with {t}.", "The findings are diagnostic of {t}.",
    # the mirror of a red herring: the misleading name is set aside
    "{w} is a red herring; the diagnosis is {t}."])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_committed_answers_of_round_13_score(shape: str, wrap: str) -> None:
    assert STRICT.grade_frq(_said(shape, wrap), T).verdict == 1, extract(_said(shape, wrap))


@pytest.mark.parametrize("shape", [
    # the note's summary answers another disease; the truth only the patient's worry
    "S: worried about {t}\nO: tender nodes\n\nSummary: {w}",
    "S: worried about {t}\nO: tender nodes\n\nOverall, {w}.",
    # the truth struck through
    "~~{t}~~ {w}", "Final diagnosis: ~~{t}~~ {w}",
    # the truth under "Less likely:", in the family, unlikely, or a red herring
    "Leading diagnosis: {w}. Less likely: {t}.", "Family history of {t}.",
    "Unlikely to be {t}; more consistent with {w}.",
    "{t} is a red herring; the diagnosis is {w}.",
    # shares after a colon weigh two diagnoses
    "{t}: 50%, {w}: 50%"])
def test_answers_of_round_13_that_must_not_score(shape: str) -> None:
    # sure in both protocols: each had been left to a moderator, or read as the truth
    assert decided(_said(shape), T) == WRONG


def test_a_summary_before_the_answer_still_retells_the_case() -> None:
    # the mirror, on target before: outside a note, "Summary:" retells the case (round 10)
    said = "Summary: a 40-year-old with cough and hilar nodes.\n\nDiagnosis: {t}"
    assert decided(_said(said), T) == RIGHT


def test_a_confidence_after_a_colon_is_no_share() -> None:
    # the mirror: one share after the answer weighs nothing
    assert decided(_said("{t} (confidence: 85%)"), T) == RIGHT


@pytest.mark.parametrize("shape", [
    # "this patient has T": the patient named with "this", as "the patient has T"
    "This patient has {t}.",
    # a problem list's status after the name is no second condition
    "Assessment: {t}, stable", "{t}, improving",
    # the bracket form of "rather than W", an idiom of commitment, one guess as the answer
    "{t} (rather than {w})", "My money is on {t}.", "Best guess: {t}", "Ans: {t}",
    # a suspicion the next clause turns from
    "Concern for {w}; however, {t} is favoured.",
    # an ICD-11 code in brackets is a code, not a name: the name before it is read whole
    "**Granulomatosis with polyangiitis** (ICD-11: 4A44.A1)"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_more_committed_answers_of_round_13_score(shape: str, wrap: str) -> None:
    truth = "Granulomatosis with polyangiitis" if "ICD-11" in shape else T
    said = _said(shape, wrap)
    assert STRICT.grade_frq(said, truth).verdict == 1, extract(said)


@pytest.mark.parametrize("shape", [
    # the next of a ranking under the answer is another possible diagnosis
    "First choice: {t}\nSecond choice: {w}", "{t}\nRunner-up: {w}",
    # a suspicion turned from, the bracket of "rather than", an offer without "it"
    "Concern for {t}; however, {w} is favoured.", "{w} (rather than {t})",
    "{t} \u2014 pending biopsy; could also be {w}",
    "{t} - pending biopsy; could also be Drug reaction with eosinophilia and systemic symptoms"])
def test_more_answers_of_round_13_that_must_not_score(shape: str) -> None:
    assert decided(_said(shape), T) == WRONG


def test_the_speaker_of_a_refusal_is_no_name() -> None:
    # "I" had been read as the name before the refusal where the question may ask for more
    # than a diagnosis (a test or a treatment), so a moderator model was asked about "I"
    said = "I can't diagnose Croup without an examination."
    assert extract(said, conditions_only=False).category == "none"
    # the mirror: a name before the refusal still counts
    assert extract("Psoriasis; I cannot confirm without a biopsy",
                   conditions_only=False).diagnosis == "Psoriasis"


def test_a_verb_after_could_also_be_offers_no_diagnosis() -> None:
    # the mirror: what the disease may be treated with is no second diagnosis
    assert decided(_said("{t}; could also be treated with steroids"), T) == RIGHT
