"""Red team round 11: a chain of reasoning that retells the case before its conclusion, a
quote block and a sentence of evidence below the name, a clinician's query, a diagnosis that
cannot be ruled in, and a revision labelled by its word alone (docs/grading.md, round 11;
the paper's step 1: the main diagnosis; several possible diagnoses or none score 0)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.labels import heads_differential
from pytest_agentclinic.grading.reading.retelling import retells
from pytest_agentclinic.grading.reading.statement import bare_name

STRICT = CraftMDGrader()
T, W = "Sarcoidosis", "Gout"

_LONG = ("The patient is a 34-year-old who reports three weeks of fever, fatigue and night "
         "sweats. On examination there is tenderness on palpation and mild pallor. The blood "
         "count shows a mild anaemia, and the chest radiograph is clear. Taken together, "
         "this is {t}.")


def _verdict(shape: str, wrap: str) -> int:
    return STRICT.grade_frq(wrap.format(shape.format(t=T, w=W)), T).verdict


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_retold_case_before_its_conclusion_is_read_alike_in_both_protocols(wrap: str) -> None:
    # "Final Diagnosis:" over the prose declared the prose ("examination shows tender
    # nodes"), where "DIAGNOSIS READY:" read the conclusion
    shape = ("The patient has had two weeks of fever and a rash. The examination shows tender "
             "nodes, and the tests are in keeping. So the answer is {t}.")
    assert _verdict(shape, wrap) == 1, extract(wrap.format(shape.format(t=T)))


def test_the_label_heads_a_retold_case_only_before_a_later_label() -> None:
    assert heads_differential("The patient has a rash. So the answer is Gout.")
    assert not heads_differential("The patient has a rash and fever.")


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_conclusion_after_the_examination_and_tests_retold_scores(wrap: str) -> None:
    # the examination and the blood count were read as the answer; "Taken together, this
    # is T" was no sentence that answers
    assert _verdict(_LONG, wrap) == 1


@pytest.mark.parametrize("sentence", [
    "On examination there is tenderness on palpation",
    "The blood count shows a mild anaemia"])
def test_the_examination_and_the_tests_are_retold(sentence: str) -> None:
    assert retells(sentence)


@pytest.mark.parametrize("shape", [
    "> **{t}**\n> The history and the examination fit.",
    "**{t}**\nThe history and the examination fit.",
    "> Final diagnosis: {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_quote_block_and_a_sentence_of_evidence_below_the_name_score(shape: str,
                                                                      wrap: str) -> None:
    # the quote block's ">" stayed in the names, and the sentence of evidence was read as a
    # second name on its own line (a list)
    assert _verdict(shape, wrap) == 1


def test_a_sentence_of_evidence_is_no_bare_name() -> None:
    assert not bare_name("The history and the examination fit.")
    assert bare_name("Sarcoidosis")


@pytest.mark.parametrize("shape", [
    "?{t}", "Query {t}", "{t} cannot be ruled in.", "Initially {t}; revised: {w}",
    # the mirrors, on target before and kept so
    "{w} ?{t}", "> Differential: {t}\n\nFinal diagnosis: {w}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_query_a_diagnosis_not_ruled_in_and_a_revision_away_do_not_score(shape: str,
                                                                          wrap: str) -> None:
    # "?T" was read as T; "Query T", "T cannot be ruled in" and "Initially T" were names
    # left to the moderator, which a model that always answers Yes accepted
    answer = wrap.format(shape.format(t=T, w=W))
    assert extract(answer).diagnosis in ("", W), extract(answer)
    assert _verdict(shape, wrap) == 0


@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_revision_towards_the_truth_scores(wrap: str) -> None:
    assert _verdict("Initially {w}; revised: {t}", wrap) == 1


@pytest.mark.parametrize("shape", [
    "Diagnosis: {t} (ICD-10: L40.0; SNOMED CT: 9014002)",
    "<diagnosis name=\"{t}\" confidence=\"high\"/>",
    "| Diagnosis | Confidence |\n|---|---|\n| {t} | 85% |"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_codes_attributes_and_a_table_after_the_label_score(shape: str, wrap: str) -> None:
    # the bracket's ";" ended the sentence inside it; a tag's attributes were no value; a
    # table right after "Final Diagnosis:" was no record
    assert _verdict(shape, wrap) == 1


def test_a_snomed_code_is_a_note_beside_a_name_with_with_in_it() -> None:
    truth = "Microphthalmia with limb anomalies"
    assert STRICT.grade_frq(f"{truth} (SNOMED CT: 9014002)", truth).verdict == 1


@pytest.mark.parametrize("shape", [
    "<diagnosis name=\"{w}\" alternative=\"{t}\"/>",
    # the mirrors, on target before and kept so
    "{w} (ICD-10: M10.9; SNOMED CT: 90560007); {t}",
    "| Diagnosis | Confidence |\n|---|---|\n| {w} | 70% |\n| {t} | 30% |"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_as_an_attribute_or_a_second_row_does_not_score(shape: str, wrap: str) -> None:
    assert _verdict(shape, wrap) == 0


def test_qualifiers_alone_name_no_choice() -> None:
    # "moderate to severe" beside the truth was the same as a choice "urinary tract
    # infection": qualifiers alone were read as the choice's name less its site words
    from pytest_agentclinic.grading.terms.equivalence import compare

    assert compare("moderate to severe", "Urinary tract infection").kind == "different"
    assert compare("malignant melanoma", "Superficial spreading melanoma").kind != "different"
