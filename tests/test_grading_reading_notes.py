"""Issue 31, section 3: what real models write around a committed answer that names no second
diagnosis (how sure they are, how they would confirm it) leaves the answer as it is, and a
doubt that keeps another disease open ("I would not exclude Y") still offers two."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
WRAPPERS = ("DIAGNOSIS READY: {}", "Final Diagnosis: {}")
NOTES = ["{} (confidence: high)", "{} (high confidence)", "{} (confidence 85%)",
         "{} (probability: 0.8)", "{} [confidence: moderate]", "{} - confidence: high",
         "{}: high certainty", "I think it's {}, but I would confirm it with a biopsy.",
         "{}, but we'd like to confirm it with a culture"]


def scores(answer: str, truth: str, grader: CraftMDGrader = STRICT) -> list[int]:
    """The verdict in each protocol's wrapping."""
    return [grader.grade_frq(wrap.format(answer), truth).verdict for wrap in WRAPPERS]


@pytest.mark.parametrize("note", NOTES)
def test_a_note_keeps_a_bare_head_noun_a_family_word(note: str) -> None:
    # the guard rail read the note as a second mention, so the head noun alone scored
    assert scores(note.format("Prostatitis"), "Chronic bacterial prostatitis") == [0, 0]


@pytest.mark.parametrize("note", NOTES)
def test_a_note_keeps_a_name_with_its_with_whole(note: str) -> None:
    truth = "Eosinophilic granulomatosis with polyangiitis"
    assert scores(note.format(truth), truth) == [1, 1]
    assert scores(note.format(truth), truth, PAPER) == [1, 1]


@pytest.mark.parametrize("note", NOTES)
def test_a_note_after_a_wrong_answer_does_not_score(note: str) -> None:
    assert scores(note.format("Psoriasis"), "Atopic dermatitis", PAPER) == [0, 0]


@pytest.mark.parametrize("answer", [
    "Eczema (low probability of psoriasis)",
    "Eczema, but I would not exclude psoriasis",
    "Eczema; I would not exclude psoriasis",
    "Eczema, but I won't rule out psoriasis",
    "Eczema, but I would also consider psoriasis",
    "Eczema. I would not exclude psoriasis.",
])
def test_a_doubt_naming_another_disease_still_offers_it(answer: str) -> None:
    assert scores(answer, "Eczema") == [0, 0]
    assert scores(answer, "Psoriasis", PAPER) == [0, 0]
