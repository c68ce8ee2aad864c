"""Red team round 16: round 15's open shapes decided from sources, and qualifiers of
severity, course and side around a slip, a near-miss sibling or an ambiguous abbreviation
(docs/grading.md, round 16; issue 31, *Guard rails*; the paper's step 1)."""

from __future__ import annotations

import pytest
from helpers import POLICIES, assert_linear, scores

from pytest_agentclinic.grading.terms.equivalence import compare
from pytest_agentclinic.grading.terms.kinds import kind


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a word in "-ing" alone is a noun, the answer's name, where the terminology knows it
    ("Drowning", "drowning"), ("Stuttering", "stuttering"), ("Hoarding", "hoarding"),
    # "infection with" opens no modifier: the head of the name
    ("Most likely an infection with the hepatitis C virus.", "hepatitis C virus"),
    # a referral kept open under "Consider:" is a step of the plan, no second name
    ("Diagnosis: Psoriasis\nConsider: referral to dermatology", "psoriasis"),
    # a slip behind a word of severity, course or side
    ("Severe Celiac disaase", "celiac disease"), ("Left-sided Graves disaase", "Graves disease"),
])
def test_scores(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a name kept open by "(not yet excluded)", "(not excluded)", "(not ruled out)"
    ("Psoriasis. Eczema (not yet excluded).", "psoriasis"),
    ("Psoriasis. Eczema (not excluded).", "psoriasis"),
    ("Psoriasis, eczema (not ruled out)", "psoriasis"),
    # a near-miss sibling behind a word of severity is still a name of its own
    ("Severe osteoblastoma", "osteoclastoma"),
    # an abbreviation of several diseases behind a word of severity is still ambiguous
    ("Severe CHM", "complete hydatidiform mole"),
    ("I-cell disease", "mucolipidosis type I"),
    # two lines each marked chosen: two names, a list (round 15: "two marked main")
    ("\u2705 Psoriasis\n\u2705 Eczema", "psoriasis"),
    ("Final Diagnosis: \u2705 Psoriasis\n\u2705 Eczema", "psoriasis"),
    # a defense mechanism in "-ing" names no condition the terminology knows
    ("Splitting", "splitting"),
])
def test_does_not_score(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (False, True)


def test_a_generic_word_opening_a_name_narrows_it() -> None:
    # "illness" of illness anxiety disorder (DSM-5) modifies the name: narrower, not the
    # same name; a narrower answer does not count (the paper's step 2), a moderator decides
    relation = compare("illness anxiety disorder", "anxiety")
    assert (relation.kind, relation.sure) == ("narrower", False)
    assert scores("Illness anxiety disorder", "anxiety disorder") == (False, False)
    assert compare("disease of the liver", "liver disease").kind == "same"


def test_a_referral_is_a_step_of_the_plan() -> None:
    assert kind("referral to dermatology") == "treatment"
    assert kind("reaction to contrast") == "condition"


def test_new_patterns_are_linear() -> None:
    # each new pattern on 64 KB of its own keywords
    from pytest_agentclinic.grading.reading import clauses, negations, roles, typography
    from pytest_agentclinic.grading.terms import qualifiers
    texts = {qualifiers._LEAD: "left sided " * 5900,
             clauses._GERUND: "ing" * 21000, typography._CHECK_LINE: ":\u2705 " * 21000,
             negations._NEGATED_ASIDES[0]: "(not yet excluded " * 3700,
             roles._STILL_OPEN: "a, b (not yet " * 4700}
    assert_linear(texts)
