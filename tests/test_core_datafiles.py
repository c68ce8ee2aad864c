"""The reader of the package's data tables: rows, comments, and errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentclinic.core.datafiles import data_file, read_pairs, read_rows
from pytest_agentclinic.core.errors import InputError


def _table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.tsv"
    path.write_text(text, encoding="utf-8")
    return path


def test_rows_skip_comments_and_blank_lines(tmp_path: Path) -> None:
    path = _table(tmp_path, "# heading\n\nzz\tzeta\n# section\naa\talpha\n")
    rows = read_rows(path, 2)
    assert [(r.line, r.cells) for r in rows] == [(3, ("zz", "zeta")), (5, ("aa", "alpha"))]
    assert list(read_pairs(path)) == ["zz", "aa"]  # the file's order


@pytest.mark.parametrize(("text", "line", "says"), [
    ("aa\talpha\nbb alpha\n", 2, "1 tab-separated cells, the table has 2"),
    ("aa\talpha\t\n", 1, "3 tab-separated cells"),
    ("aa\t alpha\n", 1, "spaces around it"),
    ("aa\talpha\n\naa\talpha again\n", 3, "'aa' is given twice"),
])
def test_a_bad_row_names_file_and_line(tmp_path: Path, text: str, line: int, says: str) -> None:
    path = _table(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_pairs(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert says in str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(("package", "name"), [
    ("pytest_agentclinic.core", "abbreviations.tsv"),
    ("pytest_agentclinic.core", "word_forms.tsv"),
    ("pytest_agentclinic.agents", "patient_glossary.tsv"),
    ("pytest_agentclinic.agents", "doctor_biases.tsv"),
])
def test_the_shipped_tables_are_in_the_data_folders(package: str, name: str) -> None:
    table = data_file(package, name)
    assert table.is_file()
    assert read_rows(table, 7 if name == "doctor_biases.tsv" else 2)
