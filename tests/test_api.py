"""What MediQ (issue 35) needed of the extension API and the reports: JSON-lines record
shapes an extension reads (``.jsonl`` is built in, so by the records' keys), and a protocol's
own conditions telling its items apart in the measures, the view and the charts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from pytest_agentclinic import api
from pytest_agentclinic.report.beyond import cost_accuracy_chart, one_per_conversation
from pytest_agentclinic.report.viewer import item_key


def _read_quiz(path: Path, text: str) -> Any:
    for line, row in enumerate(text.splitlines(), 1):
        record = json.loads(row)
        if not record["truth"]:
            yield line, api.CaseError(path, line, "truth", "empty")
            continue
        yield line, {"id": f"q-{record['quiz']}", "objective": "o", "patient": {},
                     "diagnosis": record["truth"], "metadata": {"quiz": record["quiz"]}}


def test_an_extension_reads_jsonl_records_recognised_by_their_keys(tmp_path: Path) -> None:
    api.register_jsonl_shape(api.JsonlShape("quiz", ("quiz", "truth"), _read_quiz))
    (tmp_path / "a.jsonl").write_text('{"quiz": 1, "truth": "Gout"}\n'
                                      '{"quiz": 2, "truth": ""}\n'
                                      '{"quiz": 3, "truth": "Lupus"}\n')
    cases, errors = api.load_cases(tmp_path / "a.jsonl")
    assert [(c.id, c.diagnosis, c.metadata) for c in cases] == [
        ("q-1", "Gout", {"quiz": 1}), ("q-3", "Lupus", {"quiz": 3})]
    assert [(e.line, e.field) for e in errors] == [(2, "truth")]
    # A record of a built-in shape (it has ``diagnosis``) is read as before: the project's
    # reader, which refuses the unknown keys, not the extension's.
    (tmp_path / "b.jsonl").write_text('{"id": "c-1", "objective": "o", "patient": {}, '
                                      '"diagnosis": "Gout", "quiz": 9, "truth": "x"}\n')
    built_in, errors = api.load_cases(tmp_path / "b.jsonl")
    assert built_in == [] and [e.field for e in errors] == ["quiz"]


def test_a_failing_shape_reader_is_one_error_for_its_file(tmp_path: Path) -> None:
    def broken(path: Path, text: str) -> Any:
        raise KeyError("oops")

    api.register_jsonl_shape(api.JsonlShape("brittle", ("brittle_key",), broken))
    (tmp_path / "a.jsonl").write_text('{"brittle_key": 1}\n')
    cases, errors = api.load_cases(tmp_path / "a.jsonl")
    assert cases == [] and len(errors) == 1 and "KeyError" in errors[0].message


def _record(setting: str, outcome: str = "correct", **over: Any) -> api.ResultRecord:
    measures = api.EncounterMeasures(method="m", facts=4, facts_elicited=1, key_facts=0,
                                     key_facts_elicited=0, questions=2, repeated_questions=0,
                                     redundant_questions=0, tests_ordered=0,
                                     test_spend_usd=0.0)
    fields: dict[str, Any] = {
        "protocol": "p", "case_id": "c", "dataset": "d", "specialty": "s",
        "models": {"doctor": "m"}, "sample": 0, "turn_budget": 5, "run": "r",
        "nodeid": f"f::c[{setting}]", "outcome": outcome, "expected": "A", "given": "A",
        "turns_used": 3, "duration_s": 0.0, "conditions": {"setting": setting},
        "measures": measures}
    return api.ResultRecord(**{**fields, **over})


def test_measures_count_each_condition_of_a_case_once() -> None:
    records = [_record("basic"), _record("scale"), _record("scale")]
    assert len(one_per_conversation(records)) == 2


def test_the_view_tells_the_conditions_of_a_case_apart() -> None:
    assert item_key(_record("basic")) != item_key(_record("scale"))
    assert item_key(_record("basic")) == item_key(_record("basic", nodeid="other"))


def test_no_cost_chart_when_every_measured_item_is_an_error() -> None:
    assert cost_accuracy_chart([_record("basic", "error")], {"m": "#000"}) == ""


def test_compare_groups_by_a_protocols_own_condition(tmp_path: Path) -> None:
    runs = {"a": ("correct", "incorrect"), "b": ("correct", "correct")}
    for run, (basic, scale) in runs.items():
        api.write_records(tmp_path / run, [
            _record("basic", basic, run=run, given="A" if basic == "correct" else "B"),
            _record("scale", scale, run=run, given="A" if scale == "correct" else "B")])
    done = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "compare", "a", "b",
                           "--by", "setting"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[1].strip(): line for line in done.stdout.splitlines()
            if line.startswith("| ") and "setting" not in line}
    assert set(rows) == {"basic", "scale", "all"}
    assert "+0.000" in rows["basic"] and "+1.000" in rows["scale"]
    bad = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "compare", "a", "b",
                          "--by", "settings"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=False)
    assert bad.returncode == 2 and "choose from" in bad.stderr and "setting" in bad.stderr
