"""Red team round 10: the main diagnosis with a complication or findings in new joins, a
section before the label that answers, and the truth excluded with its bracket
(docs/grading.md, round 10; the paper's step 1: the main diagnosis, with a concurrent one
beside it; several possible diagnoses or none score 0)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED
from test_grading_judging_rules import scored

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.clauses import findings_after_colon
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.labels import heads_differential
from pytest_agentclinic.grading.terms.concurrent import finding

STRICT = CraftMDGrader()
T, W = "Sarcoidosis", "Gout"
# a truth with "with" in its name, found whole before a companion
T2 = "Drug reaction with eosinophilia and systemic symptoms"


def _verdict(shape: str, wrap: str, truth: str = T) -> int:
    return STRICT.grade_frq(wrap.format(shape.format(t=truth, w=W)), truth).verdict


@pytest.mark.parametrize("shape", [
    "{t} (complicated by sepsis)", "{t} (now complicated by acute kidney injury)",
    "{t}: fever, rash, lymphadenopathy", "{t} with a rash",
    "{t} with bilateral hilar lymphadenopathy",
    "Summary: a 45-year-old with fever, night sweats and a cough.\n\nDiagnosis: {t}",
    "Reasoning: fever and cough.\n\nDiagnosis: {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_main_diagnosis_with_its_companions_scores(shape: str, wrap: str) -> None:
    # a bracket's complication read as a disease beside T; "T: fever" read as one name;
    # "rash" and "hilar ..." read as diseases; "Final Diagnosis:" over a summary
    # declared the summary too (several labelled answers)
    answer = wrap.format(shape.format(t=T))
    assert STRICT.grade_frq(answer, T).verdict == 1, extract(answer)


@pytest.mark.parametrize("shape", [
    "{t}, now complicated by acute kidney injury", "{t} \u2014 see below.\n\nWhy: it fits.",
    "{t}, further complicated by sepsis"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_name_with_with_in_it_is_found_whole_before_new_joins(shape: str, wrap: str) -> None:
    # "now complicated by" and a pointer to the reasons ("see below") had left the name cut
    # at its "with"
    assert _verdict(shape, wrap, T2) == 1


@pytest.mark.parametrize("shape", [
    # the mirrors, on target before and kept so
    "{w} (complicated by {t})", "{w}: fever, {t}",
    "Summary: fever and cough.\n\nDiagnosis: {w}\nDifferential: {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_beside_another_does_not_score(shape: str, wrap: str) -> None:
    answer = wrap.format(shape.format(t=T, w=W))
    assert STRICT.grade_frq(answer, T).verdict == 0, extract(answer)
    assert not scored(answer, T)[0], answer


@pytest.mark.parametrize("shape", ["{t} (fifth disease) was excluded by imaging; {w} confirmed.",
                                   "{t} (fifth disease) was ruled out by serology; {w}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_excluded_with_its_bracket_does_not_score(shape: str, wrap: str) -> None:
    # a bracket that restates the name (another name, an abbreviation that spells none of
    # its initials) kept the name from its negation: the truth was read as the answer
    truth = "Erythema infectiosum"
    answer = wrap.format(shape.format(t=truth, w=W))
    assert STRICT.grade_frq(answer, truth).verdict == 0, extract(answer)
    assert not scored(answer, truth)[0], answer


@pytest.mark.parametrize("shape", ["{t} (with classic presentation)",
                                   "{t} (with high confidence)", "{t} (see below)",
                                   "{t} (with hilar adenopathy)"])
def test_a_reason_or_a_finding_in_brackets_stays_beside(shape: str) -> None:
    # on target before and kept so: a pointer to the reasons is cut after a dash now, and
    # stays an aside in brackets
    assert _verdict(shape, "DIAGNOSIS READY: {}") == 1


def test_findings_after_colon_reads_only_findings_as_with() -> None:
    assert findings_after_colon("Sarcoidosis: fever, rash and lymphadenopathy") == \
        "Sarcoidosis with fever, rash and lymphadenopathy"
    assert findings_after_colon("Sarcoidosis: Gout") == "Sarcoidosis: Gout"
    assert findings_after_colon("Sarcoidosis: fever, Gout") == "Sarcoidosis: fever, Gout"
    assert findings_after_colon("Sarcoidosis") == "Sarcoidosis"


def test_a_section_before_the_label_that_answers_heads_it() -> None:
    assert heads_differential("Summary: fever.\n\nDiagnosis: T")
    assert heads_differential("**Case summary:** fever.\n\nFinal answer: T")
    assert not heads_differential("Summary: fever and a cough.")
    assert not heads_differential("T\n\nDiagnosis: T")


@pytest.mark.parametrize("name", ["rash", "skin rash", "a generalized rash",
                                  "bilateral hilar lymphadenopathy", "ascites",
                                  "axillary lymphadenopathy"])
def test_signs_by_icd10cm_chapter_r_and_normalised_words_are_findings(name: str) -> None:
    assert finding(name)


@pytest.mark.parametrize("name", ["maculopapular rash", "diaper rash", "gout",
                                  "iron deficiency anemia"])
def test_a_word_of_kind_still_makes_a_disease(name: str) -> None:
    assert not finding(name)
