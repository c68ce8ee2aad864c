"""Red team round 19: variants of issue 31's kinds generated on the terminology's truths, where
a rule held for the template's wording only: JSON keys that label the main diagnosis, a list
of one or a list at the top; a dash, a semicolon or a table's bar where a comma or a colon
was read; "W was considered" set off by a dash, with the evidence as the contrast's subject,
or in brackets; a state before its features joined by a dash or "presenting with"; the
protocol's marker in underscores (docs/grading.md, round 19)."""

from __future__ import annotations

import pytest
from helpers import POLICIES, WRAPPERS, assert_linear, scores

from pytest_agentclinic.grading.judging.rules import grade_text
from pytest_agentclinic.grading.reading.roles import main_label


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a JSON key that labels the main diagnosis as a bracket does ("(primary diagnosis)")
    ('```json\n{"primary_diagnosis": "eosinophilic gastritis"}\n```', "eosinophilic gastritis"),
    ('{"assessment": {"primary_diagnosis": "pneumonia"}}', "pneumonia"),
    ('{"primary_diagnosis": "pneumonia", "differential": ["asthma", "bronchitis"]}',
     "pneumonia"),
    ('{"working_dx": "pneumonia", "confidence": "moderate"}', "pneumonia"),
    # a list of one is one answer; a list at the top is read as a list under a key
    ('```json\n{"diagnoses": ["pneumonia"]}\n```', "pneumonia"),
    ('```json\n[{"diagnosis": "pneumonia"}]\n```', "pneumonia"),
    # a dash sets "complicated by" off as a comma does
    ("Pneumonia \u2014 complicated by sepsis", "pneumonia"),
    ("Pneumonia - complicated by abscess formation", "pneumonia"),
    # a reason after a semicolon, a confidence after a table's bar
    ("Pneumonia; classic presentation", "pneumonia"),
    ("Pneumonia; typical findings", "pneumonia"),
    ("Pneumonia | confidence: high", "pneumonia"),
    # "W was considered": a dash before "but", the evidence as the subject, in brackets
    ("Appendicitis was considered \u2014 but pneumonia fits better", "pneumonia"),
    ("Appendicitis was considered, but the findings favor pneumonia", "pneumonia"),
    ("Appendicitis was considered, but the clinical picture points to pneumonia", "pneumonia"),
    ("Pneumonia (appendicitis was considered, but pneumonia fits better)", "pneumonia"),
])
def test_scores(answer: str, truth: str, policy: str, wrap: str) -> None:
    assert scores(wrap.format(answer), truth, policy) == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
def test_the_marker_in_underscores(policy: str) -> None:
    # markdown's emphasis closing on the marker: "_DIAGNOSIS READY:_" (read as "READY: T")
    assert scores("_DIAGNOSIS READY:_ pneumonia", "pneumonia", policy) == (True, True)
    assert scores("Thinking...\n\n__DIAGNOSIS READY:__ pneumonia", "pneumonia",
                  policy) == (True, True)


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # the mirrors: the truth weighed and set aside, listed beside another, or in a
    # secondary role of a JSON answer
    ('{"primary_diagnosis": "appendicitis", "differential": ["pneumonia"]}', "pneumonia"),
    ('```json\n{"diagnoses": ["pneumonia", "appendicitis"]}\n```', "pneumonia"),
    ('[{"diagnosis": "pneumonia"}, {"diagnosis": "appendicitis"}]', "pneumonia"),
    ("Pneumonia was considered \u2014 but appendicitis fits better", "pneumonia"),
    ("Pneumonia was considered, but the findings favor appendicitis", "pneumonia"),
    ("Appendicitis (pneumonia was considered, but appendicitis fits better)", "pneumonia"),
    ("Appendicitis | pneumonia | confidence: high", "pneumonia"),
    # another disease's reason after a semicolon stays its own
    ("Appendicitis; classic presentation", "pneumonia"),
])
def test_does_not_score(answer: str, truth: str, policy: str, wrap: str) -> None:
    assert scores(wrap.format(answer), truth, policy) == (False, True)


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("answer", [
    # a state before the features it shows, joined by a dash or "presenting with": the
    # truth only suggested beside it, as after "with" (round 4); read as a dash's reason or
    # a clause, the truth had been the answer, or lost (and a moderator asked)
    "Wrist fracture \u2014 features suggestive of pneumonia",
    "Bee sting presenting with features suggestive of pneumonia",
    "Lactation - findings consistent with pneumonia",
    "Appendicitis \u2014 complicated by pneumonia",
])
def test_a_state_or_disease_first_does_not_score_strict(answer: str, wrap: str) -> None:
    assert scores(wrap.format(answer), "pneumonia", "strict") == (False, True)


def test_a_finding_before_its_features_still_names_the_disease() -> None:
    # a sign is no disease: "Fever - features suggestive of T" names T (round 4)
    assert scores("Fever - features suggestive of pneumonia", "pneumonia") == (True, True)


def test_the_json_list_reads_one_line_per_object() -> None:
    extraction = grade_text('[{"diagnosis": "pneumonia"}]', ["pneumonia"])[0]
    assert extraction.diagnosis == "pneumonia"


def test_main_labels() -> None:
    assert main_label("primary diagnosis") and main_label("working dx")
    assert not main_label("differential diagnosis") and not main_label("secondary")


def test_new_patterns_are_linear() -> None:
    # each new pattern on 64 KB of its own keywords
    from pytest_agentclinic.grading.reading import joins, markers, negations, support
    texts = {
        negations._NEGATED_ASIDES[0]: "(a was considered, but " * 2800,
        joins.ALTERNATIVE: "a | confidence " * 4400,
        joins.COMPLICATION: " - complicated by" * 3800,
        support._FEATURES_JOINT: " - features suggestive" * 3000,
        markers._READY: "_diagnosis_ready_" * 3800,
    }
    assert_linear(texts)
