"""Facts, the elicitation method and each information-gathering measure, on hand-made
transcripts: every definition in metrics/facts.py and metrics/gathering.py is pinned here."""

from __future__ import annotations

from helpers import make_case

from pytest_agentclinic.core.case import Case, PatientActor
from pytest_agentclinic.metrics.conversations import Line, to_lines
from pytest_agentclinic.metrics.facts import Fact, case_facts, conveys, tokens, vignette_facts
from pytest_agentclinic.metrics.gathering import measure

VIGNETTE = ("A 22-year-old man presented with painful lesions on his penis that started 10 days "
            "ago. He denied fever, chills or night sweats. His partner had chlamydia last year. "
            "On examination, small scabbed ulcers are identified on the shaft of the penis. "
            "Which of the following is the most likely diagnosis?")


def said(fact: str, answer: str) -> bool:
    return conveys(tokens(fact), tokens(answer), 0.5)


# --- the matching method, both sides ----------------------------------------------------

def test_lay_words_convey_a_clinical_fact() -> None:
    assert said("Painful lesions on his penis that started 10 days ago.",
                "I have sore spots on my private part, they started 10 days ago and hurt.")
    assert said("He denied fever, chills or night sweats.", "No fever, no chills.")
    assert said("Pruritic erythematous papules on both forearms.",
                "Itchy red bumps on my forearms.")


def test_unrelated_or_partial_answers_do_not_convey_a_fact() -> None:
    assert not said("Painful lesions on his penis that started 10 days ago.",
                    "I don't know.")
    assert not said("His partner had chlamydia last year.", "I work as a teacher.")
    assert not said("Pruritic erythematous papules on both forearms.",
                    "My mother has diabetes and high blood pressure.")
    # a one- or two-token fact needs all of its tokens
    assert not said("Nail pitting.", "My nails are fine.")
    assert said("Nail pitting.", "There is pitting in my nails.")


def test_doctor_words_never_count_as_elicited() -> None:
    facts = vignette_facts("His partner had chlamydia last year.")
    lines = [Line(1, "doctor", "question", "Did your partner have chlamydia last year?"),
             Line(1, "patient", "answer", "I don't know."),
             Line(2, "doctor", "diagnosis", "Final Diagnosis: chlamydia")]
    assert measure(facts, lines).facts_elicited == 0


def test_vignette_sentences_are_the_facts_and_the_question_is_not() -> None:
    facts = vignette_facts(VIGNETTE)
    assert [f.kind for f in facts] == ["history", "history", "history", "exam"]
    assert not any(f.text.endswith("?") for f in facts)


def test_case_facts_are_fields_findings_and_results_with_key_marks() -> None:
    case = Case.model_validate({**make_case(1, key_facts=["Scaly plaques", "a new symptom"]),
                                "dataset": "t"})
    facts = case_facts(case)
    kinds = {f.kind for f in facts}
    assert kinds == {"history", "exam", "test"}
    assert any(f.text == "Temperature: 37.0 C" and f.kind == "exam" for f in facts)
    assert any(f.kind == "test" and "Skin Biopsy" in f.text for f in facts)
    keys = [f for f in facts if f.key]
    assert [k.text for k in keys] == ["Skin: Scaly plaques.", "a new symptom"]


def test_a_converted_vignette_case_yields_each_sentence_once() -> None:
    case = Case(id="v1", dataset="d", objective="o", diagnosis="x", vignette=VIGNETTE,
                patient=PatientActor(demographics="22-year-old man", history=VIGNETTE[:-49]))
    assert len(case_facts(case)) == 4


# --- the per-encounter measures ---------------------------------------------------------

FACTS = [Fact(text="Itchy red rash on both elbows for three weeks.", kind="history", key=True),
         Fact(text="Mother has psoriasis.", kind="history"),
         Fact(text="Skin: silvery scaly plaques on the elbows.", kind="exam", key=True),
         Fact(text="Skin Biopsy: parakeratosis and Munro microabscesses.", kind="test")]


def _talk(*turns: tuple[str, str, str]) -> list[Line]:
    """(kind, doctor text, reply text) per turn; reply by the patient or the lab."""
    out = []
    for n, (kind, ask, reply) in enumerate(turns, 1):
        out.append(Line(n, "doctor", kind, ask, ask.split(":", 1)[-1].strip()))
        if kind == "diagnosis":
            break
        role, rkind = ("measurement", "test_result") if kind == "test_request" else (
            "patient", "answer")
        out.append(Line(n, role, rkind, reply))
    return out


def test_shares_questions_tests_spend_and_turns_to_diagnosis() -> None:
    lines = _talk(("question", "What brings you in?", "An itchy red rash on my elbows, "
                   "three weeks now."),
                  ("question", "Any family history?", "My mother has psoriasis."),
                  ("test_request", "REQUEST TEST: Skin biopsy",
                   "RESULTS: parakeratosis and Munro microabscesses"),
                  ("test_request", "REQUEST TEST: Tzanck smear", "RESULTS: NORMAL READINGS"),
                  ("diagnosis", "DIAGNOSIS READY: psoriasis", ""))
    m = measure(FACTS, lines)
    assert (m.facts, m.facts_elicited, m.key_facts, m.key_facts_elicited) == (4, 3, 2, 1)
    assert m.fact_share == 0.75 and m.key_fact_share == 0.5
    assert m.elicited_at == {0: 1, 1: 2, 3: 3}
    assert (m.questions, m.tests_ordered, m.turns_to_diagnosis) == (2, 2, 5)
    # skin biopsy (CPT 11102+88305, $170) + an unlisted test at the table's default ($20)
    assert m.test_spend_usd == 190.0 and m.tests_unpriced == ["Tzanck smear"]
    assert m.premature_closure is False and m.missed_closure is False


def test_repeated_and_redundant_questions() -> None:
    lines = _talk(("question", "What brings you in today?", "An itchy red rash on my elbows "
                   "for three weeks."),
                  ("question", "So what brings you in today?", "The itchy red rash on my "
                   "elbows, three weeks."),
                  ("question", "Does anyone in your family have skin problems?",
                   "I don't know."),
                  ("question", "How long have you had the rash on your elbows?",
                   "The itchy red rash on my elbows started three weeks ago."))
    m = measure(FACTS, lines)
    assert m.questions == 4
    assert m.repeated_questions == 1  # turn 2 repeats turn 1 (Jaccard >= 0.6)
    assert m.redundant_questions == 2  # turns 2 and 4 only restated fact 0; turn 3 told nothing
    assert m.turns_to_diagnosis is None


def test_premature_closure_is_a_diagnosis_before_any_key_fact() -> None:
    early = _talk(("question", "Any family history?", "My mother has psoriasis."),
                  ("diagnosis", "DIAGNOSIS READY: psoriasis", ""))
    assert measure(FACTS, early).premature_closure is True
    late = _talk(("question", "What brings you in?", "Itchy red rash on my elbows for three "
                  "weeks."), ("diagnosis", "DIAGNOSIS READY: psoriasis", ""))
    assert measure(FACTS, late).premature_closure is False


def test_missed_closure_is_no_diagnosis_although_every_key_fact_was_elicited() -> None:
    everything = _talk(("question", "What brings you in?", "Itchy red rash on my elbows for "
                        "three weeks."),
                       ("test_request", "REQUEST TEST: Physical examination",
                        "RESULTS: Skin: silvery scaly plaques on the elbows"))
    m = measure(FACTS, everything)
    assert m.missed_closure is True and m.premature_closure is False
    assert m.test_spend_usd == 0.0  # the examination is part of the visit
    partial = everything[:2]
    assert measure(FACTS, partial).missed_closure is False


def test_without_key_facts_closure_measures_are_not_defined() -> None:
    plain = [f.model_copy(update={"key": False}) for f in FACTS]
    m = measure(plain, _talk(("diagnosis", "DIAGNOSIS READY: psoriasis", "")))
    assert m.premature_closure is None and m.missed_closure is None and m.key_fact_share is None


def test_recorded_conversation_messages_become_turns() -> None:
    lines = to_lines([{"role": "system", "content": "You are an AI doctor."},
                      {"role": "assistant", "content": "What brings you in?"},
                      {"role": "user", "content": "A rash."},
                      {"role": "assistant", "content": "Final Diagnosis: eczema"}])
    assert [(u.turn, u.role, u.kind) for u in lines] == [
        (1, "doctor", "question"), (1, "patient", "answer"), (2, "doctor", "diagnosis")]


def test_an_answer_completing_a_fact_told_in_pieces_is_not_redundant() -> None:
    facts = [Fact(text="Itchy red rash on both elbows.", kind="history"),
             Fact(text="Works night shifts at a bakery, smokes, drinks wine daily, lives alone "
                       "with two cats.", kind="history")]
    lines = _talk(("question", "What brings you in?", "An itchy red rash on both elbows."),
                  ("question", "Tell me about work?", "I work night shifts at a bakery."),
                  ("question", "Habits?", "The itchy red rash on my elbows; I smoke and drink "
                                          "wine daily."))
    m = measure(facts, lines)
    # turn 2 tells a third of fact 1; turn 3 restates fact 0 and takes fact 1 over half
    assert m.elicited_at == {0: 1, 1: 3}
    assert m.redundant_questions == 0
