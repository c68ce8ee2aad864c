"""Red team round 8: final answers as other models write them, read as a clinician would.
Transport artifacts (HTML entities, a markdown link, a chat template's tokens, an escaped
line break), a "Correction:" of the answer, a SOAP note's Assessment, a letter to the
patient, "You do not have X", "This is X", "s/p X" alone, an instruction template's
"### Response:" heading, "Most likely:" after a ranked list, and a table right after the
protocol's label (docs/grading.md, round 8; the paper's step 1: the main diagnosis)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.typography import untransported

STRICT = CraftMDGrader()
T, W = "Granulomatosis with polyangiitis", "Sarcoidosis"


@pytest.mark.parametrize("shape", [
    "[{t}](https://example.org/wiki/x)", "Diagnosis:&nbsp;<i>{t}</i>", "Final answer:\\n{t}",
    "<|im_start|>assistant\n{t}<|im_end|>", "{t}<|eot_id|>", "{w}\n\nCorrection: {t}",
    "Not {w}; this is {t}.", "Clinically, this is {t}.", "This is {t}.",
    "In summary, your symptoms are caused by {t}.",
    "S: two weeks of cough\nO: crackles\nA: {t}\nP: biopsy",
    "Dear patient,\n\nYou most likely have {t}.\n\nKind regards,\nYour doctor",
    "### Response:\nThe diagnosis is {t}.",
    "| Diagnosis | Probability |\n|---|---|\n| {t} | 0.8 |\n| {w} | 0.1 |\n\n"
    "**Final diagnosis: {t}**"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_committed_answer_scores(shape: str, wrap: str) -> None:
    # each read as no diagnosis, a fragment ("&nbsp", "Response", "your symptoms", "S: ..."),
    # several, or the answer before its correction
    answer = wrap.format(shape.format(t=T, w=W))
    assert STRICT.grade_frq(answer, T).verdict == 1, extract(answer)


@pytest.mark.parametrize("shape", [
    "{t}\n\nCorrection: {w}", "You do not have {t}; you have {w}.",
    "S: worried about {t}\nO: normal\nA: {w}\nP: reassurance", "s/p {t}",
    "{w}\\n{t}", "{w} &amp; {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_set_aside_past_or_beside_does_not_score(shape: str, wrap: str) -> None:
    # the corrected, denied, worried-about or past name was read as the answer, or the pair
    # as one unknown name a moderator was asked about
    answer = wrap.format(shape.format(t=T, w=W))
    read = extract(answer)
    assert read.category != "single" or read.diagnosis.lower() != T.lower()
    assert STRICT.grade_frq(answer, T).verdict == 0


def test_status_post_alone_names_no_current_diagnosis() -> None:
    assert extract("s/p Psoriasis").category == "none"
    assert extract("s/p appendectomy, now presenting with psoriasis").category == "single"


@pytest.mark.parametrize(("raw", "read"), [
    ("A &amp; B", "A and B"), ("[Gout](http://x.org/gout)", "Gout"), ("a\\nB", "a\nB"),
    ("$\\neq$", "$\\neq$"), ("A&P: x", "A&P: x"), ("<|eot_id|>", "\n")])
def test_transport_artifacts_are_read_as_what_they_stand_for(raw: str, read: str) -> None:
    assert untransported(raw) == read


@pytest.mark.parametrize("answer", ["It is important to note that this may be gout.",
                                    "That is all.", "It is a difficult case."])
def test_this_is_heads_no_name_where_none_follows(answer: str) -> None:
    read = extract(answer)
    assert read.category == "none"


def test_most_likely_label_after_a_ranked_list_commits() -> None:
    answer = "DIAGNOSIS READY: 1. Psoriasis (85%)\n2. Eczema (10%)\n\nMost likely: Psoriasis"
    assert (extract(answer).category, extract(answer).diagnosis) == ("single", "Psoriasis")
    assert extract("Most likely: Psoriasis\nAlternative: Eczema").category == "multiple"


def test_a_soap_note_needs_its_narrative_parts() -> None:
    read = extract("Subjective: itch\nObjective: plaques\nAssessment: Psoriasis\nPlan: steroids")
    assert (read.category, read.diagnosis) == ("single", "Psoriasis")


@pytest.mark.parametrize("answer", ["\ufeffEssential thrombocythemia",
                                    "Diagnosis\uff1aEssential thrombocythemia",
                                    "Clinically, this is Essential thrombocythemia."])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_a_byte_order_mark_a_full_width_colon_and_a_name_after_this_is(answer: str,
                                                                      wrap: str) -> None:
    # the mark stayed in the name, the full-width colon was no label's, and "this is
    # Essential ..." was read as the judgement "It is essential to ..."
    read = extract(wrap.format(answer))
    assert (read.category, read.diagnosis) == ("single", "Essential thrombocythemia")


@pytest.mark.parametrize("answer", [
    "Final Diagnosis: This is an AI error; a diagnosis cannot be made without more questions.",
    "Final Diagnosis: This is a medical emergency. Immediate evaluation is required.",
    "This is an incomplete diagnostic scenario; more information is needed.",
    "No diagnosis required; this is a routine prenatal check-up.",
    "Final Diagnosis: It is inappropriate to provide a diagnosis without more information.",
    "Final Diagnosis: It is critical to perform an electrocardiogram to confirm it."])
def test_this_is_before_a_refusal_or_the_exchange_names_nothing(answer: str) -> None:
    # read as "none" before "This is T." named T; a refusal or what the exchange is stays one
    assert extract(answer).category == "none"
