"""Red team round 7: final answers as small open chat models write them. A numbered answer
whose first item is the diagnosis and whose later items are its treatment or follow-up
names one diagnosis; a closing sentence on the answer's line ("I hope this helps!") names
nothing; an option's letter alone ("The answer is C.") names no diagnosis in a free
response (the paper's step 1: "If there are no diagnoses present, return 'None'")."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
GPA = "Granulomatosis with polyangiitis"

NUMBERED_PARTS = ["1. Diagnosis: {t}\n2. Treatment: supportive care\n3. Follow-up: in two weeks",
                  "1. **Diagnosis:** {t}\n2. **Management:** topical steroids",
                  "1) Diagnosis: {t}\n2) Next steps: biopsy\n3) Prognosis: good"]


@pytest.mark.parametrize("shape", NUMBERED_PARTS)
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_numbered_answer_whose_later_items_are_its_plan_names_one(shape: str,
                                                                    wrap: str) -> None:
    # the items were read as a list of diagnoses: multiple
    answer = wrap.format(shape.format(t=GPA))
    assert extract(answer).category == "single"
    assert STRICT.grade_frq(answer, GPA).verdict == 1
    assert PAPER.grade_frq(answer, GPA).verdict == 1


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_numbered_differential_item_after_the_diagnosis_is_set_aside(wrap: str) -> None:
    answer = wrap.format("1. Diagnosis: Eczema\n2. Differential: Psoriasis\n3. Treatment: x")
    read = extract(answer)
    assert (read.category, read.diagnosis) == ("single", "Eczema")
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 0


def test_a_numbered_list_of_diagnoses_is_still_a_list() -> None:
    for answer in ("1. Major depressive disorder\n2. Treatment-resistant depression",
                   "Final Diagnosis: 1. Psoriasis\n2. Eczema"):
        assert extract(answer).category == "multiple"


@pytest.mark.parametrize("closing", ["I hope this helps! Let me know if you have questions.",
                                     "Hope this helps.", "Please consult a dermatologist."])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_closing_sentence_on_the_answer_line_names_nothing(closing: str, wrap: str) -> None:
    # the closing sentence was read beside the name, which split "granulomatosis with
    # polyangiitis" into a disease and a concurrent one
    answer = wrap.format(f"{GPA}. {closing}")
    assert STRICT.grade_frq(answer, GPA).verdict == 1
    assert STRICT.grade_frq(answer, "Polyangiitis").verdict == 0


def test_a_closing_that_keeps_a_disease_open_keeps_it() -> None:
    answer = "Final Diagnosis: Psoriasis. Please see a dermatologist; lupus is also possible."
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 0


@pytest.mark.parametrize("answer", ["The answer is C.", "The correct answer is (B)",
                                    "Answer is C", "My answer is option B.", "Answer: A"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_an_option_letter_alone_names_no_diagnosis(answer: str, wrap: str) -> None:
    # "The answer is C." was read as the name "answer", which a moderator was asked about
    read = extract(wrap.format(answer))
    assert read.category == "none"


@pytest.mark.parametrize("answer", ["The answer is psoriasis.", "Answer: (C) Psoriasis",
                                    "Option C: Psoriasis"])
def test_an_option_letter_with_the_name_names_it(answer: str) -> None:
    read = extract(answer)
    assert (read.category, read.diagnosis.lower()) == ("single", "psoriasis")


@pytest.mark.parametrize("name", ["Hepatitis C", "Vitamin A deficiency", "C. difficile colitis"])
def test_a_letter_inside_a_name_is_no_option(name: str) -> None:
    assert extract(f"The answer is {name}.").category == "single"


ADHD = "Attention-deficit/hyperactivity disorder"


@pytest.mark.parametrize("mark", ["\u2705", "\u2714\ufe0f", "\u2b50", "\U0001FA7A"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_chat_mark_before_the_name_names_nothing(mark: str, wrap: str) -> None:
    # the mark stayed part of the name, which then no longer read whole: "multiple"
    answer = wrap.format(f"{mark} {ADHD}")
    assert STRICT.grade_frq(answer, ADHD).verdict == 1


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_cross_mark_rejects_its_line(wrap: str) -> None:
    # "\u274c T" was read as the answer "\u274c T", and scored
    answer = wrap.format("\u274c Psoriasis\n\u2705 Eczema")
    read = extract(answer)
    assert (read.category, read.diagnosis) == ("single", "Eczema")
    assert STRICT.grade_frq(answer, "Psoriasis").verdict == 0
    assert STRICT.grade_frq(answer, "Eczema").verdict == 1


@pytest.mark.parametrize("shape", ["{t} with {w} on the differential",
                                   "{t} with {w} in the differential.",
                                   "{t}, with {w} also on the differential"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_name_on_the_differential_is_a_second_possible_diagnosis(shape: str,
                                                                   wrap: str) -> None:
    # "with" read the weighed name as a concurrent one: the main diagnosis scored (its name
    # unknown to the terminology, "ruptured vasa previa", so no second disease)
    answer = wrap.format(shape.format(t="Spiradenoma", w="ruptured vasa previa"))
    assert extract(answer).category == "multiple"
    assert STRICT.grade_frq(answer, "Spiradenoma").verdict == 0


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_an_overlap_of_two_diseases_names_two(wrap: str) -> None:
    # "X/Y overlap" was one name, graded the same as X
    answer = wrap.format("Brown-Sequard syndrome/DiGeorge syndrome overlap")
    assert extract(answer).category == "multiple"
    assert STRICT.grade_frq(answer, "Brown-Sequard syndrome").verdict == 0


def test_a_cross_mark_rejects_its_whole_line() -> None:
    # read as "Not T - W" ("not T, but W"), the line's own kind after its dash was the answer
    truth = "Anorexia nervosa - purging type"
    answer = f"DIAGNOSIS READY: \u274c {truth}\n\u2705 Esophageal atresia"
    assert STRICT.grade_frq(answer, truth).verdict == 0
    assert extract(f"Final Diagnosis: \u274c {truth}").category == "none"
