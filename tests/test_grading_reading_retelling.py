"""Issue 31: answers as other models write them: the case retold before the diagnosis, the
grounds before the name, and names the sources write with a comma inside them."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.retelling import answers_later, retells
from pytest_agentclinic.grading.reading.statement import bare_name
from pytest_agentclinic.grading.reading.written_names import whole_name_end


@pytest.mark.parametrize(("answer", "diagnosis"), [
    ("The patient presents with itchy plaques on the elbows. The most likely diagnosis is "
     "psoriasis.", "psoriasis"),
    ("The patient has a rash and fever. The most likely diagnosis is measles.", "measles"),
    ("A 45-year-old man presents with itchy plaques on the elbows and knees. Based on these "
     "findings, the most likely diagnosis is psoriasis.", "psoriasis"),
    ("The patient's symptoms include itchy plaques and nail pitting. This is consistent with "
     "psoriasis.", "psoriasis"),
    ("The patient is a 30-year-old woman with joint pain. I suspect rheumatoid arthritis.",
     "rheumatoid arthritis"),
    ("The patient, a 30-year-old woman, presents with plaques on the elbows. Psoriasis.",
     "Psoriasis"),
    ("Let me summarize. The patient has joint pain and morning stiffness. My diagnosis is "
     "rheumatoid arthritis.", "rheumatoid arthritis"),
    ("The key findings are joint pain and morning stiffness. Diagnosis: rheumatoid arthritis.",
     "rheumatoid arthritis"),
    ("She has a history of asthma. The diagnosis is pneumonia.", "pneumonia"),
    ("The patient presents with the findings described above. In conclusion, the diagnosis "
     "is schizophrenia.", "schizophrenia"),
    ("The patient has the history and findings described. I suspect mucormycosis (also known "
     "as zygomycosis).", "mucormycosis"),
])
def test_the_case_retold_before_the_answer_is_passed_over(answer: str, diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == ("single", diagnosis)


@pytest.mark.parametrize(("answer", "category", "diagnosis"), [
    # the first sentence names the answer; a later one weighs others: no answer to prefer
    ("The patient has psoriasis. The differential diagnosis includes eczema.", "single",
     "psoriasis"),
    ("The patient has psoriasis. Eczema is less likely.", "single", "psoriasis"),
    # the sentence after the retelling keeps two open
    ("The patient presents with plaques. Psoriasis or eczema is likely.", "multiple", ""),
    # the name first, the case after it
    ("Psoriasis. The patient has plaques.", "single", "Psoriasis"),
])
def test_a_retelling_yields_only_to_a_sentence_that_answers(answer: str, category: str,
                                                            diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == (category, diagnosis)


def test_what_retells_and_what_answers() -> None:
    assert retells("The patient presents with a rash")
    assert retells("Her symptoms include fever and a rash")
    assert not retells("The findings are consistent with psoriasis")
    assert not retells("Psoriasis")
    assert answers_later("The most likely diagnosis is psoriasis.", bare_name)
    assert answers_later("Psoriasis.", bare_name)
    assert not answers_later("Psoriasis.", bare_name, over_a_name=True)
    assert not answers_later("The differential includes eczema.", bare_name, over_a_name=True)


@pytest.mark.parametrize(("answer", "diagnosis"), [
    ("Given the history of joint pain and morning stiffness, rheumatoid arthritis is the most "
     "likely diagnosis.", "rheumatoid arthritis"),
    ("Given fever, rash and arthralgia, rheumatoid arthritis is the most likely diagnosis.",
     "rheumatoid arthritis"),
    ("Given the onset, the distribution, and the course, psoriasis is the most likely "
     "diagnosis.", "psoriasis"),
    ("In a patient with fever and rash, measles is most likely.", "measles"),
])
def test_the_grounds_before_the_name_are_no_part_of_it(answer: str, diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == ("single", diagnosis)


@pytest.mark.parametrize(("answer", "truth"), [
    ("Hand, Foot, and Mouth Disease", "hand-foot-and-mouth disease"),
    ("**Final Diagnosis:** Hand, foot, and mouth disease.", "hand, foot and mouth disease"),
    ("I suspect hand, foot and mouth disease.", "hand-foot-and-mouth disease"),
    ("Diabetes mellitus, type 2", "type 2 diabetes mellitus"),
    ("Dermatitis, contact", "contact dermatitis"),
])
def test_a_name_the_sources_write_with_a_comma_is_read_whole(answer: str, truth: str) -> None:
    found = extract(answer)
    assert found.category == "single" and "," in found.diagnosis
    assert CraftMDGrader().grade_frq(answer, truth).verdict


@pytest.mark.parametrize("answer", ["Psoriasis, eczema", "Anxiety, depression",
                                    "Fracture, femur", "Hand, foot and mouth disease or "
                                    "herpangina"])
def test_a_list_stays_a_list(answer: str) -> None:
    found = extract(answer)
    assert found.category == "multiple" or len(found.mentions) > 1


def test_only_a_preferred_name_as_written_and_with_a_comma_is_whole() -> None:
    assert whole_name_end("Hand, foot and mouth disease with fever") == len(
        "Hand, foot and mouth disease")
    assert whole_name_end("Fracture, femur") == 0  # the sources write "femur fracture"
    # an "and" alone is the concurrent join it was
    assert whole_name_end("Constitutional delay of growth and puberty") == 0


@pytest.mark.parametrize(("answer", "category", "diagnosis"), [
    # the grounds name nothing, and what follows them refuses
    ("Without sufficient information, a definitive diagnosis cannot be determined.", "none",
     ""),
    # grounds that refuse are kept: what follows them names no diagnosis
    ("Given the insufficient data to determine the most appropriate test, I must ask further "
     "questions to the patient.", "none", ""),
    ("Based on the presented symptoms, the final diagnosis would most likely be aspiration "
     "pneumonia.", "single", "aspiration pneumonia"),
    # a sentence that says no diagnosis can be given is no answer after a retelling
    ("The patient presents no GI symptoms. There is no diagnosis to be made.", "none", ""),
])
def test_grounds_before_a_refusal_name_nothing(answer: str, category: str,
                                               diagnosis: str) -> None:
    found = extract(answer)
    assert (found.category, found.diagnosis) == (category, diagnosis)


@pytest.mark.parametrize(("answer", "truth"), [
    ("Infection with herpes simplex virus", "herpes simplex infection"),
    ("Final diagnosis: infection with Giardia lamblia", "giardiasis"),
    ("Chronic infection with hepatitis B virus", "chronic hepatitis B"),
])
def test_an_infection_with_its_agent_is_one_name(answer: str, truth: str) -> None:
    found = extract(answer)
    assert found.category == "single" and "with" in found.diagnosis
    assert CraftMDGrader().grade_frq(answer, truth).verdict


def test_an_infection_beside_a_disease_stays_beside_it() -> None:
    found = extract("Eczema with infection with Staphylococcus aureus")
    assert found.diagnosis == "Eczema"
    assert [m.role for m in found.mentions] == ["main", "concurrent"]


def test_an_infection_with_its_agent_is_one_name_among_alternatives() -> None:
    found = extract("Endometrial cancer cannot be distinguished from infection with herpes "
                    "simplex virus without biopsy.")
    assert found.category == "multiple"
    found = extract("Pneumonia or infection with influenza virus")
    assert found.category == "multiple"
    assert "infection with influenza virus" in [m.text for m in found.mentions]


@pytest.mark.parametrize("answer", ["Diabetic foot infection with osteomyelitis",
                                    "Urinary tract infection with possible hyperosmolar "
                                    "hyperglycemic state"])
def test_a_named_infection_with_a_condition_keeps_the_condition_beside_it(answer: str) -> None:
    found = extract(answer)
    assert "with" not in found.diagnosis and len(found.mentions) == 2


@pytest.mark.parametrize("answer", [
    "Eczema cannot be excluded. Psoriasis is most likely.",
    "Eczema cannot be excluded. The most likely diagnosis is psoriasis.",
    "Eczema cannot be excluded without a biopsy. Psoriasis.",
])
def test_a_hedge_before_the_answer_keeps_its_disease_open(answer: str) -> None:
    # two possible diagnoses (the paper's step 1); it had read as the single "or Eczema"
    assert extract(answer).category == "multiple"
    assert not CraftMDGrader().grade_frq(answer, "eczema").verdict
