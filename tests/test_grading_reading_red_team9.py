"""Red team round 9: final answers as other models write them, read alike in both protocols
(docs/grading.md, round 9; the paper's step 1: the main diagnosis, with a concurrent one
beside it; several possible diagnoses or none score 0)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED
from test_grading_judging_rules import scored

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.labels import heads_differential
from pytest_agentclinic.grading.reading.sections import fold_sub_items

STRICT = CraftMDGrader()
T, W = "Granulomatosis with polyangiitis", "Sarcoidosis"
# a truth whose name the terminology relates to few others: a name read wrong around it is
# left to the moderator, which the shapes below must not reach
T2 = "Acute pericarditis"


def _grade(shape: str, wrap: str) -> int:
    truth = "Lisch nodules" if shape.startswith("Lisch") else T
    return STRICT.grade_frq(wrap.format(shape.format(t=T, w=W)), truth).verdict


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_ranked_list_a_later_label_answers_reads_alike_in_both_protocols(wrap: str) -> None:
    # "Final Diagnosis:" over the ranked list declared the list (multiple) in CRAFT-MD's
    # protocol only; "DIAGNOSIS READY:" over it read "Most likely: T"
    assert _grade("1. {t} (85%)\n2. {w} (10%)\n\nMost likely: {t}", wrap) == 1
    assert _grade("1. {t} (60%)\n2. {w} (40%)\n\nMost likely: {w}", wrap) == 0
    assert _grade("1. {t}\n2. {w}", wrap) == 0  # no label answers: still a list of two


def test_heads_differential_needs_a_ranked_list_and_a_label_after_it() -> None:
    assert heads_differential("1. A (85%)\n2. B (10%)\n\nMost likely: A")
    assert not heads_differential("1. A\n2. B")
    assert not heads_differential("1. Diagnosis: A\n2. Treatment: B")
    assert not heads_differential("A\n\nMost likely: A")


@pytest.mark.parametrize("shape", [
    "Based on the clinical presentation, my assessment is **{t}**.",
    "The correct answer is: {t}", "The correct answer is (B) {t}.",
    "ICD-10 L40.0 \u2013 {t}", "L40.0: {t}",
    "- **{t}**\n  - cervical lymphadenopathy\n  - leukocytosis",
    "{t} with underlying chronic kidney disease",
    "You asked whether this is {w}. It is {t}.",
    "Lisch nodules, a condition that fits the history and the examination findings."])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_committed_answer_scores(shape: str, wrap: str) -> None:
    # read as "my assessment", "correct answer", the code, a list of three, another disease
    # beside the truth, or the restated question
    assert _grade(shape, wrap) == 1, extract(wrap.format(shape.format(t=T, w=W)))


@pytest.mark.parametrize("shape", [
    "Low suspicion for {t}.", "{t} (not favored)",
    "Screen for {t}.", "Start prophylaxis against {t}.",
    "Her mother has {t}; this patient has {w}.",
    "You asked whether this is {t}. It is {w}.",
    "The differential diagnosis includes {t}.",
    # the mirrors of this round's readings, on target before and kept so: a name set aside
    # in a sentence, a relative's disease with the patient's after it, a sub-item under
    # another diagnosis, an underlying condition beside another
    "{t} is not favored; {w}", "His father died of {t}. {w}.",
    "- **{w}**\n  - {t}", "{w} with underlying {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_doubted_targeted_or_beside_does_not_score(shape: str, wrap: str) -> None:
    # each was the truth as the answer (a bracket read as a note), or a name of unknown
    # words ("Low suspicion for T", "Screen for T", "Her mother", "You asked whether this",
    # "differential diagnosis includes T") left to the moderator, which a model that always
    # answers Yes accepted: now the rules decide it, whatever the moderator says
    for truth in (T, T2):
        answer = wrap.format(shape.format(t=truth, w=W))
        assert STRICT.grade_frq(answer, truth).verdict == 0
        assert not scored(answer, truth)[0], answer


def test_categories_of_the_new_readings() -> None:
    assert extract("Screen for psoriasis.").category == "none"
    assert extract("The differential diagnosis includes psoriasis.").category == "multiple"
    assert extract("Psoriasis (not favored)").category == "none"
    assert extract("Low suspicion for psoriasis.").category == "none"
    # a short form in brackets that does not abbreviate the name stays with it
    assert extract("Progressive multifocal encephalopathy (PML) (not favored)").category == "none"
    # "assessment is" leads only after its owner: "further assessment is needed" is no lead
    assert extract("Final Diagnosis: Endometriosis is suspected, but further assessment is "
                   "needed to rule out cardiac causes.").diagnosis == "Endometriosis"
    # "Test for X" may name the test, which a question may ask for: not read as a target
    assert extract("Test for thyroid function.", conditions_only=False).category == "single"
    # "fits" before the evidence leads to no name ("history" was read as the answer)
    assert extract("Lisch nodules, a condition that fits the history.").diagnosis != "history"


@pytest.mark.parametrize(("raw", "folded"), [
    ("- A\n  - b\n  - c", "- A; b; c"),
    ("- A\n  - b\n- C\n  - d", "- A; b\n- C; d"),
    ("Final Diagnosis: - A\n  - b", "Final Diagnosis: - A; b"),
    ("- A\n- B", "- A\n- B"),
    ("A\n  - b", "A\n  - b"),  # no item above: nothing to nest under
    ("- A (X)\n - b", "- A (X); b"),  # spacing collapsed to one space before
])
def test_fold_sub_items(raw: str, folded: str) -> None:
    assert fold_sub_items(raw) == folded
