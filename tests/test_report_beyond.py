"""The measures in a real run's summary, report.html and `compare --measures`."""

from __future__ import annotations

import json

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def test_summary_report_and_compare_show_the_measures(
        pytester: pytest.Pytester, xdist: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # Two runs per worker mode, read by both checks (they were two tests, each making both
    # runs: four runs per mode, two of them -n 2 runs, for the same records).
    cases = [make_case(i, key_facts=["Scaly plaques"]) for i in range(1, 4)]
    cases.append(make_case(4, specialty="Neurology"))
    write_yaml_cases(pytester.path / "c.yaml", cases)
    pytester.runpytest("c.yaml", "--agent-run-name", "free", *xdist)
    pytester.runpytest("c.yaml", "--agent-run-name", "capped", "--agent-test-budget", "10",
                       *xdist)
    capsys.readouterr()
    _summary_and_report_show_the_measures(pytester)
    _compare_measures_finds_the_budget_cut_in_spend(pytester, capsys)


def _summary_and_report_show_the_measures(two_runs: pytest.Pytester) -> None:
    run = two_runs.path / "reports" / "free"
    summary = json.loads((run / "summary.json").read_text())
    titles = [t["title"] for t in summary["tables"]]
    assert "information gathering and test cost by doctor" in titles
    assert "information gathering and test cost by doctor and specialty" in titles
    by_doctor = next(t for t in summary["tables"]
                     if t["title"] == "information gathering and test cost by doctor")
    row = by_doctor["data"][0]
    assert row["encounters"] == 4 and row["key_fact_share"]["n"] == 3  # 3 cases mark keys
    low, mean, high = (row["fact_share"][k] for k in ("ci_low", "mean", "ci_high"))
    assert 0 < low <= mean <= high <= 1
    html = (run / "report.html").read_text()
    assert "Accuracy against test cost, per doctor model" in html
    assert "Information gathering and test cost by doctor" in html


def _compare_measures_finds_the_budget_cut_in_spend(
        two_runs: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    reports = two_runs.path / "reports"
    out_json = two_runs.path / "cmp.json"
    assert main(["compare", str(reports / "free"), str(reports / "capped"), "--measures",
                 "--by", "specialty", "--resamples", "2000", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "beyond accuracy (paired, B - A):" in out
    measures = json.loads(out_json.read_text())["measures"]
    assert {m["group"] for m in measures} == {"Dermatology", "Neurology", "all"}
    neuro = {m["measure"] for m in measures if m["group"] == "Neurology"}
    assert "key_fact_share" not in neuro  # the neurology case marks no key facts
    rows = {m["measure"]: m for m in measures if m["group"] == "all"}
    spend = rows["test_spend_usd"]
    assert spend["pairs"] == 4 and spend["mean_b"] <= 10 < spend["mean_a"]
    assert spend["ci_high"] < 0
    assert rows["questions"]["difference"] == 0 and rows["questions"]["p_bootstrap"] == 1.0


def test_craftmd_measures_come_once_per_conversation(pytester: pytest.Pytester,
                                                     xdist: list[str]) -> None:
    case = make_case(1, vignette="A 40-year-old woman has an itchy rash on her elbows for two "
                                 "weeks. Her mother has psoriasis. On examination, silvery "
                                 "plaques are seen.", question="What is the diagnosis?")
    write_yaml_cases(pytester.path / "c.yaml", [case])
    pytester.runpytest("c.yaml", "--agent-protocol", "craftmd", "--agent-run-name", "cm",
                       "--agent-experiment", "multiturn", "--agent-experiment", "vignette", *xdist)
    run = pytester.path / "reports" / "cm"
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    with_measures = [r for r in records if r["measures"] is not None]
    assert {r["experiment"] for r in with_measures} == {"multiturn"}
    assert len(with_measures) == 2  # mcq and frq share the conversation
    table = next(t for t in json.loads((run / "summary.json").read_text())["tables"]
                 if t["title"] == "information gathering and test cost by doctor")
    assert table["data"][0]["encounters"] == 1


def _section(lines: list[str], title: str) -> list[str]:
    """The lines of the terminal summary's section ``title`` (up to the next one)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("=") and title in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")),
               len(lines))
    return lines[start + 1:end]


def test_terminal_tables_fit_100_columns_and_specialty_by_bias_is_shown(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """Reproduction: the information-gathering tables were ~250 columns wide, and no table
    gave accuracy by specialty x bias."""
    cases = [make_case(i, specialty=s, key_facts=["Scaly plaques"])
             for i, s in enumerate(["Dermatology", "Renal and Genitourinary System"] * 2, 1)]
    write_yaml_cases(pytester.path / "c.yaml", cases)
    result = pytester.runpytest("c.yaml", "--agent-run-name", "sb", "--agent-min-accuracy=0",
                                "--agent-bias=none,doctor:recency,patient:self_diagnosis",
                                *xdist)
    section = _section(result.outlines, "agentclinic summary")
    assert any("information gathering and test cost by doctor and specialty" in line
               for line in section)
    too_long = [line for line in section if len(line) > 100]
    assert too_long == []
    # Every measure is still shown: the wide tables come in parts.
    for label in ("facts", "key facts", "spend $", "turns to dx", "missed"):
        assert any(f"| {label} " in line for line in section), label
    at = section.index("accuracy by specialty and bias:")
    headers = [line for line in section[at:at + 20] if line.startswith("| specialty ")]
    for bias in ("none", "doctor:recency", "patient:self_diagnosis"):
        assert any(f"| {bias} " in line for line in headers), bias
    assert any(line.startswith("| Renal and Genitourinary System") and "n=2" in line
               for line in section[at:at + 8])
    run = pytester.path / "reports" / "sb"
    table = next(t for t in json.loads((run / "summary.json").read_text())["tables"]
                 if t["title"] == "accuracy by specialty and bias")
    cells = {(r["specialty"], r["bias"]) for r in table["data"]}
    assert len(cells) == 6 and all(r["ci_low"] <= r["accuracy"] <= r["ci_high"]
                                   for r in table["data"])
    assert "## accuracy by specialty and bias" in (run / "summary.md").read_text()
    assert "Accuracy by specialty and bias" in (run / "report.html").read_text()
