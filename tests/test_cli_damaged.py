"""The damaged-input table: every command, fed broken files, answers with one line and a
non-zero status, never a traceback, and never exits 0 on empty or invalid input."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.cli import main
from pytest_agentclinic.core.records import ResultRecord


def _record(**over: object) -> str:
    record = ResultRecord(protocol="agentclinic", run="r", nodeid="c.yaml::t-01[x]",
                          case_id="t-01", dataset="t",
                          specialty="Dermatology", models={"doctor": "offline"}, sample=0,
                          turn_budget=20, outcome="correct", expected="A", given="A",
                          turns_used=3, duration_s=0.1)
    return json.dumps({**record.model_dump(mode="json"), **over})


def _run_dir(tmp: Path, lines: list[str], summary: str | None = None) -> list[str]:
    run = tmp / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(f"{line}\n" for line in lines))
    if summary is not None:
        (run / "summary.json").write_text(summary)
    return ["report", "--no-html", "--resamples=10", str(run)]


def _gz(path: Path, text: str, cut: int | None = None) -> Path:
    data = gzip.compress(text.encode())
    path.write_bytes(data[:cut] if cut else data)
    return path


def _grade(tmp: Path, source: Path, *extra: str) -> list[str]:
    return ["grade", "--input", str(source), "--output", str(tmp / "out.jsonl"), *extra]


GRADE_LINE = json.dumps({"correct_answer": "Asthma", "response": "Asthma"}) + "\n"

#: name -> (build the argv in a temp dir, expected status, text the one stderr line holds)
Case = tuple[Callable[[Path], list[str]], int, str]
TABLE: dict[str, Case] = {
    "report: truncated last line": (
        lambda t: _run_dir(t, [_record(), _record()[:40]]), 2, "results.jsonl:2"),
    "report: unknown record version": (
        lambda t: _run_dir(t, [_record(version=99)]), 2, "result record format 99 is newer"),
    "report: empty results": (lambda t: _run_dir(t, []), 2, "holds no results"),
    "report: binary results": (lambda t: _binary_run(t), 2, "results.jsonl"),
    "report: no run there": (lambda t: ["report", str(t / "nowhere")], 2, "no results file"),
    "grade: binary input": (
        lambda t: _grade(t, _bytes(t / "in.jsonl", b"\x89PNG\r\n\x1a\n\xff\xfe")), 2, "in.jsonl"),
    "grade: truncated gzip": (
        lambda t: _grade(t, _gz(t / "in.jsonl.gz", GRADE_LINE * 50, cut=40)), 2,
        "in.jsonl.gz:1: cannot read the file"),
    "grade: empty input": (
        lambda t: _grade(t, _text(t / "in.jsonl", "")), 2, "no lines to grade"),
    "grade: --cases CSV without the columns": (
        lambda t: _grade(t, _text(t / "in.jsonl", GRADE_LINE), "--cases",
                         str(_text(t / "c.csv", "id,answer\n1,x\n"))), 2,
        "c.csv:1: the header needs case_id"),
    "grade: a line that is not JSON": (
        lambda t: _grade(t, _text(t / "in.jsonl", GRADE_LINE + "{oops\n")), 2, "in.jsonl:2"),
    "import-craftmd: truncated gzip": (
        lambda t: ["import-craftmd", str(_gz(t / "rec.jsonl.gz", GRADE_LINE * 50, cut=40)),
                   "--out", str(t / "o")], 2, "rec.jsonl.gz:1"),
    "import-craftmd: empty file": (
        lambda t: ["import-craftmd", str(_text(t / "rec.jsonl", "")), "--out", str(t / "o")],
        2, "no records to import"),
    "import-craftmd: binary dataset CSV": (
        lambda t: ["import-craftmd", str(_text(t / "rec.jsonl", "")), "--out", str(t / "o"),
                   "--dataset-csv", str(_bytes(t / "d.csv", b"\xff\xfe\x00bin"))], 2,
        "d.csv: not a CSV case table"),
    "validate: recursive alias": (
        lambda t: ["validate", str(_text(t / "c.yaml", "cases:\n  - &a\n    id: x\n"
                                                      "    diagnosis: A\n    loop: *a\n"))],
        1, "c.yaml:2: error: field 'cases[0].loop': recursive YAML alias"),
    "validate: bad sidecar": (
        lambda t: ["validate", str(_sidecar(t, "{not json"))], 1, "specialties.json:1"),
    "validate: binary case file": (
        lambda t: ["validate", str(_bytes(t / "c.yaml", b"\xff\xfe\x00bin"))], 1,
        "c.yaml:1: error: field '<file>'"),
    "validate: empty case file": (
        lambda t: ["validate", str(_text(t / "c.yaml", ""))], 1, "not a case file: empty"),
    "validate: diagnosis given as a mapping": (
        lambda t: ["validate", str(_text(t / "c.jsonl", json.dumps({"OSCE_Examination": {
            "Objective_for_Doctor": "x", "Patient_Actor": {"History": "h"},
            "Correct_Diagnosis": {"a": None}}}) + "\n"))], 1,
        "c.jsonl:1: error: field 'OSCE_Examination.Correct_Diagnosis': expected text"),
    "compare: a truncated record line": (
        lambda t: ["compare", *_two_runs(t, bad=_record()[:40])], 2, "results.jsonl:2"),
    "compare: no run there": (
        lambda t: ["compare", str(t / "nowhere"), str(t / "nowhere")], 2, "no results file at"),
    "compare: unknown --by field": (
        lambda t: ["compare", *_two_runs(t), "--by", "colour"], 2, "unknown group field(s) colour"),
    "compare: unknown --pair-on field": (
        lambda t: ["compare", *_two_runs(t), "--pair-on", "colour"], 2, "--pair-on: unknown"),
    "merge: a record that is not one": (
        lambda t: ["merge", *_two_runs(t, bad='{"run": 7}'), "--out", str(t / "m")], 2,
        "b/results.jsonl:2"),
    "merge: bad --gate-on": (
        lambda t: ["merge", *_two_runs(t), "--out", str(t / "m"), "--gate-on", "colour=red"],
        2, "--gate-on: "),
    "review: key.json not JSON": (
        lambda t: _review(t, key="{oops", sheet="item,model,rater\n"), 2, "key.json:1: not JSON"),
    "review: a rating out of range": (
        lambda t: _review(t, sheet="item,model,rater,history_completeness\nI1,m,r,9\n"), 2,
        "sheet.csv:2: field 'history_completeness': expected 1-5 or blank"),
    "review: binary sheet": (
        lambda t: _review(t, sheet=b"\xff\xfe\x00bin"), 2, "sheet.csv: not a CSV sheet"),
    "view: no run there": (lambda t: ["view", str(t / "nowhere")], 2, "no results file"),
    "view: a record that is not one": (
        lambda t: ["view", _two_runs(t, bad='{"run": 7}')[1], "-o", str(t / "v.html")], 2,
        "bad result record: "),
    "export: a record that is not one": (
        lambda t: ["export", _two_runs(t, bad='{"run": 7}')[1]], 2, "b/results.jsonl:2"),
    "export: summary.json not JSON": (
        lambda t: ["export", _run_dir(t, [_record()], summary="[1, 2")[-1]], 2,
        "summary.json:1: not JSON"),
    "convert: binary input": (
        lambda t: ["convert", "--out", str(t / "o"), str(_bytes(t / "c.yaml", b"\xff\x00"))],
        1, "c.yaml"),
}


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _binary_run(tmp: Path) -> list[str]:
    argv = _run_dir(tmp, [])
    (tmp / "run" / "results.jsonl").write_bytes(b"\xff\xfe\x00\x01garbage\n")
    return argv


def _two_runs(tmp: Path, bad: str | None = None) -> list[str]:
    """Two run directories ``a`` and ``b`` of one good record each; ``bad`` is a second line
    of ``b``'s results."""
    runs = []
    for name, lines in (("a", [_record()]), ("b", [_record(), *([bad] if bad else [])])):
        (tmp / name).mkdir()
        (tmp / name / "results.jsonl").write_text("".join(f"{line}\n" for line in lines))
        runs.append(str(tmp / name))
    return runs


def _review(tmp: Path, sheet: str | bytes, key: str | None = None) -> list[str]:
    """``review --import`` of ``sheet`` (its ``key.json`` beside it) into a one-record run."""
    from pytest_agentclinic.runs.directory import REVIEW_VERSION

    run = _run_dir(tmp, [_record()])[-1]
    (tmp / "rate").mkdir()
    (tmp / "rate" / "key.json").write_text(key if key is not None else json.dumps(
        {"version": REVIEW_VERSION, "run": "r", "seed": 0, "models": {},
         "items": {"I1": {"nodeid": "c.yaml::t-01[x]", "case_id": "t-01"}}}))
    path = tmp / "rate" / "sheet.csv"
    path.write_bytes(sheet) if isinstance(sheet, bytes) else path.write_text(sheet)
    return ["review", "--import", str(path), run]


def _sidecar(tmp: Path, text: str) -> Path:
    cases = write_yaml_cases(tmp / "c.yaml", [make_case(1)])
    (tmp / "c.specialties.json").write_text(text)
    return cases


@pytest.mark.parametrize("name", list(TABLE))
def test_damaged_input_is_one_line_and_a_failing_status(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build, status, expected = TABLE[name]
    assert main(build(tmp_path)) == status
    out, err = capsys.readouterr()
    text = out + err
    assert "Traceback" not in text
    assert expected in text, text
    # One line says what is wrong (validate adds its one-line count, import its skips).
    assert len(err.strip().splitlines()) <= 2, err


def test_report_rebuilds_a_corrupt_summary_from_the_records(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _run_dir(tmp_path, [_record()], summary="[1, 2")
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "summary.json: unreadable, rebuilt from the records" in err
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["items"] == 1


def test_validate_reports_csv_rows_at_their_own_lines(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    header = "case_id,dataset,category,case_vignette,answer,choice_1,choice_2,choice_3,choice_4"
    good = ('c1,usmle,Neurology,"A 30-year-old man has headache. What is the diagnosis?",'
            "Migraine,Migraine,Tension headache,Cluster headache,Stroke")
    leak = ('c2,usmle,Neurology,"A 30-year-old man has Migraine.\nWhat is the diagnosis?",'
            "Migraine,Migraine,Tension headache,Cluster headache,Stroke")
    path = _text(tmp_path / "d.csv", "\n".join([header, good, good.replace("c1", "c3"), leak])
                 + "\n")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    # The leak is on line 4 (its row spans lines 4-5); CRAFT-MD cases have no exam or test
    # sections, and that is not an error.
    assert f"{path}:4: error: case c2" in out
    assert "empty section" not in out and ":1: error" not in out


def test_recursive_alias_in_a_case_file_is_a_collection_error(pytester: pytest.Pytester,
                                                              xdist: list[str]) -> None:
    (pytester.path / "c.yaml").write_text(yaml.safe_dump({"cases": [make_case(1)]}) +
                                          "extra: &a [*a]\n")
    result = pytester.runpytest("c.yaml", "-p", "no:cacheprovider", *xdist)
    result.stdout.fnmatch_lines(["*c.yaml:28: field 'extra[[]0[]]': recursive YAML alias*"])
    assert result.ret != 0


def test_meld_refuses_credentials_in_the_api_base(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["meld", "--model", "openai/x", "--api-base", "http://u:PASSW0RD@h/v1", "cases"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "credentials in the URL" in err and "PASSW0RD" not in err


#: A command and where it reads its input: a reader there that raises a builtin error is a
#: bug of ours, not bad input, and must not be reported as such (exit 2, one line).
READERS: dict[str, tuple[str, Callable[[Path], list[str]]]] = {
    "compare": ("pytest_agentclinic.report.rundir.load_records",
                lambda t: ["compare", *_two_runs(t)]),
    "report": ("pytest_agentclinic.runs.directory.load_records",
               lambda t: _run_dir(t, [_record()])),
    "merge": ("pytest_agentclinic.runs.directory.load_records",
              lambda t: ["merge", *_two_runs(t), "--out", str(t / "m")]),
    "import-craftmd": ("pytest_agentclinic.importers.craftmd.read_case_table",
                       lambda t: ["import-craftmd", str(_text(t / "rec.jsonl", GRADE_LINE)),
                                  "--out", str(t / "o"), "--dataset-csv",
                                  str(_text(t / "d.csv", "case_id\n"))]),
    "review": ("pytest_agentclinic.report.review.read_key",
               lambda t: _review(t, sheet="item,model,rater\n")),
    "grade": ("pytest_agentclinic.commands.grade._read_lines",
              lambda t: _grade(t, _text(t / "in.jsonl", GRADE_LINE))),
    "patient-check": ("pytest_agentclinic.cases.vignettes.read_craftmd_csv",
                      lambda t: ["patient-check", "--model", "openai/x", "--vignettes",
                                 str(_text(t / "v.csv", "case_id\n")), "--conversations",
                                 str(_text(t / "c.jsonl", "{}\n"))]),
}


def test_a_bad_conversation_line_is_an_input_error_naming_file_and_line(tmp_path: Path) -> None:
    from pytest_agentclinic.core.errors import InputError
    from pytest_agentclinic.metrics.conversations import read_conversations

    path = _text(tmp_path / "c.jsonl", json.dumps({"case_id": "1", "messages": []}) + "\n{}\n")
    with pytest.raises(InputError, match=r"c\.jsonl:2: field 'messages' or 'case_id'"):
        list(read_conversations(path))


@pytest.mark.parametrize("command", list(READERS))
@pytest.mark.parametrize("error", [ValueError, KeyError])
def test_a_bug_in_a_reader_is_not_reported_as_bad_input(
        command: str, error: type[Exception], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    target, build = READERS[command]
    argv = build(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise error("a bug of ours")

    monkeypatch.setattr(target, broken)
    with pytest.raises(error, match="a bug of ours"):
        main(argv)
