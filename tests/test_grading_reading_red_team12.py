"""Red team round 12: qualified labels ("Final impression:", "Working diagnosis confirmed:"),
a casual commitment, a keycap digit, an inline list numbered "1) ... 2) ...", shares without
brackets, a size before a bare head noun, a second
diagnosis offered as "it could be W", and an alternative after a reason cut by a dash
(docs/grading.md, round 12; the paper's step 1: the main
diagnosis; several possible diagnoses or none score 0)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED, RIGHT, WRONG, decided

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract

STRICT = CraftMDGrader()
T, W, W2 = "Sarcoidosis", "Gout", "Psoriasis"


def _verdict(shape: str, wrap: str, truth: str = T) -> int:
    return STRICT.grade_frq(wrap.format(shape.format(t=truth, w=W, w2=W2)), truth).verdict


@pytest.mark.parametrize("shape", [
    # a qualifier before "impression", a status after the label: read as the label's text
    "Final impression: {t} (clinical diagnosis)", "Working diagnosis confirmed: {t}",
    # "I'd go with T": a casual commitment to one answer, not "I'd go" with T beside it
    "I'd go with {t}.",
    # a keycap digit numbers the one item, as "1." does
    "1\ufe0f\u20e3 {t}",
    # mirrors on target before: a plan or a reason after the answer names nothing
    "{t}. It could be treated with steroids.", "{t} - classic presentation."])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_committed_answers_of_round_12_score(shape: str, wrap: str) -> None:
    assert _verdict(shape, wrap) == 1, extract(wrap.format(shape.format(t=T, w=W, w2=W2)))


@pytest.mark.parametrize("shape", [
    # "it could be W" after the answer, without "also": W kept open
    "{t}, but I'm not sure; it could be {w}.", "{t}. It could be {w}.",
    "{t}, but I'm not sure; it could be Bowen's disease.",
    # the alternative in the next sentence after a reason cut by a dash
    "{t} - pending biopsy. Alternatively, {w}.",
    # a keycap-numbered list, and one numbered "1) ... 2) ..." on one line
    "1\ufe0f\u20e3 {w}\n2\ufe0f\u20e3 {t}", "1) {t} 2) {w} 3) {w2}"])
def test_two_possible_diagnoses_of_round_12_do_not_score(shape: str) -> None:
    # sure in both protocols: "Final Diagnosis: 1) T 2) W" had been left to a moderator
    assert decided(shape.format(t=T, w=W, w2=W2), T) == WRONG


@pytest.mark.parametrize("shape", [
    "{t} 70%, {w} 30%", "{w} 60%, {t} 40%", "{w}: 0.6; {t}: 0.4"])
def test_shares_without_brackets_weigh_two_diagnoses(shape: str) -> None:
    # the share stayed in the name ("T 70%", "W: 0.6"), so the rules were unsure and a
    # moderator model was asked
    assert decided(shape.format(t=T, w=W), T) == WRONG


def test_a_measurement_after_the_answer_is_no_share() -> None:
    # the mirror, on target before: the first item has no share
    extraction = extract("Iron deficiency anemia; hematocrit 26%, transferrin saturation 8%")
    assert extraction.category == "single"


def test_a_size_before_the_head_noun_leaves_it_bare() -> None:
    truth = "Branchial cleft cyst"
    assert decided("A large cyst.", truth) == WRONG
    # a truth written with a size keeps it
    assert decided("Giant cyst", "Giant cyst") == RIGHT
