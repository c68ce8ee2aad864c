"""MediQ's truths for ``benchmarks/bench_adversarial.py --truths mediq``: the condition truths of
its questions (a diagnosis asked for, or a condition under another name that the terminology
reads as a disease), less those CRAFT-MD's or AgentClinic's set already has. Read here from a
few synthetic rows in MediQ's format (no upstream data)."""

from __future__ import annotations

import csv
import json
from importlib.util import find_spec
from pathlib import Path

import adversarial_truths
import pytest
from adversarial_truths import TRUTH_SOURCES, Truths, held_out_truths

#: The loader's tests need the MediQ extension (extensions/mediq), which reads MediQ's rows.
needs_mediq = pytest.mark.skipif(find_spec("agentclinic_mediq") is None,
                                 reason="the MediQ extension (extensions/mediq) is not installed")

DIAGNOSIS = "Which of the following is the most likely diagnosis?"
CAUSE = "What is the most likely cause of this patient's symptoms?"
ROWS = [
    # question, answer, the other three options
    (DIAGNOSIS, "Acute cholangitis", ["Acute cholecystitis", "Acute pancreatitis",
                                      "Choledocholithiasis"]),
    # the same truth again, written otherwise
    (DIAGNOSIS, "acute  Cholangitis", ["Hepatitis A", "Acute pancreatitis", "Appendicitis"]),
    # a cause the terminology reads as a disease
    (CAUSE, "Hypothyroidism", ["Hyperthyroidism", "Major depressive disorder", "Anemia"]),
    # already a truth of CRAFT-MD's set (below), one of them with an eponym's possessive
    (DIAGNOSIS, "Erythema multiforme", ["Urticaria", "Bullous pemphigoid", "Scabies"]),
    (CAUSE, "Graves\u2019 disease", ["Toxic multinodular goiter", "Thyroiditis",
                                     "Thyroid adenoma"]),
    # no diagnosis: an organism, an organ the terminology files under its disease, a drug,
    # a symptom
    ("Which of the following is the most likely causal organism?", "Treponema pallidum",
     ["Neisseria gonorrhoeae", "Haemophilus ducreyi", "Chlamydia trachomatis"]),
    ("Which organ is most likely affected?", "Spleen", ["Liver", "Kidney", "Pancreas"]),
    ("Which of the following is the most appropriate treatment?", "Ceftriaxone",
     ["Doxycycline", "Azithromycin", "Amoxicillin"]),
    (CAUSE, "Chest pain", ["Dyspnea", "Palpitations", "Syncope"]),
]


def _record(i: int, question: str, truth: str, others: list[str]) -> dict[str, object]:
    options = dict(zip("ABCD", [truth, *others], strict=True))
    return {"id": i, "question": question, "options": options, "answer": truth,
            "answer_idx": "A", "context": ["A 40-year-old presents with a complaint."],
            "facts": ["1. A 40-year-old presents with a complaint."], "context_len": 1,
            "patient": {"age": 40, "gender": "female"}}


def write_shared(root: Path) -> None:
    """MediQ's two files, CRAFT-MD's table with two of MediQ's truths, AgentClinic's (empty)."""
    for name in (*TRUTH_SOURCES["mediq"], *TRUTH_SOURCES["agentclinic"]):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("", encoding="utf-8")
    (root / TRUTH_SOURCES["mediq"][0]).write_text(
        "".join(json.dumps(_record(i, *row)) + "\n" for i, row in enumerate(ROWS)),
        encoding="utf-8")
    table = root / TRUTH_SOURCES["craftmd"][0]
    table.parent.mkdir(parents=True, exist_ok=True)
    with table.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["", "case_vignette", "choice_1", "choice_2", "choice_3", "choice_4",
                      "answer", "category", "dataset", "case_id"])
        for i, truth in enumerate(["Erythema multiforme", "Graves disease"]):
            out.writerow([i, "A 30-year-old presents with a rash.", truth, "Psoriasis",
                          "Eczema", "Impetigo", truth, "Dermatology", "Derm_Public", f"c{i}"])


@needs_mediq
def test_the_set_keeps_new_condition_truths_only(tmp_path: Path) -> None:
    write_shared(tmp_path)
    truths = held_out_truths("mediq", tmp_path)
    assert isinstance(truths, Truths)
    assert sorted(c.diagnosis for c in truths.pool.cases) == ["Acute cholangitis",
                                                              "Hypothyroidism"]
    # one repeated; the organism, the organ, the drug and the symptom no condition truths;
    # two already in CRAFT-MD's set
    assert (truths.read, truths.duplicates, truths.not_conditions, truths.elsewhere) == (
        9, 1, 4, 2)


@needs_mediq
def test_without_the_other_sets_or_the_extension_one_line_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_shared(tmp_path)
    (tmp_path / TRUTH_SOURCES["craftmd"][0]).unlink()
    reason = held_out_truths("mediq", tmp_path)
    assert isinstance(reason, str) and "not found" in reason and "\n" not in reason
    write_shared(tmp_path)
    monkeypatch.setattr(adversarial_truths, "find_spec", lambda _name: None)
    reason = held_out_truths("mediq", tmp_path)
    assert isinstance(reason, str) and "not installed" in reason and "\n" not in reason


# --- the rule MediQ's truths led to: an event is no diagnosis --------------------------------

@pytest.mark.parametrize("name", ["a fall", "Fall", "falls", "fall from a ladder",
                                  "ground-level fall", "assault", "motor vehicle accident",
                                  "road traffic collision"])
def test_an_external_cause_is_an_event_not_a_condition(name: str) -> None:
    from pytest_agentclinic.grading.terms.kinds import kind

    assert kind(name) == "event"


@pytest.mark.parametrize("name", ["cerebrovascular accident", "hip fracture after a fall",
                                  "subdural hematoma from a fall", "tetralogy of Fallot",
                                  "falling sickness"])
def test_a_condition_the_event_caused_or_a_name_like_it_stays_a_condition(name: str) -> None:
    from pytest_agentclinic.grading.terms.kinds import kind

    assert kind(name) == "condition"


@pytest.mark.parametrize(("answer", "truth", "correct"), [
    # a laboratory state the question asks for, after an event: the state is the diagnosis
    ("Hypokalemia after a fall", "Hypokalemia", True),
    ("Hypomagnesemia after a fall", "Hypomagnesemia", True),
    ("Pneumothorax after a fall", "Pneumothorax", True),
    # the event alone names no diagnosis
    ("A fall", "Hip fracture", False),
    # a truth with "with" in its name, found whole before the event or a treatment after it
    ("Granulomatosis with polyangiitis after a fall", "Granulomatosis with polyangiitis", True),
    ("Granulomatosis with polyangiitis after surgery", "Granulomatosis with polyangiitis",
     True),
    ("Drug reaction with eosinophilia and systemic symptoms after a fall",
     "Drug reaction with eosinophilia and systemic symptoms", True),
    # the truth named second stays in its secondary role
    ("Granulomatosis with polyangiitis after a fall", "Polyangiitis", False),
])
def test_the_event_is_never_the_main_diagnosis(answer: str, truth: str, correct: bool) -> None:
    from pytest_agentclinic.grading.judging.rules import grade_text

    extraction, decision = grade_text(answer, [truth])
    assert decision.correct is correct, (extraction, decision)
    assert extraction.diagnosis.lower() != "fall"
