"""report.html shows every varied condition, usage per role and model, unclipped labels, and
works at 800 px; ``agentclinic compare --html`` writes a comparison page. Checked in Chromium."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_report_html import browser, encounter  # noqa: F401  (browser is a fixture)

from pytest_agentclinic.cli import main
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.transcript import Usage
from pytest_agentclinic.report import charts
from pytest_agentclinic.report.charts import FIT_JS, bar_chart
from pytest_agentclinic.report.rundir import write_transcript

BIASES = ("none", "doctor:recency", "doctor:confirmation")


def cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def make_run(run_dir: Path, doctor: str, wrong: set[str]) -> list[ResultRecord]:
    """3 cases x 3 biases x 2 samples, with usage for the doctor and patient models."""
    run_dir.mkdir(parents=True)
    records = []
    for i in range(1, 4):
        for bias in BIASES:
            for sample in (0, 1):
                name = f"c-{i:02d}[dermatology-{doctor}-{bias.replace(':', '_')}-r{sample}]"
                ok = f"c-{i:02d}" not in wrong
                t = encounter(i, doctor=doctor, given="Psoriasis" if ok else "Eczema",
                              outcome="correct" if ok else "incorrect")
                path = write_transcript(run_dir, "c", name, t)
                record = ResultRecord.from_transcript(
                    t, run=run_dir.name, nodeid=f"c.yaml::{name}", expected="Psoriasis",
                    transcript_path=path, case_file="c.yaml")
                records.append(record.model_copy(update={
                    "bias": bias, "sample": sample, "models": {**t.models, "patient": "pat-m"},
                    "usage": {"doctor": Usage(calls=3, prompt_tokens=900, completion_tokens=60,
                                              cost_usd=0.0021, latency_s=1.5),
                              "patient": Usage(calls=2, cache_hits=1, prompt_tokens=400,
                                               completion_tokens=40, latency_s=0.4)}}))
    (run_dir / "results.jsonl").write_text("".join(r.model_dump_json() + "\n"
                                                   for r in records))
    return records


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conditions")
    make_run(root / "reports" / "a", "doc-a", wrong={"c-03"})
    make_run(root / "reports" / "b", "doc-b", wrong={"c-01"})
    cli("report", str(root / "reports" / "a"))
    return root


@pytest.fixture(params=[1400, 800])
def page(request: pytest.FixtureRequest, browser: Any, runs: Path) -> Iterator[Any]:  # noqa: F811
    tab = browser.new_page(viewport={"width": request.param, "height": 1000})
    problems: list[str] = []
    tab.on("pageerror", lambda exc: problems.append(str(exc)))
    tab.goto((runs / "reports" / "a" / "report.html").as_uri())
    yield tab
    tab.screenshot(path=f"/tmp/report-conditions-{request.param}.png", full_page=True)
    tab.close()
    assert problems == []


def test_every_varied_condition_is_a_column_and_a_filter(page: Any) -> None:
    headers = page.locator("#head th").all_text_contents()
    assert [h for h in headers if h in ("Bias", "Sample")] == ["Bias", "Sample"]
    assert page.locator("#f-bias option").count() == 4 and page.locator("#f-sample").count()
    page.locator("#f-bias").select_option("doctor:recency")
    page.locator("#f-sample").select_option("1")
    assert page.locator("#count").inner_text() == "3 of 18 encounters"
    row = page.locator("#rows tr").first
    # One numbering of samples: the list says r1 where the item id says -r1.
    assert "r1" in row.inner_text() and "doctor:recency" in row.inner_text()
    row.click()
    assert page.locator("#d-body").inner_text().count("-r1]") == 1
    sample = page.locator(".facts div", has=page.locator("dt:text-is('sample')"))
    assert sample.locator("dd").inner_text() == "r1"


def test_the_page_fits_the_viewport_and_says_what_it_pools(page: Any) -> None:
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    kpi = page.locator(".kpi.accent .kl").inner_text().lower()
    assert kpi == "accuracy, pooled over 3 bias values"
    assert "pooled over 3 bias values" in page.locator("section.chart h2").first.inner_text()


def test_usage_per_role_and_model_in_cards_and_a_table(page: Any) -> None:
    cards = page.locator(".usage-cards .kpi")
    assert cards.count() == 2
    doctor = cards.nth(0).inner_text()
    # 18 encounters x 3 calls x 960 tokens; 1.5 s per call
    assert "doc-a" in doctor and "17,280 tokens" in doctor and "0.50 s/call" in doctor
    table = page.locator("section.chart", has=page.locator("h2:text-is('Usage by role and "
                                                             "model')"))
    assert table.locator("tbody tr").count() == 2


def test_value_labels_are_never_clipped(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    # Reproduction: at 80k items the label was cut to "36.3% · 29076/".
    rows = [{"group": "all", "n": 80_000, "correct": 29_076, "accuracy": 0.36345,
             "ci_low": 0.36, "ci_high": 0.367}]
    (tmp_path / "chart.html").write_text(f"<html><body style='width:520px'>"
                                         f"{bar_chart('big', rows)}</body></html>")
    tab = browser.new_page(viewport={"width": 800, "height": 600})
    try:
        tab.goto((tmp_path / "chart.html").as_uri())
        svg = tab.locator("svg").bounding_box()
        value = tab.locator("text.value").bounding_box()
        assert tab.locator("text.value").inner_html() == "36.3% · 29076/80000"
        assert value["x"] + value["width"] <= svg["x"] + svg["width"] + 0.5
    finally:
        tab.close()


@pytest.mark.parametrize("font", ["DejaVu Sans", "Liberation Sans", "DejaVu Sans Mono",
                                  "DejaVu Sans; font-size: 15px"])
def test_labels_stay_inside_the_chart_in_any_font(browser: Any, tmp_path: Path,  # noqa: F811
                                                  font: str) -> None:
    """The chart assumed 7.6 px a character: DejaVu Sans (7.9) ran the value label to 548.0
    against the chart's 528.4 (a CI machine whose only font is DejaVu failed)."""
    rows = [{"group": "dermatology and venereology, all", "n": 80_000, "correct": 29_076,
             "accuracy": 0.99, "ci_low": 0.98, "ci_high": 0.995},
            {"group": "x", "n": 123_456, "correct": 123_455, "accuracy": 0.999992,
             "ci_low": 0.99, "ci_high": 1.0}]
    (tmp_path / "chart.html").write_text(
        f"<html><head><style>svg text {{ font-family: {font}; }}</style></head>"
        f"<body style='width:520px'>{bar_chart('big', rows)}<script>{FIT_JS}</script>"
        f"</body></html>")
    template = (Path(charts.__file__).parent / "html_template.html").read_text()
    assert FIT_JS.replace(" ", "") in template.replace(" ", "")  # the report runs it too
    tab = browser.new_page(viewport={"width": 800, "height": 600})
    try:
        tab.goto((tmp_path / "chart.html").as_uri())
        svg = tab.locator("svg").bounding_box()
        for text in tab.locator("svg text").all():
            box = text.bounding_box()
            assert box["x"] >= svg["x"] - 0.5, text.inner_html()
            assert box["x"] + box["width"] <= svg["x"] + svg["width"] + 0.5, text.inner_html()
    finally:
        tab.close()


def test_compare_html_links_both_transcripts(browser: Any, runs: Path) -> None:  # noqa: F811
    out = runs / "compare" / "a-vs-b.html"
    text = cli("compare", str(runs / "reports" / "a"), str(runs / "reports" / "b"),
               "--by", "bias", "--html", str(out))
    assert f"HTML: {out}" in text
    tab = browser.new_page(viewport={"width": 800, "height": 1000})
    try:
        tab.goto(out.as_uri())
        values = [t for t in tab.locator("svg text").all_text_contents() if "[" in t]
        assert len(values) == 4 and all(v.startswith("+0.0% [") for v in values)  # per bias
        rows = tab.locator("table.data tbody tr").all_inner_texts()
        assert [r.split("\t")[0] for r in rows] == [*sorted(BIASES), "all (pooled)"]
        flips = tab.locator("ul.flips li")
        assert flips.count() == 12  # c-01 went wrong, c-03 right: 2 x 3 biases x 2 samples
        for link in flips.first.locator("a").all():
            href = link.get_attribute("href")
            target = (out.parent / href).resolve()
            assert target.is_file() and json.loads(target.read_text())["case_id"]
        assert tab.evaluate("document.documentElement.scrollWidth") <= 800
        tab.screenshot(path="/tmp/compare-800.png", full_page=True)
    finally:
        tab.close()


def test_the_page_shows_the_gate_and_the_command_line(runs: Path) -> None:
    from pytest_agentclinic.report.rundir import render_html

    summary = {"command": "pytest cases --agent-min-accuracy=0.9 --agent-bias=none",
               "gate": {"verdict": "FAILED", "checks": [
                   {"passed": False, "lines": ["doc-a [bias=none]: accuracy 0.667 < 0.9: FAIL"]}]}}
    page = render_html(runs / "reports" / "a", {}, summary)
    assert '<section class="card gate failed"><h2>Gate FAILED</h2>' in page
    assert '<li class="bad">doc-a [bias=none]: accuracy 0.667 &lt; 0.9: FAIL</li>' in page
    assert "command line: <code>pytest cases --agent-min-accuracy=0.9 --agent-bias=none" in page
