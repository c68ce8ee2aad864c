from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, nejm_line, osce_line, write_yaml_cases

from pytest_agentclinic.cases.agentclinic_jsonl import as_text
from pytest_agentclinic.cases.loaders import load_case_file, looks_like_case_file


def test_osce_jsonl_is_read_with_tolerated_shapes(tmp_path: Path) -> None:
    odd = osce_line(1, Patient_Actor={
        "Demographics": "30-year-old", "History": "Cough.",
        "Symptoms": "Cough only",  # a string where a dict is usual
        "Current_Medications": ["Aspirin", "Statin"],  # extra key, list
        "Allergies": "Penicillin",
    })
    path = tmp_path / "medqa_like.jsonl"
    path.write_text(osce_line(0) + "\n\n" + odd + "\n")
    loaded = load_case_file(path)
    assert loaded.format == "agentclinic-osce" and not loaded.errors
    (_, first), (line, second) = loaded.cases
    assert first.id == "medqa-0000" and first.diagnosis == "Pneumonia type0"
    assert line == 3 and second.id == "medqa-0001"
    assert second.patient.symptoms.primary == "Cough only"
    assert second.patient.medications == "Aspirin; Statin"
    assert second.patient.other == {"Allergies": "Penicillin"}


def test_bad_line_names_file_line_and_field_and_keeps_the_rest(tmp_path: Path) -> None:
    bad = json.loads(osce_line(1))
    del bad["OSCE_Examination"]["Correct_Diagnosis"]
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join([osce_line(0), json.dumps(bad), "{not json", osce_line(3)]))
    loaded = load_case_file(path)
    assert [c.id for _, c in loaded.cases] == ["x-0000", "x-0003"]
    assert [(e.line, e.field) for e in loaded.errors] == [
        (2, "OSCE_Examination.Correct_Diagnosis"), (3, "<json>")]
    assert str(loaded.errors[0]).startswith(f"{path}:2: field 'OSCE_Examination.Correct")


def test_nejm_jsonl_keeps_choices_and_image(tmp_path: Path) -> None:
    path = tmp_path / "nejm_cases.jsonl"
    path.write_text(nejm_line(0) + "\n" + nejm_line(1) + "\n")
    loaded = load_case_file(path)
    assert loaded.format == "agentclinic-nejm"
    case = loaded.cases[1][1]
    assert case.id == "nejm-0001" and case.diagnosis == "Granuloma kind1"
    assert case.choices == ["Granuloma kind1", "Eczema"]
    assert case.images[0].url == "https://example.invalid/img1.png"
    assert "lesion 1" in case.patient.history and "presented with lesion 1" in case.objective


def test_nejm_record_without_a_correct_answer_is_an_error(tmp_path: Path) -> None:
    rec = json.loads(nejm_line(0))
    rec["answers"] = [{"text": "A", "correct": False}]
    path = tmp_path / "nejm.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    (error,) = load_case_file(path).errors
    assert (error.line, error.field) == (1, "answers")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_project_files_one_or_many(tmp_path: Path, suffix: str) -> None:
    many = tmp_path / f"many{suffix}"
    if suffix == ".yaml":
        write_yaml_cases(many, [make_case(1), make_case(2, specialty="Neurology")])
    else:
        many.write_text(json.dumps({"dataset": "t", "cases": [make_case(1), make_case(2)]}))
    one = tmp_path / f"one{suffix}"
    one.write_text(json.dumps(make_case(7)))  # JSON is valid YAML too
    assert [c.id for _, c in load_case_file(many).cases] == ["t-01", "t-02"]
    (_, case), = load_case_file(one).cases
    assert case.dataset == "one" and case.specialty_slug == "dermatology"


def test_project_case_validation_error_names_field(tmp_path: Path) -> None:
    bad = make_case(2, patient={"demographics": "x", "favourite_colour": "blue"})
    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), bad])
    loaded = load_case_file(path)
    assert [c.id for _, c in loaded.cases] == ["t-01"]
    (error,) = loaded.errors
    assert error.field == "patient.favourite_colour" and error.line > 1


def test_sidecar_supplies_specialties(tmp_path: Path) -> None:
    path = tmp_path / "upstream.jsonl"
    path.write_text(osce_line(0) + "\n" + osce_line(1) + "\n")
    sidecar = {"cases": {"1": {"diagnosis": "Pneumonia type1", "specialty": "Infectious Diseases"}}}
    (tmp_path / "upstream.specialties.json").write_text(json.dumps(sidecar))
    cases = [c for _, c in load_case_file(path).cases]
    assert [c.specialty for c in cases] == ["unspecified", "Infectious Diseases"]
    assert cases[1].specialty_marker == "infectious_diseases"


def test_format_is_recognised_by_content(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "cfg.yaml").write_text("key: value\n")
    (tmp_path / "up.specialties.json").write_text('{"cases": {"0": {"diagnosis": "x"}}}')
    (tmp_path / "weird_name.txt.jsonl").write_text(osce_line(0))
    found = sorted(p.name for p in tmp_path.iterdir() if looks_like_case_file(p))
    assert found == ["weird_name.txt.jsonl"]


def test_as_text_flattens_every_shape() -> None:
    assert as_text({"Heart_Rate": 72, "Notes": ["a", "b"]}) == "Heart Rate: 72; Notes: a; b"
    assert as_text(None) == ""


# --- a document with harmless anchors is composed once ------------------------------------------

def _composes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import yaml

    calls: list[str] = []
    original = yaml.compose

    def counted(text: str, Loader: Any) -> object:  # yaml's own argument name
        calls.append(text)
        return original(text, Loader=Loader)

    monkeypatch.setattr(yaml, "compose", counted)  # what cases.yaml_aliases calls
    return calls


def test_harmless_anchors_are_not_composed_a_second_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    shared = {"demographics": "40-year-old woman", "history": "I cough."}
    cases = [{**make_case(i), "patient": shared} for i in range(50)]  # dumped as &id001 / *id001
    path = tmp_path / "anchors.yaml"
    path.write_text(yaml.safe_dump({"dataset": "d", "cases": cases}))
    assert "*id001" in path.read_text()
    calls = _composes(monkeypatch)
    loaded = load_case_file(path)
    assert not loaded.errors and len(loaded.cases) == 50
    assert loaded.cases[-1][1].patient.history == "I cough."
    assert calls == []


@pytest.mark.parametrize("text", [
    "dataset: d\ncases:\n- &c {id: a, objective: o, diagnosis: d, patient: {history: h},"
    " extra: [*c]}\n",
    "dataset: d\ncases:\n- &c {id: a, objective: o, diagnosis: d, patient: {history: h}}\n"
    + "- *c\n" * 20_000,
])
def test_nested_or_many_aliases_still_get_the_full_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text(text)
    calls = _composes(monkeypatch)
    loaded = load_case_file(path)
    assert len(calls) == 1
    assert not loaded.cases and loaded.errors


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
def test_a_file_s_records_are_let_go_as_their_cases_are_built(tmp_path: Path,
                                                              suffix: str) -> None:
    """A parsed record lived on beside every case built until the whole file was read: the
    load peaked at the records and the cases together (a process's memory is its peak: the
    items are made in what the models leave). 4,000 cases of bench_10k, parsed into the
    store: 4.96 -> 3.50 KB a case at the peak for ~2.8 KB held. (A ``.json`` document peaks
    while it is parsed, as before.)"""
    import gc
    import tracemalloc

    cases = [make_case(i, objective=f"Evaluate the patient with complaint {i}. " * 4)
             for i in range(400)]
    path = tmp_path / f"c{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps({"dataset": "d", **c}) + "\n" for c in cases))
    else:
        write_yaml_cases(path, cases)
    load_case_file(path)  # the readers' imports
    gc.collect()
    tracemalloc.start()
    try:
        loaded = load_case_file(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded.cases) == 400 and not loaded.errors
    # The file's text and the records parsed from it come and go; the records no longer
    # live beside the cases (before: 2.6x the cases held, now 2.0x).
    assert peak < 2.3 * held, (peak, held)
