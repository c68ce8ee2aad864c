"""Damaged inputs, round 3: JSONL is split on ``\\n`` only, a CSV with a header and no rows is
an error (collection and ``validate``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import osce_line

from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.cli import main

HEADER = "case_vignette,choice_1,choice_2,choice_3,choice_4,answer,category,dataset,case_id\n"


def _jsonl(path: Path) -> Path:
    # U+2028, U+2029, U+0085 and a form feed inside strings are valid JSON content;
    # str.splitlines() breaks lines at each of them.
    texts = ["line\u2028separator", "next\x85line", "para\u2029graph", "form\x0cfeed"]
    lines = [osce_line(i, Objective_for_Doctor=f"Assess {text} {i}.")
             for i, text in enumerate(texts)]
    raw = [json.dumps(json.loads(line), ensure_ascii=False) for line in lines]
    path.write_text("\n".join(raw) + "\n", encoding="utf-8")
    return path


def test_jsonl_records_holding_unicode_line_breaks_are_read_whole(tmp_path: Path) -> None:
    loaded = load_case_file(_jsonl(tmp_path / "c.jsonl"))
    assert loaded.errors == []
    assert [line for line, _case in loaded.cases] == [1, 2, 3, 4]
    assert "line\u2028separator" in loaded.cases[0][1].objective


def test_validate_accepts_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(_jsonl(tmp_path / "c.jsonl"))]) == 0


def test_a_csv_with_a_header_only_fails_validate(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.csv"
    path.write_text(HEADER)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1: error" in out and "no rows" in out


def test_a_csv_with_a_header_only_is_a_collection_error(pytester: pytest.Pytester,
                                                        xdist: list[str]) -> None:
    (pytester.path / "v.csv").write_text(HEADER)
    result = pytester.runpytest("v.csv", "-p", "no:cacheprovider", *xdist)
    result.stdout.fnmatch_lines(["*v.csv:1:*no rows*"])
    assert result.ret != 0
