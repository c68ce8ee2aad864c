"""Red team round 17: a tool call's escaped arguments, a bracket around the whole answer, a
"Most likely" column, "favoured over" in brackets, "T >> W", and the names under a
differential heading after the answer (docs/grading.md, round 17; issue 31, *Main and
concurrent* and *Alternatives*; the paper's step 1)."""

from __future__ import annotations

import json

import pytest
from helpers import POLICIES, assert_linear, scores

from pytest_agentclinic.grading.reading.sections import differential_after


def _tool_call(*names: str) -> str:
    """An OpenAI chat completion's tool calls, each naming one diagnosis in its arguments
    (a JSON object sent as a string)."""
    calls = [{"type": "function", "function": {
        "name": "submit_diagnosis", "arguments": json.dumps({"diagnosis": n})}} for n in names]
    return json.dumps({"tool_calls": calls})


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a tool call's arguments, an escaped JSON string: the object it encodes
    ('{"name": "submit_diagnosis", "arguments": "{\\"diagnosis\\": \\"Psoriasis\\", '
     '\\"confidence\\": 0.8}"}', "psoriasis"),
    (_tool_call("Psoriasis"), "psoriasis"),
    ("Final Diagnosis: " + _tool_call("Celiac disease"), "celiac disease"),
    # a bracket around the whole answer is typography
    ("Answer: (Psoriasis)", "psoriasis"), ("DIAGNOSIS READY: (Celiac disease)", "celiac disease"),
    ("Final Diagnosis: [Graves disease].", "Graves disease"),
    # a summary table with a "Most likely" column over one row
    ("| Most likely | Key features |\n|---|---|\n| Psoriasis | silvery plaques |",
     "psoriasis"),
    # the bracket of "T favored over W", "T more likely than W"
    ("Psoriasis (favoured over eczema)", "psoriasis"),
    ("Celiac disease (preferred to tropical sprue)", "celiac disease"),
    ("Celiac disease (more likely than tropical sprue)", "celiac disease"),
    # the answer itself listed again under the differential heading still answers
    ("Final diagnosis: Psoriasis\n\nDifferential:\n1. Psoriasis - 70%\n2. Eczema - 20%",
     "psoriasis"),
])
def test_scores(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # "T >> W" ranks two names as "T > W" does: alternatives, no name "T W"
    ("Eczema >> psoriasis", "psoriasis"), ("Psoriasis >> eczema", "psoriasis"),
    ("Celiac disease \u226b tropical sprue", "celiac disease"),
    # two tool calls naming two conditions are two answers
    (_tool_call("Psoriasis", "Lichen planus"), "psoriasis"),
    # the mirrors: the truth set aside
    ("Eczema (favoured over psoriasis)", "psoriasis"),
    ("Tropical sprue (more likely than celiac disease)", "celiac disease"),
    # the truth only under a differential heading after another answer: set aside, sure
    ("Bee sting. Differential: psoriasis", "psoriasis"),
    ("Bee sting\n\nDifferential:\n- psoriasis\n- eczema", "psoriasis"),
    ("Dog bite. DDx: celiac disease, tropical sprue", "celiac disease"),
])
def test_does_not_score(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (False, True)


def test_an_option_letter_in_brackets_is_still_no_name() -> None:
    assert scores("Answer: (C)", "psoriasis") == (False, True)


def test_the_names_under_a_differential_heading() -> None:
    assert differential_after("Bee sting. Differential: psoriasis, eczema") == (
        "psoriasis", "eczema")
    assert differential_after("T\n\n**Differential diagnoses:**\n1. **W** - less likely\n"
                              "2. W2 (20%)\n\n## Plan\nBiopsy") == ("W", "W2")
    # a differential that opens the answer is its list, not names set aside after it
    assert differential_after("Differential: psoriasis, eczema") == ()


def test_new_patterns_are_linear() -> None:
    # each new pattern on 64 KB of its own keywords
    from pytest_agentclinic.grading.reading import extract, markers, sections
    texts = {markers._MUCH_GREATER: "a " + " >> " * 16000,
             sections._DIFFERENTIAL_AFTER: ". - " * 16000 + "ddx",
             sections._ITEM_END: "a" + " " * 64000, sections._ITEM_MARK: " -" * 32000,
             extract._WHOLE_BRACKET: "(" + "a" * 64000}
    assert_linear(texts)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # the disease suspected behind a finding with a stronger hedge than "possibly" is the
    # answer, as after "possibly" (docs/grading.md, the row "possibly ... after a finding")
    ("Fever, probably pneumonia", "pneumonia"),
    ("Fever, most likely pneumonia", "pneumonia"),
    ("Jaundice (likely hepatitis A)", "hepatitis A"),
    ("Hepatomegaly, presumably hepatitis A.", "hepatitis A"),
])
def test_a_disease_probably_behind_a_finding_is_the_answer(answer: str, truth: str,
                                                            policy: str) -> None:
    assert scores(answer, truth, policy) == (True, True)


@pytest.mark.parametrize(("answer", "truth"), [
    # two suspects are alternatives; a first name hedged too is a ranked candidate; the
    # finding set beside a disease is not explained by it
    ("Fever, probably pneumonia or influenza", "pneumonia"),
    ("Fever, probably pneumonia", "influenza"),
])
def test_a_finding_with_two_suspects_or_the_wrong_one_does_not_score(answer: str,
                                                                     truth: str) -> None:
    assert scores(answer, truth) == (False, True)
