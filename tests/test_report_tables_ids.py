"""Report tables have stable ids, and summary.json finds its tables by id: not
``by_doctor`` as the first table, nor "accuracy by condition" by its title."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from pytest_agentclinic import api
from pytest_agentclinic.protocols.registry import report_tables
from pytest_agentclinic.report.rundir import write_reports_text
from pytest_agentclinic.report.tables import (
    BY_CONDITION,
    BY_DOCTOR,
    Table,
    build_tables,
    table_by_id,
    table_id,
)
from pytest_agentclinic.runs.summary import build_summary


def records() -> list[api.ResultRecord]:
    return [api.ResultRecord(
        protocol="agentclinic", case_id=f"c-{i}", dataset="d", specialty=("a", "b")[i % 2],
        models={"doctor": "m"}, sample=0, turn_budget=20, bias=("none", "recency")[i // 4],
        run="r", nodeid=f"c.yaml::c-{i}-{i // 4}", outcome=("correct", "incorrect")[i % 3 == 0],
        expected="e", given="e", turns_used=1, duration_s=0.1) for i in range(8)]


def test_every_built_in_table_has_its_own_id_and_keeps_it_when_its_title_pools() -> None:
    tables = report_tables(records(), resamples=50)  # the protocol's own tables too
    ids = [t.id for t in tables]
    assert len(set(ids)) == len(ids)
    assert {BY_DOCTOR, BY_CONDITION, "by_specialty", "by_bias"} <= set(ids)
    by_specialty = table_by_id(tables, "by_specialty")
    assert by_specialty is not None and "pooled over" in by_specialty.title


def test_a_table_without_an_id_is_named_after_its_title() -> None:
    table = Table("mediq: accuracy by setting", ["setting"], [["full"]])
    assert table.id == table_id(table.title) == "mediq_accuracy_by_setting"
    assert replace(table, title="mediq: accuracy by setting (pooled)").id == table.id
    assert Table("x", [], [], id="mine").id == "mine"


def test_the_summary_finds_its_tables_by_id_not_by_place_or_title(tmp_path: Path) -> None:
    rs = records()
    built = build_tables(rs, resamples=50)
    overview, conditions = table_by_id(built, BY_DOCTOR), table_by_id(built, BY_CONDITION)
    assert overview is not None and conditions is not None
    # An extension's table first, the conditions under another title.
    first = Table("triage: by urgency", ["urgency", "n"], [["high", "3"]],
                  [{"urgency": "high", "n": 3}])
    tables = [first, overview, replace(conditions, title="accuracy by condition (pooled)")]
    written = write_reports_text(tmp_path, build_summary({}, rs, 0), tables)
    assert set(written["by_doctor"]) == {row["group"] for row in overview.data} == {"m"}
    assert written["conditions"] == conditions.data != []
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert [t["id"] for t in on_disk["tables"]] == ["triage_by_urgency", BY_DOCTOR, BY_CONDITION]
