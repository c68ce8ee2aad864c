"""``agentclinic convert``: upstream formats into project YAML that loads back unchanged."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest
from helpers import nejm_line, osce_line

from pytest_agentclinic.cases.convert import read_input
from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.cases.vignettes import GENERIC_OBJECTIVE, split_question
from pytest_agentclinic.cli import main
from pytest_agentclinic.core.case import Case

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
HEADER = ["", "case_vignette", "choice_1", "choice_2", "choice_3", "choice_4", "answer",
          "category", "dataset", "case_id"]
ROWS = [
    ["A 34-year-old woman presents to the clinic with a scaly rash on her elbows for 3 months. "
     "She is otherwise healthy. Which of the following is the most likely diagnosis?",
     "Atopic dermatitis", "Plaque psoriasis", "Tinea corporis", "Lichen planus",
     "Plaque psoriasis", "Dermatology", "MedQA_USMLE", "case_10"],
    ["A 60-year-old man comes to the emergency department because of red urine since the "
     "morning. He takes ibuprofen.\nUrinalysis shows:\nBlood +3\nEosinophils numerous\n"
     "Which of the following is the most likely diagnosis?\"",
     "Acute interstitial nephritis", "Nephrolithiasis", "IgA nephropathy", "Cystitis",
     "Acute interstitial nephritis ", "Renal and Genitourinary System", "MedQA_USMLE",
     "case_11"],
    ["A 20-year-old woman noticed a white ring around a mole on her back. It does not itch.",
     "Vitiligo", "Halo nevus", "Melanoma", "Tinea versicolor", "Halo nevus", "Dermatology",
     "dermatology_public", "case_12"],
    ["A 50-year-old man presents with gout-like pain in his big toe. "
     "Which of the following is the most likely diagnosis:",
     "Gout", "Pseudogout", "Septic arthritis", "Cellulitis", "Gout", "Rheumatology",
     "MedQA_USMLE", "case_13"],
]


def write_csv(path: Path, rows: list[list[str]], header: list[str] = HEADER) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows([str(i), *row] for i, row in enumerate(rows))
    return path


def convert(tmp_path: Path, *inputs: Path, extra: tuple[str, ...] = ()) -> Path:
    out = tmp_path / "out"
    assert main(["convert", *map(str, inputs), "--out", str(out), *extra]) == 0
    return out


def loaded_cases(path: Path) -> list[Case]:
    loaded = load_case_file(path)
    assert not loaded.errors, loaded.errors
    return [case for _, case in loaded.cases]


@pytest.mark.parametrize(("text", "story", "question"), [
    ("He is well. What is the diagnosis?", "He is well.", "What is the diagnosis?"),
    ('Shows:\nBlood +3\nWhich is it?"', "Shows:\nBlood +3", "Which is it?"),
    ("Dr. X sees him. The most likely diagnosis is:", "Dr. X sees him.",
     "The most likely diagnosis is:"),
    ("A man with a rash. No question here.", "A man with a rash. No question here.", ""),
    ("Rash, e.g. on arms? Which one?", "Rash, e.g. on arms?", "Which one?"),
])
def test_split_question(text: str, story: str, question: str) -> None:
    assert split_question(text) == (story, question)


def test_craftmd_csv_fields(tmp_path: Path) -> None:
    converted = read_input(write_csv(tmp_path / "craft.csv", ROWS))
    assert converted.format == "craftmd-csv" and not converted.errors
    first, second, third, fourth = converted.cases
    assert (first.id, first.dataset, first.specialty) == ("case_10", "MedQA_USMLE", "Dermatology")
    assert first.diagnosis == "Plaque psoriasis" and first.choices[1] == "Plaque psoriasis"
    assert first.question == "Which of the following is the most likely diagnosis?"
    assert first.vignette == first.patient.history == ROWS[0][0].rsplit(" Which", 1)[0]
    assert first.objective == ("Evaluate and diagnose the patient presenting with a scaly rash "
                               "on her elbows for 3 months.")
    assert first.patient.demographics == "34-year-old woman"
    assert first.patient.symptoms.primary == "a scaly rash on her elbows for 3 months"
    assert second.diagnosis == "Acute interstitial nephritis"  # upstream trailing space
    assert second.vignette.endswith("Eosinophils numerous") and second.question.endswith("?")
    assert second.objective.endswith("presenting with red urine since the morning.")
    assert (third.question, third.dataset) == ("", "dermatology_public")
    assert third.objective.startswith("Evaluate and diagnose the patient described as follows")
    assert fourth.objective == GENERIC_OBJECTIVE  # "gout-like" would name the answer
    assert fourth.patient.symptoms.primary == "" and third.patient.symptoms.primary == ""
    assert fourth.question.endswith("diagnosis:")


def test_every_format_round_trips_through_the_command(tmp_path: Path) -> None:
    medqa = tmp_path / "agentclinic_medqa.jsonl"
    medqa.write_text(osce_line(0) + "\n" + osce_line(1) + "\n")
    nejm = tmp_path / "agentclinic_nejm.jsonl"
    nejm.write_text(nejm_line(0) + "\n" + nejm_line(1) + "\n")
    craft = write_csv(tmp_path / "craft.csv", ROWS)
    out = convert(tmp_path, medqa, nejm, craft)
    assert sorted(p.name for p in out.iterdir()) == [
        "agentclinic_medqa.yaml", "agentclinic_nejm.yaml", "craft.yaml"]
    for source in (medqa, nejm, craft):
        original = read_input(source).cases
        assert loaded_cases(out / f"{source.stem}.yaml") == original
        assert len(original) in (2, 4)
    assert [c.images[0].url for c in loaded_cases(out / "agentclinic_nejm.yaml")] == [
        "https://example.invalid/img0.png", "https://example.invalid/img1.png"]


def test_awkward_text_round_trips(tmp_path: Path) -> None:
    # Indented lines inside long text broke PyYAML's folded style; quotes, colons, unicode,
    # numbers-as-strings and non-string values must all come back as they were.
    record = json.loads(nejm_line(0))
    record["physical_exams"] = ("Results:\n\n1. **Reflex test:**\n   - " + "word " * 30
                                + "end.\n   - second: 'quoted' \"x\" µmol/L ↑\n2. Next")
    record["patient_info"] = "  " + "long words here " * 20 + " trailing"
    medqa = json.loads(osce_line(0))
    medqa["OSCE_Examination"]["Test_Results"] = {"Counts": {"WBC": 7.2, "Flag": True,
                                                            "Code": "007", "None": None}}
    nejm, osce = tmp_path / "n.jsonl", tmp_path / "o.jsonl"
    nejm.write_text(json.dumps(record) + "\n")
    osce.write_text(json.dumps(medqa) + "\n")
    out = convert(tmp_path, nejm, osce)
    assert loaded_cases(out / "n.yaml") == read_input(nejm).cases
    assert loaded_cases(out / "o.yaml") == read_input(osce).cases


def test_yaml_is_readable(tmp_path: Path) -> None:
    out = convert(tmp_path, write_csv(tmp_path / "craft.csv", ROWS))
    text = (out / "craft.yaml").read_text(encoding="utf-8")
    assert text.startswith("dataset: MedQA_USMLE\ncases:\n- id: case_10\n  specialty:")
    assert "  dataset: dermatology_public\n" in text  # only where it differs
    assert "history: >-\n" in text and "vignette: |-\n" in text  # block styles
    assert "choices: [Atopic dermatitis, Plaque psoriasis," in text


def test_per_specialty_splits_and_keeps_every_case(tmp_path: Path) -> None:
    craft = write_csv(tmp_path / "craft.csv", ROWS)
    medqa = tmp_path / "medqa.jsonl"
    medqa.write_text(osce_line(0) + "\n")
    out = convert(tmp_path, craft, medqa, extra=("--per-specialty",))
    files = {p.name: [c.id for c in loaded_cases(p)] for p in out.iterdir()}
    assert files == {"dermatology.yaml": ["case_10", "case_12"],
                     "renal_and_genitourinary_system.yaml": ["case_11"],
                     "rheumatology.yaml": ["case_13"], "unspecified.yaml": ["medqa-0000"]}


def test_existing_files_and_inputs_are_never_overwritten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    craft = write_csv(tmp_path / "craft.csv", ROWS)
    out = convert(tmp_path, craft)
    before = (out / "craft.yaml").read_text()
    (out / "craft.yaml").write_text("mine")
    assert main(["convert", str(craft), "--out", str(out)]) == 2
    assert "exists (use --force" in capsys.readouterr().err
    assert (out / "craft.yaml").read_text() == "mine"
    assert main(["convert", str(craft), "--out", str(out), "--force"]) == 0
    assert (out / "craft.yaml").read_text() == before
    assert main(["convert", str(out / "craft.yaml"), "--out", str(out), "--force"]) == 2
    assert "is an input" in capsys.readouterr().err


def test_bad_input_is_reported_with_its_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bad = [*ROWS[:2], ["A woman. Which?", "A", "B", "C", "D", "A", "Other", "x", "bad id!"]]
    craft = write_csv(tmp_path / "craft.csv", bad)
    assert main(["convert", str(craft), "--out", str(tmp_path / "out")]) == 1
    # Row 2 spans five lines (its vignette has newlines), so the bad row starts on line 8.
    assert f"error: {craft}:8: field 'id':" in capsys.readouterr().err
    assert [c.id for c in loaded_cases(tmp_path / "out" / "craft.yaml")] == ["case_10", "case_11"]
    wrong = write_csv(tmp_path / "other.csv", [["x"]], header=["", "url"])
    assert main(["convert", str(wrong), "--out", str(tmp_path / "o2")]) == 1
    assert "missing columns" in capsys.readouterr().err


def test_answer_missing_from_choices_is_noted(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    row = [*ROWS[0][:5], "Psoriasis vulgaris", *ROWS[0][6:]]
    convert(tmp_path, write_csv(tmp_path / "craft.csv", [row]))
    assert "answer 'Psoriasis vulgaris' is not among the choices" in capsys.readouterr().err


def upstream(relative: str) -> Path:
    path = SHARED / relative
    if not path.is_file():
        pytest.skip(f"upstream dataset {relative} not found under {SHARED} (CI has ../shared)")
    return path


def test_real_agentclinic_medqa_round_trips(tmp_path: Path) -> None:
    source = upstream("agentclinic/agentclinic_medqa.jsonl")
    out = convert(tmp_path, source)
    original = [case for _, case in load_case_file(source).cases]
    assert len(original) == 107 and loaded_cases(out / "agentclinic_medqa.yaml") == original
    assert {c.specialty for c in original} != {"unspecified"}  # the sidecar's labels kept


def test_real_craftmd_rows_round_trip(tmp_path: Path) -> None:
    source = upstream("craftmd/usmle_and_derm_dataset.csv")
    with source.open(encoding="utf-8", newline="") as fh:
        header, *rows = list(itertools.islice(csv.reader(fh), 51))
    sample = write_csv(tmp_path / "craftmd_head.csv", [r[1:] for r in rows], header=header)
    cases = read_input(sample).cases
    assert len(cases) == 50
    out = convert(tmp_path, sample)
    assert loaded_cases(out / "craftmd_head.yaml") == cases
    for row, case in zip(rows, cases, strict=True):
        assert (case.id, case.diagnosis, case.specialty) == (row[9], row[6].strip(), row[7])
        assert case.vignette.startswith(row[1].strip()[:40]) and case.patient.history
