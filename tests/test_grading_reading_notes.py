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


# --- notes beside the diagnosis: its side, site, course, status, code ------------------------

@pytest.mark.parametrize("answer", [
    "Retinal detachment (left eye)", "Retinal detachment (acute)",
    "Retinal detachment (working diagnosis)", "Retinal detachment (acute phase)",
    "Retinal detachment (emergency)", "Retinal detachment, left eye",
    "Retinal detachment, ICD-10 code H33.0", "Retinal detachment, moderate severity",
])
def test_a_note_beside_the_diagnosis_is_no_second_disease(answer: str) -> None:
    assert scores(answer, "Retinal detachment") == [1, 1]


def test_a_note_is_no_item_of_a_list() -> None:
    # "Otitis media, acute, left ear" was a list of three diagnoses
    assert scores("Otitis media, acute, left ear", "Acute otitis media") == [1, 1]
    assert scores("Impetigo with eczema herpeticum, moderate severity", "Eczema herpeticum",
                  PAPER) == [1, 1]


@pytest.mark.parametrize("answer", ["Retinal detachment (glaucoma)",
                                    "Retinal detachment (left eye glaucoma)"])
def test_a_disease_in_brackets_is_still_a_second_one(answer: str) -> None:
    assert scores(answer, "Retinal detachment") == [0, 0]


@pytest.mark.parametrize("answer", [
    "Prostatitis (ICD-10: N41.1)", "Prostatitis. I hope this helps!",
    "Prostatitis, moderate severity", "Prostatitis\n\nPlease consult a urologist.",
])
def test_what_follows_a_bare_head_noun_keeps_it_a_family_word(answer: str) -> None:
    assert scores(answer, "Chronic bacterial prostatitis") == [0, 0]


def test_a_place_beside_the_head_noun_is_read_with_it_not_as_a_second_disease() -> None:
    verdict = STRICT.grade_frq("Final Diagnosis: Psoriasis (scalp)", "Scalp psoriasis")
    assert "several diagnoses" not in verdict.reason
    assert "head noun alone" not in verdict.reason


# --- closing lines: advice, a courtesy, a disclaimer -----------------------------------------

@pytest.mark.parametrize("closing", [
    "Please consult a healthcare professional for confirmation.", "I hope this helps!",
    "Disclaimer: this is not medical advice.",
])
def test_a_closing_line_after_the_answer_names_nothing(closing: str) -> None:
    answer = f"Impetigo with eczema herpeticum\n\n{closing}"
    assert scores(answer, "Eczema herpeticum", PAPER) == [1, 1]
    assert scores(f"Eczema herpeticum\n\n{closing}", "Eczema herpeticum") == [1, 1]


def test_a_closing_line_that_keeps_another_disease_open_still_offers_it() -> None:
    answer = "Eczema herpeticum\n\nPlease consult a dermatologist; psoriasis is possible."
    assert scores(answer, "Eczema herpeticum") == [0, 0]
