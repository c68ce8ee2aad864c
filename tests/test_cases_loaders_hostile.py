"""Hostile and broken case files: one bad file or record harms nothing else, collection stays
linear, and nothing the files hold reaches the terminal raw (issue 22, items 3, 4, 6, 7)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers import make_case, osce_line, write_yaml_cases

from pytest_agentclinic.cases.loaders import load_case_file

NO_CACHE = ("-p", "no:cacheprovider")
CRAFTMD_HEADER = "case_vignette,choice_1,choice_2,choice_3,choice_4,answer,category,dataset,case_id"
CSV_ROW = ('"A 30-year-old man presents with a rash. Which is the most likely diagnosis?",'
           "Psoriasis,Eczema,Tinea,Scabies,Psoriasis,Dermatology,derm,c-{n}")


@pytest.fixture(autouse=True)
def _not_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count lines as a terminal shows them: with CI (or BUILD_NUMBER) set, pytest prints
    each short-summary line whole, and the error text appears there a second time."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)


def _records(run: Path) -> list[dict[str, object]]:
    (results,) = run.glob("reports/*/results.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]


# --- item 3: a file that breaks the parser is one error for its line --------------------------

def _big_integer(path: Path) -> tuple[Path, int]:
    line = osce_line(1)[:-1] + ', "Weight": ' + "9" * 5_000 + "}"  # > 4,300 digits
    path = path / "bigint.jsonl"
    path.write_text("\n".join([osce_line(0), line, osce_line(2)]) + "\n")
    return path, 2


def _deep_json(path: Path) -> tuple[Path, int]:
    path = path / "deep.jsonl"
    deep = "[" * 1_000 + "]" * 1_000
    path.write_text("\n".join([osce_line(0), deep, osce_line(2)]) + "\n")
    return path, 2


def _long_csv_field(path: Path) -> tuple[Path, int]:
    path = path / "vignettes.csv"
    long_row = CSV_ROW.format(n=2).replace("a rash.", "a rash" + " x" * 70_000 + ".", 1)
    path.write_text("\n".join([CRAFTMD_HEADER, CSV_ROW.format(n=1), long_row,
                               CSV_ROW.format(n=3)]) + "\n")
    return path, 3


HOSTILE: dict[str, Callable[[Path], tuple[Path, int]]] = {
    "integer of 5,000 digits": _big_integer,
    "JSON nested 1,000 deep": _deep_json,
    "CSV field over 131,072 characters": _long_csv_field,
}


@pytest.mark.parametrize("make", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_record_the_parser_refuses_is_one_error_and_the_rest_load(
        tmp_path: Path, make: Callable[[Path], tuple[Path, int]]) -> None:
    path, line = make(tmp_path)
    loaded = load_case_file(path)
    (error,) = loaded.errors
    assert error.line == line and str(error).startswith(f"{path}:{line}: ")
    assert len(loaded.cases) == 2  # the records before and after it


def test_a_hostile_file_does_not_stop_the_others(pytester: pytest.Pytester,
                                                 xdist: list[str]) -> None:
    # Every hostile file beside a good one, in one run per worker mode (each file is still
    # checked on its own: its line, its error).
    folder = pytester.mkdir("cases")
    write_yaml_cases(folder / "good.yaml", [make_case(1), make_case(2)])
    bad = [make(folder) for make in HOSTILE.values()]
    result = pytester.runpytest("cases", "--agent-run-name=r", *NO_CACHE, *xdist)
    # The good file's 2 cases and each hostile file's 2 good ones run (the offline doctor
    # misses the vignettes: failed); each bad record is one error naming file and line.
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2 + 2 * len(HOSTILE)
    assert outcomes["errors"] == len(HOSTILE)
    for path, line in bad:
        assert result.stdout.str().count(f"{path}:{line}: ") == 1, path.name
    assert "Interrupted" not in result.stdout.str() and "Traceback" not in result.stdout.str()
    assert len(_records(pytester.path)) == 2 + 2 * len(HOSTILE)


# --- item 4: collection is linear ---------------------------------------------------------------

def test_ten_thousand_bad_records_are_a_line_each(pytester: pytest.Pytester,
                                                  xdist: list[str]) -> None:
    bad = [{"id": f"b-{i}", "diagnosis": "x"} for i in range(10_000)]  # no objective, patient
    folder = pytester.mkdir("cases")
    # A record a line (xdist shows one of the errors whose text is the same).
    (folder / "bad.json").write_text("[\n" + ",\n".join(map(json.dumps, bad)) + "\n]\n")
    write_yaml_cases(folder / "good.yaml", [make_case(1)])
    result = pytester.runpytest("cases", "--agent-run-name=r", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=1, errors=21)
    out = result.stdout.lines
    # One line each, short unique names (line-1.1.1... made 4,000 records 16.9 MB).
    assert sum("field 'objective'" in line for line in out) == 10_000
    assert len(out) < 10_000 + 300 and len(result.stdout.str()) < 10_000 * 250
    names = [line.split("::")[1].split()[0] for line in out
             if line.startswith("ERROR cases/bad.json::")]
    assert len(names) == len(set(names)) == 21 and names[-1] == "line-22-and-9979-more"
    assert max(map(len, names)) <= len("line-22-and-9979-more")
    summary = json.loads((pytester.path / "reports/r/summary.json").read_text())
    assert summary["bad_case_records"] == 10_000


def test_many_errors_of_one_yaml_file_name_their_own_lines(tmp_path: Path) -> None:
    nameless = [{k: v for k, v in make_case(i).items() if k != "id"} for i in range(300)]
    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), *nameless])
    loaded = load_case_file(path)
    lines = [e.line for e in loaded.errors]
    assert {e.field for e in loaded.errors} == {"id"}
    # Each its own line (they were all "line 1" when no "id:" marked where a case starts).
    starts = [i + 1 for i, text in enumerate(path.read_text().splitlines())
              if text.startswith("- ")]
    assert lines == starts[1:] and len(set(lines)) == 300


def _alias_bomb(path: Path) -> Path:
    text = ("dataset: t\ncases:\n- &c " + json.dumps(make_case(1)) + "\n"
            + "- *c\n" * 50_000)
    path.write_text(text)
    return path


def _laughs(path: Path) -> Path:
    levels = ["  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"] + [
        f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 7)]
    case = yaml.safe_dump(make_case(2), sort_keys=False)
    path.write_text(case + "physical_exam:\n" + "".join(levels))
    return path


@pytest.mark.parametrize("make", [_alias_bomb, _laughs], ids=["50,000 aliases", "laughs"])
def test_an_alias_bomb_is_refused_in_one_line(tmp_path: Path,
                                              make: Callable[[Path], Path]) -> None:
    loaded = load_case_file(make(tmp_path / "bomb.yaml"))
    (error,) = loaded.errors
    assert "alias bomb refused" in str(error) and not loaded.cases
    assert "\n" not in str(error)


def test_a_few_aliases_still_load(tmp_path: Path) -> None:
    exam = json.dumps({"Vital Signs": {"Temperature": "37.0 C"}})
    lines = ["dataset: t\ncases:\n"]
    for i in range(1, 30):
        case = make_case(i)
        del case["physical_exam"]
        shared = f"&vitals {exam}" if i == 1 else "*vitals"
        lines.append(f'- {json.dumps(case)[:-1]}, "physical_exam": {shared} }}\n')
    path = tmp_path / "few.yaml"
    path.write_text("".join(lines))
    loaded = load_case_file(path)
    assert not loaded.errors and len(loaded.cases) == 29
    assert loaded.cases[-1][1].physical_exam == json.loads(exam)


# --- item 6: nothing the case says reaches the terminal raw --------------------------------------

def test_case_text_is_escaped_on_the_terminal_and_kept_in_the_record(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    hostile = "Zebra\x1b[2J\x1b[31m fever\rPASSED"
    wrong = make_case(2, diagnosis=hostile, choices=["Abc unrelated", "Condition2 disease"],
                      tests={"Skin Biopsy": "Unremarkable."})
    bad = {**make_case(3), "\x1b]0;owned\x07notes": "x"}  # an unknown key: a collection error
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), wrong, bad])
    result = pytester.runpytest("c.yaml", "--agent-run-name=r", "-rA", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert "expected:   Zebra\\x1b[2J\\x1b[31m fever\\rPASSED" in out
    assert "\\x1b]0;owned\\x07notes" in out
    (record,) = [r for r in _records(pytester.path) if r["case_id"] == "t-02"]
    assert record["expected"] == hostile  # the record keeps the case's text


# --- item 7: small losses -------------------------------------------------------------------------

def test_a_byte_order_mark_keeps_the_first_jsonl_case(tmp_path: Path) -> None:
    path = tmp_path / "medqa.jsonl"
    path.write_text("\ufeff" + osce_line(0) + "\n" + osce_line(1) + "\n", encoding="utf-8")
    loaded = load_case_file(path)
    assert not loaded.errors and [c.id for _, c in loaded.cases] == ["medqa-0000", "medqa-0001"]


def test_a_duplicate_key_in_a_case_is_an_error_for_that_case(tmp_path: Path) -> None:
    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), make_case(2)])
    text = path.read_text().replace("diagnosis: Condition2 disease\n",
                                    "diagnosis: Condition2 disease\n  diagnosis: Other\n")
    path.write_text(text)
    line = text.splitlines().index("  diagnosis: Other") + 1
    loaded = load_case_file(path)
    (error,) = loaded.errors
    assert (error.line, error.field) == (line, "diagnosis") and "duplicate key" in error.message
    assert [c.id for _, c in loaded.cases] == ["t-01"]


def test_a_duplicate_top_level_key_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("dataset: t\ncases: []\ncases:\n- " + json.dumps(make_case(1)) + "\n")
    (error,) = load_case_file(path).errors
    assert (error.line, error.field) == (3, "cases")


def test_an_unknown_top_level_key_is_an_error_and_the_cases_load(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("dataset: t\ndifficulty: hard\ncases:\n- " + json.dumps(make_case(1)) + "\n")
    loaded = load_case_file(path)
    (error,) = loaded.errors
    assert (error.line, error.field) == (2, "difficulty") and "unknown top-level key" in str(error)
    assert [c.id for _, c in loaded.cases] == ["t-01"]


#: Case files with no case: an empty cases list, cases given nothing (name, text, line, field).
EMPTY = [("list.yaml", "dataset: t\ncases: []\n", 2, "cases"),
         ("nothing.yaml", "dataset: t\ncases:\n", 2, "cases")]
#: Files with nothing that makes them cases: a data fixture, left alone in a folder walk
#: (issue 32: a repository's `tests/data` of such fixtures failed its own test run): an
#: empty JSON list, an empty JSON object, a zero-byte file.
NOT_CASES = [("list.json", "[]"), ("object.json", "{}\n"), ("zero.yaml", "")]
# Each test below puts all its files in one run per worker mode, and checks each file.


def test_an_empty_data_file_in_a_folder_is_left_alone(pytester: pytest.Pytester,
                                                      xdist: list[str]) -> None:
    folder = pytester.mkdir("cases")
    write_yaml_cases(folder / "good.yaml", [make_case(1)])
    for name, text in NOT_CASES:
        (folder / name).write_text(text)
    result = pytester.runpytest("cases", "--agent-run-name=r", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK


def test_an_empty_file_named_as_cases_is_an_error(pytester: pytest.Pytester,
                                                  xdist: list[str]) -> None:
    for name, text in NOT_CASES:
        (pytester.path / name).write_text(text)
    result = pytester.runpytest(*(name for name, _ in NOT_CASES), "--agent-run-name=r",
                                *NO_CACHE, *xdist)
    result.assert_outcomes(errors=len(NOT_CASES))
    for name, _ in NOT_CASES:
        result.stdout.fnmatch_lines([f"*{name}:1: field '<file>': *"])


def test_an_empty_case_file_in_a_folder_is_an_error(pytester: pytest.Pytester,
                                                    xdist: list[str]) -> None:
    folder = pytester.mkdir("cases")
    write_yaml_cases(folder / "good.yaml", [make_case(1)])
    for name, text, _, _ in EMPTY:
        (folder / name).write_text(text)
    result = pytester.runpytest("cases", "--agent-run-name=r", *NO_CACHE, *xdist)
    result.assert_outcomes(passed=1, errors=len(EMPTY))
    for name, _, line, field in EMPTY:
        result.stdout.fnmatch_lines([f"*{folder / name}:{line}: field '{field}': *"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_validate_on_a_folder_names_a_damaged_file(tmp_path: Path) -> None:
    from pytest_agentclinic.cases.validate import validate_paths

    write_yaml_cases(tmp_path / "good.yaml", [make_case(1)])
    _laughs(tmp_path / "bomb.yaml")
    problems = validate_paths([tmp_path])
    assert [(p.path.name, p.line) for p in problems if "alias bomb" in str(p.message)] == [
        ("bomb.yaml", 1)]


def test_a_bad_element_still_names_its_field_once_its_readers_left_sys_modules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The YAML readers are imported by the first load that needs them. pytest's in-process
    # runs drop the modules imported during them from sys.modules (the package keeps them
    # as attributes): the loader then imported the element error's class anew, the reader
    # still made the old one, and the bad element read as "<case>" (the suite failed so).
    import sys

    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), make_case(2)])
    text = path.read_text().replace("diagnosis: Condition2 disease\n",
                                    "diagnosis: Condition2 disease\n  diagnosis: Other\n")
    path.write_text(text)
    load_case_file(path)  # the readers imported
    for name in ("pytest_agentclinic.cases.documents", "pytest_agentclinic.cases.yaml_stream"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # gone already, maybe
    (error,) = load_case_file(path).errors
    assert error.field == "diagnosis" and "duplicate key" in error.message
