"""Hostile and broken case files, each run for real (pytest in a subprocess, offline agents):
what the run did with the file, and how many good cases of the other files still ran.

``rows()`` gives one row per input: ``case``, ``outcome``, ``records_kept`` (records written
of the good cases expected) and ``secrets_found`` (always 0: no input here carries one).
Runs ``python -m pytest`` four times (~8 s CPU, ~20 s on 2 busy cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The good cases of ``good.yaml``, beside every hostile file.
GOOD = 2
_CSV_HEADER = "case_vignette,choice_1,choice_2,choice_3,choice_4,answer,category,dataset,case_id"
_CSV_ROW = ('"A 30-year-old man presents with a rash. Which is the most likely diagnosis?",'
            "Psoriasis,Eczema,Tinea,Scabies,Psoriasis,Dermatology,derm,c-{n}")
_HOSTILE_TEXT = "Zebra\x1b[2J\x1b[31m fever\rPASSED"


def _case(i: int, **over: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": f"t-{i:02d}", "specialty": "Dermatology",
        "objective": f"Evaluate and diagnose the patient presenting with complaint {i}.",
        "patient": {"demographics": "40-year-old woman",
                    "history": f"I have had problem number {i} for two weeks.",
                    "symptoms": {"primary": "Itchy rash"}},
        "tests": {"Skin Biopsy": f"Findings typical of condition{i} disease."},
        "diagnosis": f"Condition{i} disease",
        "choices": [f"Condition{i} disease", "Other thing", "Third option", "Fourth one"]}
    return {**case, **over}


def _osce(i: int) -> str:
    return json.dumps({"OSCE_Examination": {
        "Objective_for_Doctor": f"Assess the patient with symptom {i}.",
        "Patient_Actor": {"Demographics": "50-year-old man", "History": f"Symptom {i}.",
                          "Symptoms": {"Primary_Symptom": "Cough"}},
        "Test_Results": {"Chest_X-Ray": f"Consolidation pattern type{i}"},
        "Correct_Diagnosis": f"Pneumonia type{i}"}})


def _yaml_cases(cases: list[dict[str, Any]], head: str = "dataset: t\n") -> str:
    # JSON is YAML: one case a line, so a test can edit one of them as text.
    return head + "cases:\n" + "".join(f"- {json.dumps(c)}\n" for c in cases)


@dataclass(frozen=True)
class Input:
    """A hostile file: its name, text, the good cases in it and what the run must show."""

    label: str
    name: str
    text: str
    good: int
    #: (file, line) the one error must name; None: no error expected.
    error_at: tuple[str, int] | None


def _inputs() -> list[Input]:
    dup = _case(51)
    dup_text = _yaml_cases([_case(50), dup]).replace(
        '"diagnosis": "Condition51 disease"',
        '"diagnosis": "Condition51 disease", "diagnosis": "Other"')
    return [
        Input("JSONL integer of 5,000 digits", "bigint.jsonl",
              f"{_osce(0)}\n{_osce(1)[:-1]}, \"Weight\": {'9' * 5000}}}\n{_osce(2)}\n", 2,
              ("bigint.jsonl", 2)),
        Input("JSONL nested 1,000 deep", "deep.jsonl",
              f"{_osce(0)}\n{'[' * 1000}{']' * 1000}\n{_osce(2)}\n", 2, ("deep.jsonl", 2)),
        Input("CSV field over 131,072 characters", "vignettes.csv",
              "\n".join([_CSV_HEADER, _CSV_ROW.format(n=1),
                         _CSV_ROW.format(n=2).replace("rash.", "rash" + " x" * 70_000 + "."),
                         _CSV_ROW.format(n=3)]) + "\n", 2, ("vignettes.csv", 3)),
        Input("UTF-8 byte-order mark (JSONL)", "bom.jsonl",
              f"\ufeff{_osce(0)}\n{_osce(1)}\n", 2, None),
        Input("duplicate YAML key in a case", "dupkey.yaml", dup_text, 1, ("dupkey.yaml", 4)),
        Input("unknown top-level key", "unknown.yaml",
              _yaml_cases([_case(60)], head="dataset: t\ndifficulty: hard\n"), 1,
              ("unknown.yaml", 2)),
        Input("empty cases list", "emptylist.yaml", "dataset: t\ncases: []\n", 0,
              ("emptylist.yaml", 2)),
        Input("zero-byte file", "zero.yaml", "", 0, ("zero.yaml", 1)),
        Input("ANSI escapes and CR in case text", "ansi.yaml",
              _yaml_cases([_case(70, diagnosis=_HOSTILE_TEXT,
                                 choices=["Abc unrelated", "Condition70 disease"],
                                 tests={"Skin Biopsy": "Unremarkable."})]), 1, None),
    ]


@dataclass(frozen=True)
class _Run:
    out: str
    rc: int
    cpu: float
    records: list[dict[str, Any]]


def _pytest(folder: Path, *args: str) -> _Run:
    """pytest on ``folder`` (offline agents): its output, CPU seconds (that process alone,
    ``wait4``) and records."""
    log = folder.parent / f"{folder.name}.out"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
             "no:randomly", "--agent-run-name=audit", str(folder), *args],
            cwd=folder.parent, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "COLUMNS": "120", "PYTHONPATH": _pythonpath()})
        _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    results = folder.parent / "reports" / "audit" / "results.jsonl"
    records = ([json.loads(line) for line in results.read_text().splitlines()]
               if results.exists() else [])
    (folder.parent / "reports").rename(folder.parent / f"reports-{folder.name}")
    return _Run(log.read_text("utf-8", "replace"), process.returncode,
                usage.ru_utime + usage.ru_stime, records)


def _pythonpath() -> str:
    """This checkout first: the child runs in a temporary directory, where a relative
    ``PYTHONPATH=.`` would point elsewhere (and the installed copy would be measured)."""
    here = str(Path(__file__).resolve().parents[2])
    rest = [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p]
    return os.pathsep.join([here, *rest])


def _good_file(folder: Path) -> None:
    (folder / "good.yaml").write_text(_yaml_cases([_case(1), _case(2)]))


def _ran(run: _Run, name: str) -> int:
    return sum(str(r["nodeid"]).split("::")[0].endswith(name) for r in run.records)


def _small_inputs(root: Path) -> list[dict[str, Any]]:
    """Every small hostile file in one folder with a good one, in one run."""
    folder = root / "small"
    folder.mkdir()
    _good_file(folder)
    inputs = _inputs()
    for given in inputs:
        (folder / given.name).write_text(given.text, encoding="utf-8")
    run = _pytest(folder)
    rows = []
    for given in inputs:
        errors = [line for line in run.out.splitlines()
                  if f"{given.name}:" in line and ": field " in line]
        if given.error_at is not None:
            where = f"{given.error_at[0]}:{given.error_at[1]}:"
            ok = len(errors) == 1 and where in errors[0]
            outcome = (f"one error at {where} {errors[0].split(': field ')[1][:48]}" if ok
                       else f"WRONG: {len(errors)} error lines")
        else:
            outcome = "no error" if not errors else f"WRONG: {len(errors)} error lines"
        if given.name == "ansi.yaml":
            raw = sum(run.out.count(c) for c in ("\x1b", "\r"))
            kept = any(r.get("expected") == _HOSTILE_TEXT for r in run.records)
            outcome = (f"{raw} raw ESC/CR on the terminal; record keeps the text: {kept}")
        kept_all = _ran(run, "good.yaml") + _ran(run, given.name)
        rows.append({"case": given.label, "outcome": outcome,
                     "records_kept": f"{kept_all}/{GOOD + given.good}", "secrets_found": 0})
    return rows


def _many_bad_records(root: Path) -> dict[str, Any]:
    folder = root / "many"
    folder.mkdir()
    _good_file(folder)
    bad = [{"id": f"b-{i}", "diagnosis": "x"} for i in range(10_000)]
    (folder / "bad.json").write_text(json.dumps(bad, indent=0))
    run = _pytest(folder)
    lines = run.out.splitlines()
    named = sum("bad.json:" in line and "field 'objective'" in line for line in lines)
    alone = root / "alone"
    alone.mkdir()
    _good_file(alone)
    start = _pytest(alone).cpu  # the same run without the bad file
    return {"case": "10,000 bad records in one file",
            "outcome": f"{named:,} error lines, {len(run.out) / 1e6:.1f} MB output, "
                       f"{run.cpu:.1f} s CPU ({run.cpu - start:+.1f} s over the run "
                       f"without them)",
            "records_kept": f"{len(run.records)}/{GOOD}", "secrets_found": 0}


def _alias_bomb(root: Path) -> dict[str, Any]:
    folder = root / "bomb"
    folder.mkdir()
    _good_file(folder)
    (folder / "bomb.yaml").write_text(
        "dataset: t\ncases:\n- &c " + json.dumps(_case(9)) + "\n" + "- *c\n" * 50_000)
    run = _pytest(folder)
    refused = sum("alias bomb refused" in line for line in run.out.splitlines())
    return {"case": "YAML with 50,000 aliases of one case",
            "outcome": f"refused in {refused} line(s), {run.cpu:.1f} s CPU (pytest start "
                       f"included)",
            "records_kept": f"{len(run.records)}/{GOOD}", "secrets_found": 0}


SCENARIOS: list[Callable[[Path], list[dict[str, Any]]]] = [
    _small_inputs, lambda root: [_many_bad_records(root)], lambda root: [_alias_bomb(root)]]


def rows() -> list[dict[str, Any]]:
    """Run every hostile input; one row each."""
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="agentclinic-inputs-") as tmp:
        for scenario in SCENARIOS:
            out += scenario(Path(tmp))
    return out


if __name__ == "__main__":
    for row in rows():
        print(f"{row['case']:<40} {row['records_kept']:>6}  {row['outcome']}")
