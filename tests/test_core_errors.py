"""core/errors.py: one base under every exception the project defines, and the command line
reports any of them as one line with a failing status."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

from pytest_agentclinic import cli
from pytest_agentclinic.core.errors import (
    AgentClinicError,
    ExtensionError,
    InputError,
    RunDirectoryError,
)

PACKAGE = Path(cli.__file__).resolve().parent


def _modules_defining_classes() -> list[str]:
    """The package's modules that define a class with a base (the only ones that can define
    an exception); read by AST so modules without any are not imported."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.ClassDef) and n.bases for n in ast.walk(tree)):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(p for p in parts if p != "__init__"))
    return names


def project_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in the package (warnings aside: they are issued, not
    raised)."""
    found: dict[type[BaseException], None] = {}
    for name in _modules_defining_classes():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and value.__module__ == module.__name__
                    and not issubclass(value, Warning)):
                found[value] = None
    return list(found)


def test_every_project_exception_is_an_agentclinic_error() -> None:
    classes = project_exceptions()
    # The walk must see the package's exceptions, or the check below says nothing.
    names = {c.__name__ for c in classes}
    assert {"LLMError", "ReplayMissError", "RunInUse", "ExtensionError", "MeldInputError",
            "EncounterFailed", "DamagedFile", "NoRun"} <= names, names
    outside = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes
                     if not issubclass(c, AgentClinicError))
    assert outside == []


def test_families_keep_the_builtin_bases_callers_catch() -> None:
    from pytest_agentclinic.core.extensions import ExtensionError as from_extensions
    from pytest_agentclinic.llm.errors import LLMError
    from pytest_agentclinic.plugin.item import EncounterFailed
    from pytest_agentclinic.runs.errors import RunDirError, RunInUse

    assert from_extensions is ExtensionError and issubclass(ExtensionError, ValueError)
    assert issubclass(InputError, ValueError)
    assert issubclass(RunInUse, RunDirectoryError) and issubclass(RunDirError, RunDirectoryError)
    assert issubclass(LLMError, AgentClinicError)
    # pytest shows an assertion's failure as a failed test, not an error: kept.
    assert issubclass(EncounterFailed, AssertionError)


@pytest.mark.parametrize(("kwargs", "text"), [
    ({}, "no cases"),
    ({"path": "c.yaml"}, "c.yaml: no cases"),
    ({"path": "c.yaml", "line": 3}, "c.yaml:3: no cases"),
    ({"path": "c.yaml", "line": 3, "field": "cases[0].id"}, "c.yaml:3: field 'cases[0].id': "
                                                            "no cases"),
])
def test_an_input_error_names_what_it_knows(kwargs: dict[str, object], text: str) -> None:
    error = InputError("no cases", **kwargs)  # type: ignore[arg-type]
    assert str(error) == text
    assert error.message == "no cases" and error.field == kwargs.get("field")


@pytest.mark.parametrize("error", [
    InputError("expected text", path="cases.yaml", line=7, field="diagnosis"),
    RunDirectoryError("reports/r1 is held by process 42"),
    ExtensionError("triage (agentclinic-triage 1.0): cannot load"),
])
def test_the_cli_reports_any_project_error_in_one_line(
        error: AgentClinicError, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # The module the CLI will load: a pytester run in this process may have dropped an
    # earlier import of it from sys.modules, leaving a stale attribute on the package.
    validate = importlib.import_module("pytest_agentclinic.commands.validate")

    def fail(args: object) -> int:
        raise error

    monkeypatch.setattr(validate, "run", fail)
    assert cli.main(["validate", "x.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"agentclinic validate: error: {type(error).__name__}: ")
    assert str(error) in err


def test_a_bad_line_through_the_cli_names_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "answers.jsonl"
    good = {"correct_answer": "Asthma", "response": "Asthma"}
    source.write_text(json.dumps(good) + "\n" + json.dumps({"correct_answer": "Asthma"}) + "\n")
    status = cli.main(["grade", "--input", str(source), "--output", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert status != 0
    assert len(err.strip().splitlines()) == 1, err
    assert f"{source}:2: field 'response'" in err
