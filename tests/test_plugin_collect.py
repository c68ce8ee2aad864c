"""Item identity and safe collection: one encounter per item, each record and transcript its
own, and case files collected only from where the user pointed pytest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, osce_line, write_yaml_cases

NO_CACHE = ("-p", "no:cacheprovider")


def _records(run: Path) -> list[dict[str, Any]]:
    (results,) = run.glob("reports/*/results.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_duplicate_case_ids_are_one_error_naming_both_places(pytester: pytest.Pytester,
                                                             xdist: list[str]) -> None:
    first, other = make_case(1), make_case(2)
    twin = make_case(3, id="t-01")  # same id as the first case, another diagnosis
    write_yaml_cases(pytester.path / "c.yaml", [first, other, twin])
    result = pytester.runpytest("c.yaml", "--agent-run-name=r", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*c.yaml:*: field 'id': duplicate case id 't-01': already used "
                                 "at *c.yaml:*"])
    records = _records(pytester.path)
    # Every item has its record, and each record pairs a case with its own encounter.
    assert sorted(r["case_id"] for r in records) == ["t-01", "t-02"]
    assert all(r["expected"] == r["given"] for r in records)


def test_files_outside_the_rootdir_keep_distinct_node_ids(pytester: pytest.Pytester,
                                                          xdist: list[str]) -> None:
    project = pytester.mkdir("project")
    (project / "pytest.ini").write_text("[pytest]\n")
    for folder in ("a", "b"):
        data = pytester.mkdir(folder)
        (data / "agentclinic_medqa.jsonl").write_text(
            "\n".join(osce_line(i, Correct_Diagnosis=f"{folder} disease {i}")
                      for i in range(2)) + "\n")
    result = pytester.runpytest("--rootdir=project", "-c", "project/pytest.ini",
                                "a/agentclinic_medqa.jsonl", "b/agentclinic_medqa.jsonl",
                                "--agent-turns=3", "--agent-run-name=r", *NO_CACHE, *xdist)
    outcomes = result.parseoutcomes()
    assert outcomes.get("error", 0) == 0 and sum(outcomes.values()) >= 4
    records = _records(pytester.path)
    ids = [str(r["nodeid"]) for r in records]
    assert len(records) == 4 and len(set(ids)) == 4
    assert all(i.startswith(("a/", "b/")) for i in ids)
    for record in records:
        assert str(record["expected"]).startswith(str(record["nodeid"])[0])


def test_same_file_name_in_two_folders_keeps_every_transcript(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    for folder, word in (("a", "Alpha"), ("b", "Beta")):
        cases = [make_case(i, diagnosis=f"{word} disease {i}", choices=[], synonyms=[])
                 for i in range(3)]
        write_yaml_cases(pytester.mkdir(folder) / "dermatology.yaml", cases)
    result = pytester.runpytest("a", "b", "--agent-run-name=r", *NO_CACHE, *xdist)
    assert sum(result.parseoutcomes().get(k, 0) for k in ("passed", "failed")) == 6
    records = _records(pytester.path)
    transcripts = {str(r["transcript"]) for r in records}
    assert len(records) == 6 and len(transcripts) == 6
    for record in records:
        folder = str(record["case_file"]).rsplit("/", 2)[-2]
        saved = json.loads(Path(str(record["transcript"])).read_text())
        case_word = "Alpha" if folder == "a" else "Beta"
        assert str(record["expected"]).startswith(case_word)
        assert saved["case_id"] == record["case_id"]
        assert case_word.lower() in json.dumps(saved).lower()


def test_plain_pytest_collects_no_cases_without_agent_cases(pytester: pytest.Pytester,
                                                            xdist: list[str]) -> None:
    pytester.makeini("[pytest]\nagent_doctor = offline\n")
    write_yaml_cases(pytester.mkdir("cases") / "c.yaml", [make_case(1)])
    write_yaml_cases(pytester.mkdir("docs") / "example.yaml", [make_case(2)])
    result = pytester.runpytest(*NO_CACHE, *xdist)
    # Under xdist the workers collect: "2 workers [0 items]" says it.
    result.stdout.re_match_lines([r"(collected |\d+ workers \[)0 items"])
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not (pytester.path / "reports").exists()


def test_agent_cases_ini_names_what_plain_pytest_collects(pytester: pytest.Pytester,
                                                          xdist: list[str]) -> None:
    pytester.makeini("[pytest]\nagent_cases = cases\n")
    write_yaml_cases(pytester.mkdir("cases") / "c.yaml", [make_case(1)])
    write_yaml_cases(pytester.mkdir("docs") / "example.yaml", [make_case(2)])
    result = pytester.runpytest(*NO_CACHE, *xdist)
    result.assert_outcomes(passed=1)
    assert [r["nodeid"] for r in _records(pytester.path)] == [
        "cases/c.yaml::t-01[dermatology-offline]"]


def test_a_diagnosis_late_in_the_file_is_still_a_case(pytester: pytest.Pytester,
                                                      xdist: list[str]) -> None:
    long_history = "I have had this for a while. " * 300  # > 4,096 characters before it
    case = make_case(1)
    case["patient"] = {**case["patient"], "history": long_history}
    # The diagnosis is the last key, far past the first 4,096 characters.
    case = {k: v for k, v in case.items() if k != "diagnosis"} | {"diagnosis": case["diagnosis"]}
    (pytester.mkdir("cases") / "late.yaml").write_text(json.dumps([case]))
    pytester.runpytest("cases", *NO_CACHE, *xdist).assert_outcomes(passed=1)


#: Junk in a case folder: files that look like cases and cannot be read, each with its error.
JUNK = [
    ("truncated.json", b'[{"id": "t-01", "diagnosis": "A", "objective', "cannot parse"),
    ("latin1.jsonl", '{"diagnosis": "Ménière"}\n'.encode("latin-1"), "cannot read"),
    ("diagnosis.yaml", b"diagnosis: [unclosed\n", "cannot parse"),
]


def test_junk_in_a_case_folder_is_an_error_and_the_rest_runs(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """Every kind of junk in one folder (one run per worker mode, not one per kind): each
    file is one error naming it and why, the good case still runs."""
    folder = pytester.mkdir("cases")
    write_yaml_cases(folder / "good.yaml", [make_case(1)])
    for name, data, _ in JUNK:
        (folder / name).write_bytes(data)
    (folder / "settings.json").write_text('{"theme": "dark"}')  # not cases: left alone
    result = pytester.runpytest("cases", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=1, errors=len(JUNK))
    for name, _, reason in JUNK:
        result.stdout.fnmatch_lines([f"*{name}:*{reason}*"])
    assert result.ret != 0


#: Data files that do not look like cases (no key only a case has).
NOT_CASES = [
    ("binary.yaml", b"\x89PNG\r\n\x1a\n\x00\xff"), ("empty.yaml", b""),
    ("object.json", b"{}"), ("list.json", b"[]"), ("header.csv", b"id,name\n"),
    ("broken.json", b"{not json"), ("rows.jsonl", b"{}\n[]\n")]


def test_a_data_file_in_a_case_folder_that_does_not_look_like_cases_is_left_alone(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """A folder walk parses only files that positively look like cases (a key only a case
    has); a fixture beside them is not an error. Every kind sits in one folder (one run
    per worker mode, not one per kind): any of them read as cases would be an error."""
    folder = pytester.mkdir("cases")
    write_yaml_cases(folder / "good.yaml", [make_case(1)])
    for name, data in NOT_CASES:
        (folder / name).write_bytes(data)
    result = pytester.runpytest("cases", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_an_explicit_file_that_is_not_cases_is_one_clear_error(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    (pytester.path / "notes.yaml").write_text("title: shopping list\nitems: [milk]\n")
    result = pytester.runpytest("notes.yaml", *NO_CACHE, *xdist)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["not a case file: *notes.yaml:1: field '<file>': not a case "
                                 "document*"])
    assert "Traceback" not in result.stdout.str()


def test_a_bad_sidecar_is_one_error_and_its_cases_run_unspecified(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    (pytester.path / "agentclinic_medqa.jsonl").write_text(osce_line(1) + "\n" + osce_line(2)
                                                           + "\n")
    (pytester.path / "agentclinic_medqa.specialties.json").write_text('{"cases": {"0": ')
    result = pytester.runpytest("agentclinic_medqa.jsonl", "--agent-turns=3", *NO_CACHE, *xdist)
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors") == 1
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2
    result.stdout.fnmatch_lines(["bad specialty sidecar*specialties.json:1: field 'cases'*"])
    assert "[unspecified-offline]" in result.stdout.str() or "unspecified" in result.stdout.str()
    assert result.ret != 0


def test_a_mapping_as_diagnosis_is_an_error_naming_the_field(pytester: pytest.Pytester,
                                                             xdist: list[str]) -> None:
    bad = osce_line(1, Correct_Diagnosis={"a": None})
    (pytester.path / "agentclinic_medqa.jsonl").write_text(bad + "\n" + osce_line(2) + "\n")
    result = pytester.runpytest("agentclinic_medqa.jsonl", "--agent-turns=3", *NO_CACHE, *xdist)
    result.stdout.fnmatch_lines(["*agentclinic_medqa.jsonl:1: field "
                                 "'OSCE_Examination.Correct_Diagnosis': expected text, got a "
                                 "mapping"])
    assert sum(result.parseoutcomes().get(k, 0) for k in ("passed", "failed")) == 1
