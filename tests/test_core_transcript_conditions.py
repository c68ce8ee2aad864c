"""Conditions are symmetric: a protocol's own (MediQ's setting) travels, pairs, gates and
shows like a built-in one (the bias, the turn budget), through ``ItemHeader.condition``; each
protocol's tables live with the protocol."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_commands_compare import run_cli, write_run
from test_report_statistics import rec

from pytest_agentclinic.cli import main
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.transcript import BUILTIN_CONDITIONS


def _setting(case: str, outcome: str, setting: str, **over: Any) -> ResultRecord:
    return rec(case, outcome, protocol="mediq", conditions={"setting": setting}, **over)


def test_one_accessor_reads_built_in_and_protocol_conditions_alike() -> None:
    r = _setting("c1", "correct", "ask", bias="doctor:recency", turn_budget=10,
                 experiment="multiturn")
    assert [r.condition(name) for name in (*BUILTIN_CONDITIONS, "setting", "absent")] == [
        "offline", "doctor:recency", "10", "multiturn", "-", "ask", "-"]
    assert r.condition_values() == {"patient": "offline", "bias": "doctor:recency",
                                    "turn_budget": "10", "experiment": "multiturn",
                                    "answer_format": "-", "setting": "ask"}


def test_one_list_of_built_in_conditions() -> None:
    from pytest_agentclinic.report import comparison, conditions

    # Two differing constants of one name were once two lists to keep in step.
    assert not hasattr(comparison, "CONDITION_FIELDS")
    assert not hasattr(conditions, "CONDITION_FIELDS")
    assert conditions.condition_fields([]) == BUILTIN_CONDITIONS


def test_pair_on_takes_a_protocols_condition_like_a_built_in_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reproduction: --pair-on refused MediQ's setting, and a setting always paired, so runs
    made under different settings could not be compared across it, as turn budgets can."""
    ask = write_run(tmp_path / "ask", [_setting(f"c{i}", "incorrect" if i < 3 else "correct",
                                                "ask") for i in range(8)])
    fixed = write_run(tmp_path / "fixed", [_setting(f"c{i}", "correct", "fixed")
                                           for i in range(8)])
    # By default items pair on the setting too: nothing pairs, and the reason is named.
    assert run_cli(["compare", str(ask), str(fixed)])[0] == 2
    assert ("setting: only in A ask; only in B fixed; to pair across setting, leave it out: "
            "--pair-on bias,turn_budget,experiment,answer_format") in capsys.readouterr().err
    status, text = run_cli(["compare", str(ask), str(fixed), "--pair-on",
                            "bias,turn_budget,experiment,answer_format", "--by", "setting"])
    assert status == 0, text
    assert "paired 8 judged items; 0 only in A, 0 only in B" in text
    assert "| ask vs fixed " in text and "+0.375" in text
    status, text = run_cli(["compare", str(ask), str(ask), "--pair-on", "setting,bias"])
    assert status == 0 and "paired 8 judged items" in text
    assert run_cli(["compare", str(ask), str(ask), "--pair-on", "colour"])[0] == 2
    assert ("choose from patient, bias, turn_budget, experiment, answer_format, setting"
            in capsys.readouterr().err)


def test_merge_gates_on_an_installed_protocols_condition(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reproduction: ``--agent-gate-on setting=ask`` was accepted by pytest, refused by
    ``agentclinic merge --gate-on``."""
    from pytest_agentclinic.protocols.registry import all_conditions

    assert "setting" in all_conditions()  # MediQ's package is installed in the test env
    runs = [str(write_run(tmp_path / name, [_setting(f"{name}{i}", "correct", "ask")
                                            for i in range(3)])) for name in ("s1", "s2")]
    status = main(["merge", *runs, "--out", str(tmp_path / "merged"), "--no-html",
                   "--gate-on", "setting=ask"])
    err = capsys.readouterr().err
    assert "--gate-on" not in err
    assert status == 0, err
    assert main(["merge", *runs, "--out", str(tmp_path / "m2"), "--gate-on", "colour=red"]) == 2
    assert "FIELD one of patient, bias, turn_budget, experiment, answer_format, setting" in \
        capsys.readouterr().err


def test_agentclinics_tables_come_from_its_protocol() -> None:
    from pytest_agentclinic.protocols.agentclinic import AgentClinic
    from pytest_agentclinic.protocols.registry import report_tables
    from pytest_agentclinic.report import tables

    records = [rec(f"c{i}", "correct", bias=bias) for i in range(3)
               for bias in ("none", "doctor:recency")]
    assert not hasattr(tables, "bias_table") and not hasattr(tables, "craftmd_table")
    assert "accuracy by bias" not in [t.title for t in tables.build_tables(records, 10)]
    assert [t.title for t in AgentClinic().tables(records, 10)] == ["accuracy by bias"]
    titles = [t.title for t in report_tables(records, 10)]
    assert titles.index("accuracy by bias") == titles.index("accuracy by condition") + 1
    # Another protocol's biased records get no AgentClinic table.
    other = [r.model_copy(update={"protocol": "mediq"}) for r in records]
    assert "accuracy by bias" not in [t.title for t in report_tables(other, 10)]


def test_settled_needs_no_agentclinic_protocol() -> None:
    """An installed protocol's encounter uses ``api.settled``: it no longer loads the
    AgentClinic protocol (its agents, biases and grader) to get it."""
    code = ("import sys; from pytest_agentclinic import api; api.settled; "
            "print('pytest_agentclinic.protocols.agentclinic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "False"


def test_the_report_fields_read_built_in_conditions_as_the_accessor_does() -> None:
    from pytest_agentclinic.report.statistics import GROUP_FIELDS, field_value

    for r in (rec("c1", "correct"), _setting("c2", "correct", "ask", bias="patient:recency",
                                             experiment="vignette", answer_format="mcq")):
        for name in (*BUILTIN_CONDITIONS, *r.conditions):
            assert field_value(r, name) == r.condition(name)
            if name in BUILTIN_CONDITIONS:
                assert GROUP_FIELDS[name](r) == r.condition(name)


def test_group_fields_are_the_item_fields_and_the_built_in_conditions() -> None:
    from pytest_agentclinic.report.statistics import GROUP_FIELDS

    assert set(GROUP_FIELDS) - set(BUILTIN_CONDITIONS) == {"doctor", "specialty", "dataset"}
    assert set(BUILTIN_CONDITIONS) <= set(GROUP_FIELDS)


def test_built_in_and_protocol_conditions_group_through_the_one_accessor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``compare --by``, the tables and the gate group a protocol's own condition (MediQ's
    setting) through the accessor a built-in one goes through: ``ItemHeader.condition``."""
    from pytest_agentclinic.report.statistics import GROUP_FIELDS, group_key

    asked: list[str] = []
    read = ResultRecord.condition

    def spy(self: ResultRecord, name: str) -> str:
        asked.append(name)
        return read(self, name)

    monkeypatch.setattr(ResultRecord, "condition", spy)
    r = _setting("c1", "correct", "ask", bias="doctor:recency", turn_budget=10)
    by = ("doctor", "bias", "turn_budget", "setting", "specialty")
    assert group_key(r, by) == (r.models["doctor"], "doctor:recency", "10", "ask", r.specialty)
    assert asked == ["bias", "turn_budget", "setting"]
    asked.clear()
    assert [GROUP_FIELDS[name](r) for name in BUILTIN_CONDITIONS] == [
        read(r, name) for name in BUILTIN_CONDITIONS]
    assert asked == list(BUILTIN_CONDITIONS)
