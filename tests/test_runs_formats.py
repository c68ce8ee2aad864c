"""Every versioned file is checked when read (``core/versioned.py``): a version this
pytest-agentclinic cannot read is refused with one line naming the file, the format and the
version, and an older one with a registered migration is brought forward. One test per
format; the last test fails when a format is added without one."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import make_case, write_yaml_cases

import pytest_agentclinic
from pytest_agentclinic import api
from pytest_agentclinic.cases import parse_cache
from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.cli import main
from pytest_agentclinic.core import versioned
from pytest_agentclinic.core.errors import InputError
from pytest_agentclinic.core.measures import EncounterMeasures
from pytest_agentclinic.core.transcript import Transcript
from pytest_agentclinic.report.review import KEY, read_key
from pytest_agentclinic.runs import directory, transcripts
from pytest_agentclinic.runs.results import write_results


@pytest.fixture
def migration() -> Iterator[Any]:
    """Register migrations for one test only (the registry is the process's)."""
    added: list[tuple[str, int]] = []

    def register(kind: str, from_version: int, fn: versioned.Migration) -> None:
        versioned.register_migration(kind, from_version, fn)
        added.append((kind, from_version))

    yield register
    for key in added:
        versioned.unregister_migration(*key)


def record(i: int = 0, **over: Any) -> api.ResultRecord:
    return api.ResultRecord(**{
        "protocol": "agentclinic", "case_id": f"c-{i}", "dataset": "d", "specialty": "s",
        "models": {"doctor": "m"}, "sample": 0, "turn_budget": 20, "run": "r",
        "nodeid": f"c.yaml::c-{i}", "outcome": "correct", "expected": "e", "given": "e",
        "turns_used": 1, "duration_s": 0.1, **over})


def rewrite_line(results: Path, line: int, change: dict[str, Any]) -> None:
    lines = results.read_text().splitlines()
    data = json.loads(lines[line - 1])
    data.update(change)
    lines[line - 1] = json.dumps(data)
    results.write_text("\n".join(lines) + "\n")


def test_a_result_record_of_an_unknown_version_is_refused_by_file_and_line(
        tmp_path: Path) -> None:
    write_results(tmp_path, [record(0), record(1)])
    rewrite_line(tmp_path / "results.jsonl", 2, {"version": 2})
    with pytest.raises(ValueError, match=r"results.jsonl:2: result record format 2 is newer "
                                         r"than pytest-agentclinic .* reads \(format 1\)"):
        directory.load_records(tmp_path)
    rewrite_line(tmp_path / "results.jsonl", 2, {"version": "two"})
    with pytest.raises(ValueError, match=r"results.jsonl:2: 'version' is 'two', not a "
                                         r"result record format number"):
        directory.load_records(tmp_path)
    # A view of the run (the HTML page) skips the line and counts it.
    records, skipped = directory.load_records_skipping_bad(tmp_path)
    assert ([r.case_id for r in records], skipped) == (["c-0"], 1)


def test_an_older_result_record_is_migrated_when_read(tmp_path: Path, migration: Any) -> None:
    write_results(tmp_path, [record(0)])
    # Format 0, as a migration would know it: the outcome was called "result".
    data = json.loads((tmp_path / "results.jsonl").read_text())
    data["version"] = 0
    data["result"] = data.pop("outcome")
    (tmp_path / "results.jsonl").write_text(json.dumps(data) + "\n")
    with pytest.raises(ValueError, match=r"result record format 0 is not one .* no "
                                         r"migration from 0"):
        directory.load_records(tmp_path)

    def rename(old: dict[str, Any]) -> dict[str, Any]:
        new = dict(old)
        new["outcome"] = new.pop("result")
        return new

    migration("result record", 0, rename)
    [read] = directory.load_records(tmp_path)
    assert (read.version, read.outcome) == (1, "correct")


def test_a_record_whose_measures_are_of_an_unknown_version_is_refused(tmp_path: Path) -> None:
    measures = EncounterMeasures(method="elicit-1", facts=4, facts_elicited=2, key_facts=1,
                                 key_facts_elicited=1, questions=3, repeated_questions=0,
                                 redundant_questions=0, tests_ordered=0, test_spend_usd=0.0)
    write_results(tmp_path, [record(0, measures=measures)])
    rewrite_line(tmp_path / "results.jsonl", 1, {"measures": {**measures.model_dump(),
                                                              "version": 3}})
    with pytest.raises(ValueError, match=r"results.jsonl:1: field 'measures.version': .*"
                                         r"encounter measures format 3 is newer"):
        directory.load_records(tmp_path)


def test_a_transcript_of_an_unknown_version_is_not_read_and_the_note_says_why(
        tmp_path: Path, migration: Any) -> None:
    t = Transcript(protocol="agentclinic", case_id="c-0", dataset="d", specialty="s",
                   models={"doctor": "m"}, sample=0, turn_budget=20, diagnosis="flu")
    path = Path(transcripts.write_transcript(tmp_path, tmp_path / "c.yaml", "c.yaml::c-0", t))
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "version": 5}))
    found, note = transcripts.read_transcript(tmp_path, record(0, transcript=str(path)))
    assert found is None
    assert note is not None and f"{path}: transcript format 5 is newer" in note
    # An older one is brought forward by its migration.
    path.write_text(json.dumps({**data, "version": 0, "final": data.pop("diagnosis")}))
    migration("transcript", 0, lambda old: {**{k: v for k, v in old.items() if k != "final"},
                                            "diagnosis": old["final"]})
    found, note = transcripts.read_transcript(tmp_path, record(0, transcript=str(path)))
    assert note is None and found is not None and found.diagnosis == "flu"


def test_a_summary_of_an_unknown_version_is_refused_and_an_older_one_migrated(
        tmp_path: Path, migration: Any) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"version": 7, "items": 1}))
    with pytest.raises(versioned.UnknownVersion,
                       match=r"summary.json: summary format 7 is newer than "):
        directory.read_summary(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"version": 0, "n_items": 3}))
    with pytest.raises(ValueError, match="summary format 0 is not one"):
        directory.read_summary(tmp_path)
    migration("summary", 0, lambda old: {"items": old["n_items"]})
    assert directory.read_summary(tmp_path) == {"items": 3, "version": 1}
    # One written before summaries were numbered is of the first format.
    (tmp_path / "summary.json").write_text(json.dumps({"items": 2}))
    assert directory.read_summary(tmp_path) == {"items": 2, "version": 1}


def test_a_manifest_of_an_unknown_version_is_refused_by_the_report(tmp_path: Path,
                                                                   capsys: Any) -> None:
    directory.start_run(tmp_path, "r", 5)
    write_results(tmp_path, [record(0)])
    assert directory.completeness(tmp_path, 1) == "partial: 1 of 5 items"
    data = json.loads((tmp_path / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps({**data, "version": 4}))
    with pytest.raises(versioned.UnknownVersion, match=r"run.json: run manifest format 4 "
                                                       r"is newer"):
        directory.completeness(tmp_path, 1)
    assert main(["report", str(tmp_path), "--resamples=20", "--no-html"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "run.json: run manifest format 4 is newer" in line


def test_an_imported_review_of_an_unknown_version_is_refused(tmp_path: Path,
                                                              capsys: Any) -> None:
    directory.write_review(tmp_path, {"version": 9, "by_model": {}})
    with pytest.raises(versioned.UnknownVersion, match=r"review.json: expert review format 9 "
                                                       r"is newer"):
        directory.read_review(tmp_path)
    directory.write_review(tmp_path, {"by_model": {}})
    with pytest.raises(versioned.UnknownVersion, match=r"review.json: no 'version' field, so "
                                                       r"no expert review format"):
        directory.read_review(tmp_path)


@pytest.mark.parametrize("raw", [b"\xff\xfe not text", b'{"by_model": '])
def test_an_imported_review_that_is_not_json_text_is_an_input_error(tmp_path: Path,
                                                                     raw: bytes) -> None:
    # Like summary.json and a review key: one line naming the file, never a bare decoding
    # error (the command line reports only the project's errors as bad input).
    (tmp_path / directory.REVIEW_FILE).write_bytes(raw)
    with pytest.raises(InputError, match=r"review.json"):
        directory.read_review(tmp_path)


def test_a_review_key_of_an_unknown_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / KEY).write_text(json.dumps({"version": 3, "models": {}, "items": {}}))
    with pytest.raises(versioned.UnknownVersion, match=r"key.json: review key format 3 is "
                                                       r"newer"):
        read_key(tmp_path / KEY)
    (tmp_path / KEY).write_text(json.dumps({"version": 1, "models": {}, "items": {}}))
    assert read_key(tmp_path / KEY)["version"] == 1


def test_a_parsed_case_file_of_an_unknown_version_is_parsed_anew(tmp_path: Path) -> None:
    cases = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), make_case(2)])
    cache = tmp_path / "cache"
    first = parse_cache.load(cases, cache)
    [entry] = (cache / parse_cache.FOLDER).glob("*.jsonl")
    header, *lines = entry.read_text().splitlines()
    # A foreign entry that would be misread as this version's: one case, renamed.
    forged = {**json.loads(header), "version": 8, "lines": [1]}
    entry.write_text("\n".join([json.dumps(forged), lines[0].replace("c-1", "forged")]) + "\n")
    with pytest.raises(versioned.UnknownVersion,
                       match=re.escape(f"{entry.name}: parse cache format 8 is newer")):
        parse_cache.PARSE_CACHE_FORMAT.upgrade(forged, str(entry))
    again = parse_cache.load(cases, cache)
    assert [c.id for _, c in again.cases] == [c.id for _, c in first.cases]
    assert "forged" not in entry.read_text()


def test_a_case_of_an_unknown_version_is_a_bad_case_record_naming_its_line(
        tmp_path: Path) -> None:
    path = write_yaml_cases(tmp_path / "a.yaml", [make_case(1), {**make_case(2), "version": 2}])
    loaded = load_case_file(path)
    assert [case.id for _, case in loaded.cases] == ["t-01"]
    [error] = loaded.errors
    assert (error.path, error.field) == (path, "version")
    assert "case format 2 is newer than pytest-agentclinic" in error.message
    # A document of cases of another format: none of its cases is read.
    document = tmp_path / "b.yaml"
    document.write_text(yaml.safe_dump({"dataset": "x", "version": 3, "cases": [make_case(3)]},
                                       sort_keys=False))
    loaded = load_case_file(document)
    assert loaded.cases == []
    [error] = loaded.errors
    assert (error.line, error.field) == (2, "version")
    assert "case format 3 is newer" in error.message


def test_a_migration_is_registered_only_for_a_known_format_below_its_version() -> None:
    with pytest.raises(ValueError, match="no versioned format named 'nothing'"):
        versioned.register_migration("nothing", 0, dict)
    with pytest.raises(ValueError, match="must start below the current format 1"):
        versioned.register_migration("summary", 1, dict)


#: Each format (by kind) and the test above of its refusal.
FORMAT_TESTS = {
    "result record": test_a_result_record_of_an_unknown_version_is_refused_by_file_and_line,
    "encounter measures": test_a_record_whose_measures_are_of_an_unknown_version_is_refused,
    "transcript": test_a_transcript_of_an_unknown_version_is_not_read_and_the_note_says_why,
    "summary": test_a_summary_of_an_unknown_version_is_refused_and_an_older_one_migrated,
    "run manifest": test_a_manifest_of_an_unknown_version_is_refused_by_the_report,
    "expert review": test_an_imported_review_of_an_unknown_version_is_refused,
    "review key": test_a_review_key_of_an_unknown_version_is_refused,
    "parse cache": test_a_parsed_case_file_of_an_unknown_version_is_parsed_anew,
    "case": test_a_case_of_an_unknown_version_is_a_bad_case_record_naming_its_line,
}


def declared_formats() -> set[str]:
    """The kinds of every ``Format("kind", ...)`` in the package's source (imported or not)."""
    found: set[str] = set()
    for path in Path(pytest_agentclinic.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Format"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                found.add(str(node.args[0].value))
    return found


def test_every_versioned_format_has_its_test() -> None:
    """A format added without a test of its refusal fails here."""
    assert declared_formats() == set(FORMAT_TESTS)
    assert set(versioned.FORMATS) <= set(FORMAT_TESTS)
