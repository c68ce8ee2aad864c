"""The truth sets ``benchmarks/bench_adversarial.py --truths`` fills the adversarial shapes with:
read at run time from a dataset (here a small table in CRAFT-MD's format), deduplicated, only
diagnosis questions, split in two halves by a stable hash; a clear reason where absent."""

from __future__ import annotations

import asyncio
import csv
import sys
from pathlib import Path

import pytest
from adversarial import Pool, answer, library, slots, suite
from adversarial_truths import TRUTH_SOURCES, Truths, half_of, held_out_truths

ROWS = [
    # truth, choices, question
    ("Erythema multiforme", ["Erythema multiforme", "Urticaria", "Bullous pemphigoid",
                             "Pemphigus vulgaris"],
     "Which of the following is the most likely diagnosis?"),
    ("erythema  multiforme", ["erythema  multiforme", "Urticaria", "Scabies", "Impetigo"],
     "What is the most likely diagnosis?"),
    ("Doxycycline", ["Doxycycline", "Amoxicillin", "Ceftriaxone", "Azithromycin"],
     "Which of the following is the most appropriate treatment?"),
    ("Lichen planus", ["Lichen planus", "Psoriasis", "Tinea corporis", "Pityriasis rosea"],
     "Which of the following is most likely to confirm the diagnosis?"),
    ("Ulcerative colitis", ["Ulcerative colitis", "Crohn disease", "Celiac disease",
                            "Irritable bowel syndrome"], ""),
    ("Osteosarcoma\n\"", ["Osteosarcoma\n\"", "Ewing sarcoma", "Chondrosarcoma",
                          "Osteochondroma"], ""),
    ("Acute pancreatitis", ["Acute pancreatitis", "Cholecystitis", "Appendicitis",
                            "Peptic ulcer disease"], ""),
]


def write_table(root: Path) -> Path:
    path = root / TRUTH_SOURCES["craftmd"][0]
    path.parent.mkdir(parents=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["", "case_vignette", "choice_1", "choice_2", "choice_3", "choice_4",
                      "answer", "category", "dataset", "case_id"])
        for i, (truth, choices, question) in enumerate(ROWS):
            vignette = f"A 30-year-old presents with a complaint. {question}".strip()
            out.writerow([i, vignette, *choices, truth, "Dermatology", "MedQA_USMLE",
                          f"case_{i}"])
    return path


def test_truths_are_distinct_conditions_asked_as_diagnoses(tmp_path: Path) -> None:
    write_table(tmp_path)
    truths = held_out_truths("craftmd", tmp_path)
    assert isinstance(truths, Truths)
    names = sorted(c.diagnosis for c in truths.pool.cases)
    # a repeated truth once; a treatment question and a confirming-test question left out;
    # the stray quote some rows end with taken off
    assert names == ["Acute pancreatitis", "Erythema multiforme", "Osteosarcoma",
                     "Ulcerative colitis"]
    assert (truths.read, truths.duplicates, truths.not_conditions) == (7, 1, 2)
    osteo = next(c for c in truths.pool.cases if c.diagnosis == "Osteosarcoma")
    assert "Osteosarcoma" in osteo.choices


def test_the_halves_are_stable_and_the_shapes_are_filled_from_the_pool(tmp_path: Path) -> None:
    write_table(tmp_path)
    first = held_out_truths("craftmd", tmp_path)
    second = held_out_truths("craftmd", tmp_path)
    assert isinstance(first, Truths) and isinstance(second, Truths)
    assert [c.diagnosis for c in first.pool.cases] == [c.diagnosis for c in second.pool.cases]
    assert {first.half(c) for c in first.pool.cases} <= {"A", "B"}
    assert half_of("Ulcerative colitis") == half_of("ulcerative  COLITIS")
    colitis = next(c for c in first.pool.cases if c.diagnosis == "Ulcerative colitis")
    values = slots(colitis, first.pool)
    # {other} is another truth of the pool, sharing no word with this one and no choice
    assert values["other"] in {c.diagnosis for c in first.pool.cases} - {"Ulcerative colitis"}
    assert values["head"] == "colitis"
    assert values["state"] in suite().states
    said = answer("truth_comma_state", colitis, "craftmd", first.pool)
    assert said == f"Final Diagnosis: Ulcerative colitis, {values['state']}"


def test_absent_data_gives_one_line_saying_why(tmp_path: Path) -> None:
    reason = held_out_truths("agentclinic", tmp_path / "nowhere")
    assert isinstance(reason, str) and "not found" in reason and "\n" not in reason


def test_the_abbreviations_that_must_score_are_graded_alone(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    bench = pytest.importorskip("bench_adversarial")
    table = tmp_path / "classes.tsv"
    table.write_text("# class, given, truth\nabbreviation\tSLE\tSystemic lupus erythematosus\n"
                     "eponym\tBell palsy\tFacial nerve palsy\n"
                     "abbreviation\tPSC\tPrimary sclerosing cholangitis\n", encoding="utf-8")
    pairs = bench.abbreviation_pairs(table)
    assert pairs == [("SLE", "Systemic lupus erythematosus"),
                     ("PSC", "Primary sclerosing cholangitis")]
    # PSC: the sources give it for two diseases, so it is not read toward either
    assert asyncio.run(bench.abbreviations_scored(pairs)) == [
        "PSC for Primary sclerosing cholangitis"]


def test_the_typography_slots_apply_only_where_the_truth_has_the_character() -> None:
    from adversarial_spellings import typography_forms

    forms = typography_forms("Guillain-Barre syndrome")
    assert forms["truth_hyphen_break"] == "Guillain-\nBarre syndrome"
    assert forms["truth_endash"] == "Guillain\u2013Barre syndrome"
    assert forms["truth_nbsp"] == "Guillain-Barre\u00a0syndrome"
    # a spaced dash is no hyphen inside a word; a straight apostrophe turns curly
    assert "truth_hyphen_break" not in typography_forms("Anorexia nervosa - purging type")
    assert typography_forms("Paget's disease")["truth_curly"] == "Paget\u2019s disease"
    # an eponym the sources write in the possessive takes it, with a curly apostrophe
    assert typography_forms("Bell palsy")["truth_curly"] == "Bell\u2019s palsy"
    assert typography_forms("Psoriasis") == {}


def test_other_is_no_laboratory_state_where_the_pool_has_a_disease() -> None:
    # A blood level out of range ("Hyperinsulinemia") ends in "-ia" like a disease, but beside
    # a diagnosis it is a concurrent finding (docs/grading.md, *Main and concurrent*): the
    # must-not shapes need a competing disease in {other}, so the disease after it is taken.
    base = library()[0]
    names = ["Cholesteatoma", "Hyperinsulinemia", "Lisch nodules", "Appendicitis"]
    cases = tuple(base.model_copy(update={"id": f"lab-{i}", "diagnosis": name,
                                            "choices": [name, "Fall", "Burn", "Sting"]})
                  for i, name in enumerate(names))
    values = slots(cases[0], Pool(cases))
    assert values["other"] == "Appendicitis"
    # where the pool has no disease left, the others fill the slot, in pool order
    assert slots(cases[0], Pool(cases[:3]))["other"] == "Hyperinsulinemia"
