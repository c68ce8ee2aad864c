"""``agentclinic validate``: the library is clean and every check fires where it should."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, osce_line, write_yaml_cases

from pytest_agentclinic.cases.validate import Problem, Summary, validate_paths
from pytest_agentclinic.cli import main

ROOT = Path(__file__).resolve().parents[1]
VIGNETTE = ("A 40-year-old woman presents with problem number N for two weeks. Her temperature "
            "is 37.0 °C (98.6 °F), pulse 72/min and blood pressure 110/70 mmHg.")
EXAM = {"Vital Signs": {"Temperature": "37.0 °C", "Heart Rate": "72 bpm",
                        "Blood Pressure": "120/80 mmHg right arm, 110/70 mmHg left arm"},
        "Skin": "Scaly plaques."}


def good_case(i: int = 1, **over: Any) -> dict[str, Any]:
    """A clean case with a vignette consistent with its structured fields."""
    fields = {"physical_exam": EXAM, "vignette": VIGNETTE.replace("N", str(i)),
              "question": "Which of the following is the most likely diagnosis?"}
    return make_case(i, **{**fields, **over})


def check(tmp_path: Path, *cases: dict[str, Any], name: str = "t.yaml") -> list[Problem]:
    return validate_paths([write_yaml_cases(tmp_path / name, list(cases))])


def line_of(path: Path, needle: str, case_id: str = "t-01") -> int:
    """The 1-based line of the first ``needle`` at or after the start of ``case_id``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, text in enumerate(lines) if f"id: {case_id}" in text)
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def test_project_library_is_clean() -> None:
    summary = Summary()
    problems = validate_paths([ROOT / "cases"], summary)
    assert problems == [], "\n".join(map(str, problems))
    assert summary.files == len(list((ROOT / "cases").glob("*.yaml")))
    assert summary.cases >= 72


def test_a_consistent_case_raises_no_false_alarm(tmp_path: Path) -> None:
    # Fahrenheit in brackets, one of two blood pressures, 'mg' and 'as' beside abbreviations.
    case = good_case(synonyms=["C1D", "MG", "AS"],
                     patient={**make_case(1)["patient"],
                              "medications": "Ibuprofen 400 mg as needed, hearing aids."})
    assert check(tmp_path, case, good_case(2)) == []


@pytest.mark.parametrize(("over", "field", "needle"), [
    ({"objective": "Evaluate the patient with suspected C1D."}, "objective", "objective:"),
    ({"patient": {"history": "My sister's condition1 diseases got worse.",
                  "symptoms": {"primary": "Rash"}}}, "patient.history", "history:"),
    ({"patient": {"history": "Rash.", "symptoms": {
        "primary": "Rash", "secondary": ["Fatigue", "Known CONDITION1 DISEASE"]}}},
     "patient.symptoms.secondary[1]", "Known"),
    ({"patient": {"history": "Rash.", "symptoms": {"primary": "Rash"},
                  "other": {"Allergies": "None; condition-1 disease? no: condition1 disease"}}},
     "patient.other.Allergies", "Allergies:"),
    ({"tests": {"Imaging": {"Condition1 Disease Scan": "Positive"}}},
     "tests.Imaging.Condition1 Disease Scan", "Condition1 Disease Scan:"),
    ({"physical_exam": {"Skin": "Plaques", "C1D score": 3}}, "physical_exam.C1D score",
     "C1D score:"),
    ({"vignette": "A 40-year-old woman with Condition1 disease.", "question": "Which?"},
     "vignette", "vignette:"),
])
def test_diagnosis_leaks_are_found(tmp_path: Path, over: dict[str, Any], field: str,
                                   needle: str) -> None:
    path = tmp_path / "t.yaml"
    problem = only(check(tmp_path, make_case(1, **over)))
    assert (problem.path, problem.field, problem.severity) == (path, field, "error")
    assert problem.line == line_of(path, needle) and problem.case_id == "t-01"
    assert "gives away the diagnosis" in problem.message


def test_short_abbreviations_match_only_in_capitals(tmp_path: Path) -> None:
    quiet = make_case(1, synonyms=["MG"], patient={"history": "Took 5 mg as needed; mg, Mg.",
                                                   "symptoms": {"primary": "Weakness"}})
    loud = make_case(2, synonyms=["MG"], patient={"history": "My MG came back.",
                                                  "symptoms": {"primary": "Weakness"}})
    problem = only(check(tmp_path, quiet, loud))
    assert (problem.case_id, problem.field) == ("t-02", "patient.history")


@pytest.mark.parametrize(("choices", "field", "severity", "text"), [
    (["Other thing", "Third option"], "choices", "error", "0 times"),
    (["Condition1 disease", "Condition1 disease", "X"], "choices", "error", "2 times"),
    (["condition1  Disease", "X", "Y"], "choices", "error", "differs only in spelling"),
    (["Condition1 disease", "C1D", "Y", "Z"], "choices[1]", "warning", "synonym"),
    (["Condition1 disease", "Other", "other", "Z"], "choices[2]", "error", "duplicate"),
    (["Condition1 disease", "CD3+, CD19-", "CD3-, CD19+", "Other  thing", "other thing"],
     "choices[4]", "error", "duplicate choice 'other thing'"),
])
def test_choice_problems(tmp_path: Path, choices: list[str], field: str, severity: str,
                         text: str) -> None:
    path = tmp_path / "t.yaml"
    problem = only(check(tmp_path, make_case(1, choices=choices)))
    assert (problem.field, problem.severity) == (field, severity) and text in problem.message
    items = line_of(path, "choices:") + 1  # one list item per line
    assert problem.line == (items + int(field[-2]) if "[" in field else items - 1)


@pytest.mark.parametrize(("over", "field", "needle"), [
    ({"patient": {"history": "", "symptoms": {"primary": "Rash"}}}, "patient.history",
     "history:"),
    ({"patient": {"history": "Rash.", "symptoms": {"secondary": ["Itch"]}}},
     "patient.symptoms.primary", "symptoms:"),
    ({"physical_exam": {}}, "physical_exam", "physical_exam:"),
    ({"tests": {}}, "tests", "tests:"),
    ({"tests": {"Blood": {"WBC": "", "Hb": "13 g/dL"}}}, "tests.Blood.WBC", "WBC:"),
    ({"synonyms": ["C1D", " "]}, "synonyms[1]", "- ' '"),
    ({"choices": [], "vignette": "A 40-year-old woman.", "question": "Which?"}, "choices",
     "choices: []"),
])
def test_empty_sections(tmp_path: Path, over: dict[str, Any], field: str, needle: str) -> None:
    problem = only(check(tmp_path, make_case(1, **over)))
    assert (problem.field, problem.line) == (field, line_of(tmp_path / "t.yaml", needle))


@pytest.mark.parametrize(("old", "new", "text"), [
    ("40-year-old", "45-year-old", "age 45 years contradicts the demographics (40 years)"),
    ("woman", "man", "describes a male patient, the demographics a female one"),
    ("37.0 °C (98.6 °F)", "38.4 °C", "temperature 38.4 differs from the physical exam (37.0)"),
    ("37.0 °C (98.6 °F)", "101.5 °F", "temperature 101.5 differs"),
    ("pulse 72/min", "a heart rate of 110 bpm", "heart rate 110 differs"),
    ("110/70", "150/95", "blood pressure 150/95 differs from the physical exam (110/70, 120/80)"),
])
def test_vignette_contradicting_structured_fields(tmp_path: Path, old: str, new: str,
                                                  text: str) -> None:
    case = good_case(vignette=VIGNETTE.replace(old, new))
    problem = only(check(tmp_path, case))
    assert (problem.field, problem.line) == ("vignette", line_of(tmp_path / "t.yaml", "vignette:"))
    assert text in problem.message


def test_duplicate_ids_across_files_name_the_first(tmp_path: Path) -> None:
    first = write_yaml_cases(tmp_path / "a.yaml", [make_case(1), make_case(2)])
    second = write_yaml_cases(tmp_path / "b.yaml", [make_case(3), make_case(2)])
    problem = only(validate_paths([tmp_path]))
    assert (problem.path, problem.field, problem.case_id) == (second, "id", "t-02")
    assert problem.line == line_of(second, "id: t-02", "t-02")
    assert f"first at {first}:{line_of(first, 'id: t-02', 't-02')}" in problem.message


def test_schema_errors_come_from_the_loader(tmp_path: Path) -> None:
    bad = make_case(2)
    del bad["diagnosis"]
    problems = check(tmp_path, make_case(1), bad)
    assert [(p.field, p.line) for p in problems] == [
        ("diagnosis", line_of(tmp_path / "t.yaml", "id: t-02", "t-02"))]
    (tmp_path / "broken.yaml").write_text("cases:\n  - id: x\n   diagnosis: [\n")
    (problem,) = validate_paths([tmp_path / "broken.yaml"])
    assert problem.field == "<document>" and problem.line > 1


def test_jsonl_problems_carry_the_record_line(tmp_path: Path) -> None:
    leaky = json.loads(osce_line(1))
    leaky["OSCE_Examination"]["Patient_Actor"]["History"] = "Told it is pneumonia type1."
    path = tmp_path / "medqa.jsonl"
    path.write_text(osce_line(0) + "\n" + json.dumps(leaky) + "\n")
    problem = only(validate_paths([path]))
    assert (problem.line, problem.field, problem.case_id) == (2, "patient.history", "medqa-0001")


def test_paths_that_hold_no_cases_are_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.yaml").write_text("title: not a case\n")
    problems = validate_paths([tmp_path / "missing", tmp_path / "empty", tmp_path / "notes.yaml"])
    assert [p.message for p in problems] == [
        "no such file or directory", "no case files found",
        "not a case file: not a case document (no 'diagnosis', 'cases' or OSCE_Examination)"]


def test_command_on_the_library_prints_one_ok_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "cases")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].endswith(" files: OK") and " cases in " in out[0]


def test_command_reports_each_problem_and_fails(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = write_yaml_cases(tmp_path / "t.yaml", [make_case(1, tests={})])
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{path}:{line_of(path, 'tests:')}: error: case t-01: field 'tests': "
                   "empty section", "1 case in 1 file: 1 error(s), 0 warning(s)"]


def test_warnings_fail_only_with_strict(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = write_yaml_cases(tmp_path / "t.yaml",
                            [make_case(1, choices=["Condition1 disease", "C1D", "Y", "Z"])])
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 case in 1 file: OK (1 warning(s))"
    assert main(["validate", "--strict", str(path)]) == 1
