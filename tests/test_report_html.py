"""The HTML report: unit tests of the page's text, then a real headless Chromium run of it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.redact import redact
from pytest_agentclinic.core.transcript import Perception, Transcript, Utterance, Verdict
from pytest_agentclinic.report.charts import bar_chart, budget_chart
from pytest_agentclinic.report.rundir import render_html, write_html, write_transcript

NASTY = "IgA <nephropathy> & </script><script>window.pwned=1</script>"
IMAGE = "https://example.invalid/biopsy.png"
MODELS = {"doctor": "doc-a", "patient": "offline", "measurement": "offline",
          "moderator": "offline"}


# -- building run directories -------------------------------------------------------------

def encounter(i: int, *, doctor: str = "doc-a", specialty: str = "Dermatology",
              expected: str = "Psoriasis", given: str | None = "Psoriasis",
              outcome: str = "correct", budget: int = 20) -> Transcript:
    """A short, complete encounter: a question, a test with its result, a verdict."""
    correct = outcome == "correct"
    utterances = [
        Utterance(turn=1, role="doctor", kind="question", model=doctor,
                  text=f"Where is the rash of case {i}?"),
        Utterance(turn=1, role="patient", kind="answer", model="offline",
                  text="On my elbows & knees, < 2 weeks."),
        Utterance(turn=2, role="doctor", kind="test_request", model=doctor,
                  text="REQUEST TEST: Skin biopsy", detail="Skin biopsy"),
        Utterance(turn=2, role="measurement", kind="test_result", model="offline",
                  text="RESULTS: Skin Biopsy:\n  Parakeratosis, Munro microabscesses",
                  images=[IMAGE]),
    ]
    verdict = None
    if given is not None:
        utterances.append(Utterance(turn=3, role="doctor", kind="diagnosis", model=doctor,
                                    text=f"DIAGNOSIS READY: {given}", detail=given))
        verdict = Verdict(correct=correct, decided_by="offline-matcher",
                          reason="exact match" if correct else "different disease")
        utterances.append(Utterance(turn=3, role="moderator", kind="judgement",
                                    model="offline", text=verdict.reason,
                                    detail=outcome))
    return Transcript(protocol="agentclinic", case_id=f"c-{i:02d}", dataset="t",
                      specialty=specialty,
                      models={**MODELS, "doctor": doctor}, sample=0, turn_budget=budget,
                      utterances=utterances, diagnosis=given, verdict=verdict,
                      outcome=outcome,  # type: ignore[arg-type]
                      duration_s=0.5)


def save(run_dir: Path, transcripts: Sequence[tuple[Transcript, str]],
         extra: Sequence[ResultRecord] = ()) -> list[ResultRecord]:
    """Write each transcript and its record, plus records that have no transcript."""
    records = []
    for t, expected in transcripts:
        item = f"{t.case_id}[{t.models['doctor']}-t{t.turn_budget}]"
        path = write_transcript(run_dir, "t", item, t)
        records.append(ResultRecord.from_transcript(
            t, run="r", nodeid=f"t.yaml::{item}", expected=expected,
            transcript_path=path, case_file="t.yaml"))
    records += extra
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(r.model_dump_json() + "\n" for r in records)
    return records


def imported(i: int, outcome: str = "incorrect", specialty: str = "Cardiology") -> ResultRecord:
    """A CRAFT-MD-style record: no transcript file."""
    return ResultRecord(run="r", nodeid=f"craftmd::imp-{i:03d}", protocol="craftmd",
                        case_id=f"imp-{i:03d}", dataset="craftmd", specialty=specialty,
                        models={"doctor": "gpt-x"}, sample=0, turn_budget=20,
                        outcome=outcome,  # type: ignore[arg-type]
                        expected="Aortic stenosis",
                        given="Mitral regurgitation" if outcome != "error" else None,
                        turns_used=0, duration_s=0.0, experiment="multiturn",
                        error="HTTP 503 after 3 retries" if outcome == "error" else None)


def table(records: Sequence[ResultRecord], key: str) -> list[dict[str, Any]]:
    """Rows as the stats engineer's tables give them; the CI here is a fixed +-0.1."""
    groups: dict[str, list[ResultRecord]] = {}
    for r in records:
        groups.setdefault(str(r.doctor if key == "doctor" else getattr(r, key)), []).append(r)
    rows = []
    for group, rs in sorted(groups.items()):
        judged = [r for r in rs if r.outcome != "error"]
        correct = sum(r.outcome == "correct" for r in judged)
        acc = correct / len(judged) if judged else None
        rows.append({"group": group, "n": len(judged), "correct": correct, "accuracy": acc,
                     "ci_low": None if acc is None else max(0.0, acc - 0.1),
                     "ci_high": None if acc is None else min(1.0, acc + 0.1),
                     "errors": len(rs) - len(judged)})
    return rows


def tables_for(records: Sequence[ResultRecord]) -> dict[str, list[dict[str, Any]]]:
    return {"by doctor": table(records, "doctor"), "by specialty": table(records, "specialty")}


SUMMARY = {"version": 1, "plugin_version": "0.1.0", "run": "r", "roles": MODELS,
           "turn_budgets": [10, 20], "repeat": 1, "cache_mode": "replay", "temperature": 0.7,
           "items": 3}


@pytest.fixture
def small_run(tmp_path: Path) -> tuple[Path, list[ResultRecord]]:
    run_dir = tmp_path / "reports" / "r"
    records = save(run_dir, [
        (encounter(1), "Psoriasis"),
        (encounter(2, doctor="doc-b", given=NASTY, outcome="incorrect", budget=10), NASTY),
    ], [imported(1)])
    return run_dir, records


# -- the page's text ----------------------------------------------------------------------

class _Page(HTMLParser):
    """Collects every tag's attributes and the text of each JSON script block."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: list[tuple[str, str, str | None]] = []
        self.json_blocks: dict[str, str] = {}
        self._json_id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attrs += [(tag, k, v) for k, v in attrs]
        found = dict(attrs)
        if tag == "script" and found.get("type") == "application/json":
            self._json_id = found.get("id") or "?"

    def handle_data(self, data: str) -> None:
        if self._json_id:
            self.json_blocks[self._json_id] = self.json_blocks.get(self._json_id, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._json_id = None


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def test_json_blocks_parse_and_carry_records_and_transcripts(
        small_run: tuple[Path, list[ResultRecord]]) -> None:
    run_dir, records = small_run
    page = parse(render_html(run_dir, tables_for(records), SUMMARY))
    data = json.loads(page.json_blocks["ac-records"])
    rows = [dict(zip(data["fields"], row, strict=True)) for row in data["rows"]]
    assert [r["case_id"] for r in rows] == ["c-01", "c-02", "imp-001"]
    assert rows[1]["given"] == NASTY  # the raw text survives the escaping for the JS
    transcripts = json.loads(page.json_blocks["ac-transcripts"])
    assert len(transcripts) == 3 and transcripts[2] is None
    assert transcripts[0]["u"][0][1:4] == ["doctor", "question", "Where is the rash of case 1?"]
    assert transcripts[1]["verdict"]["decided_by"] == "offline-matcher"
    assert transcripts[0]["u"][3][6] == [IMAGE]
    assert "No transcript was saved" in rows[2]["note"]


def test_case_text_is_escaped_everywhere(small_run: tuple[Path, list[ResultRecord]]) -> None:
    run_dir, _ = small_run
    tables = {"by <diagnosis>": [{"group": "<b>A & B</b>", "n": 1, "correct": 1,
                                  "accuracy": 1.0, "ci_low": 0.2, "ci_high": 1.0,
                                  "errors": 0}]}
    html = render_html(run_dir, tables, {**SUMMARY, "run": "<i>run</i>"})
    assert "</script><script>window.pwned" not in html
    assert "<b>A & B</b>" not in html and "&lt;b&gt;A &amp; B&lt;/b&gt;" in html
    assert "<i>run</i>" not in html and "&lt;i&gt;run&lt;/i&gt;" in html
    assert "Accuracy by &lt;diagnosis&gt;" in html
    # No tag of the case text became markup: the page's three scripts and nothing else.
    page = parse(html)
    assert not {"b", "i", "img"} & {tag for tag, _, _ in page.attrs}
    assert html.count("<script") == 3 and html.count("</script>") == 3


def test_no_external_resources(small_run: tuple[Path, list[ResultRecord]]) -> None:
    run_dir, records = small_run
    more = imported(2)
    more.expected = '<img src="http://example.invalid/x.png"> see https://example.invalid'
    with (run_dir / "results.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(more.model_dump_json() + "\n")
    html = render_html(run_dir, tables_for(records), SUMMARY)
    links = [(tag, key, value) for tag, key, value in parse(html).attrs
             if key in {"src", "href", "xlink:href", "action", "data"}]
    assert links == []
    for forbidden in ("@import", "url(", "<link", "<iframe", 'src="http', "src='http",
                      'href="http', "href='http"):
        assert forbidden not in html


def test_placeholder_text_in_the_data_is_left_alone(tmp_path: Path) -> None:
    record = imported(1)
    record.expected = "{{CHARTS}} {{HEADER}}"
    save(tmp_path, [], [record])
    html = render_html(tmp_path, {}, {})
    data = json.loads(parse(html).json_blocks["ac-records"])
    assert data["rows"][0][data["fields"].index("expected")] == "{{CHARTS}} {{HEADER}}"
    assert "{{" not in html.replace("{{CHARTS}} {{HEADER}}", "")


def test_bar_chart_has_one_bar_per_judged_group_and_ci_whiskers() -> None:
    rows = [{"group": "doc-a", "n": 10, "correct": 7, "accuracy": 0.7, "ci_low": 0.4,
             "ci_high": 0.9, "errors": 0},
            {"group": "doc-b", "n": 10, "correct": 0, "accuracy": 0.0, "ci_low": 0.0,
             "ci_high": 0.3, "errors": 2},
            {"group": "doc-c", "n": 0, "correct": 0, "accuracy": None, "ci_low": None,
             "ci_high": None, "errors": 5}]
    svg = bar_chart("by doctor", rows)
    assert svg.count('class="row"') == 3
    assert svg.count('class="bar"') == 2
    assert svg.count('class="ci"') == 2
    assert "no judged encounters" in svg
    assert "70.0% · 7/10" in svg and "95% CI 40.0%\u201390.0%" in svg


def test_rows_of_several_doctors_are_clustered_coloured_and_labelled_once() -> None:
    def row(group: str, doctor: str, acc: float) -> dict[str, Any]:
        return {"group": f"{group} | {doctor}", "n": 10, "correct": int(acc * 10),
                "accuracy": acc, "ci_low": acc / 2, "ci_high": acc, "errors": 0}

    colours = {"doc-a": "#111111", "doc-b": "#222222"}
    rows = [row("Dermatology", "doc-a", 0.5), row("Neurology", "doc-a", 0.2),
            row("Dermatology", "doc-b", 0.8)]
    svg = bar_chart("accuracy by specialty", rows, colours)
    assert "<h2>Accuracy by specialty</h2>" in svg
    assert re.findall(r'class="label"[^>]*>([^<]*)<', svg) == ["Dermatology", "Neurology"]
    # Dermatology's two bars come first, doc-a before doc-b, each in its model's colour.
    assert re.findall(r'class="bar"[^>]*style="fill:(#\d+)"', svg) == [
        "#111111", "#222222", "#111111"]
    assert svg.count('class="legend-item"') == 2
    # One model only: no legend, no colours, the model's name dropped from the labels.
    single = bar_chart("by bias", [row("none", "doc-a", 0.5), row("recency", "doc-a", 0.4)],
                       colours)
    assert re.findall(r'class="label"[^>]*>([^<]*)<', single) == ["none", "recency"]
    assert "legend-item" not in single and "fill:" not in single


def test_a_table_without_accuracies_is_shown_as_a_table(tmp_path: Path) -> None:
    save(tmp_path, [(encounter(1), "Psoriasis")])
    tables = {"patient perception (1-10)": [
        {"doctor": "doc-a", "bias": "none", "confidence": 7.25, "compliance": None}]}
    html = render_html(tmp_path, tables, {})
    assert "<h2>Patient perception (1-10)</h2>" in html
    assert "<td>7.25</td>" in html and 'class="bar"' not in html


def test_measure_cells_read_as_mean_and_interval_not_as_dicts(tmp_path: Path) -> None:
    """Reproduction: the information-gathering cells showed {'mean': 0.75..., 'ci_low': ...}."""
    save(tmp_path, [(encounter(1), "Psoriasis")])
    rows = [{"group": "doc-a / Neurology", "doctor": "doc-a", "specialty": "Neurology",
             "encounters": 4,
             "fact_share": {"mean": 0.7546, "ci_low": 0.736, "ci_high": 0.772, "n": 4},
             "questions": {"mean": 7.0, "ci_low": 6.5, "ci_high": 7.5, "n": 4},
             "other": {"mean": 0.42, "ci_low": 0.31, "ci_high": 0.55}}]
    html = render_html(tmp_path, {"information gathering and test cost by doctor": rows}, {})
    cells = re.findall(r"<td>([^<]*)</td>", html)
    assert cells == ["doc-a", "Neurology", "4", "75% [74-77]", "7.0 [6.5-7.5]",
                     "0.42 [0.31, 0.55]"]
    assert "<th>facts</th>" in html and "<th>n</th>" in html and "{&#x27;" not in html


@pytest.mark.parametrize("highest", [0.004, 0.3, 1.1, 3.0, 236.0, 1234.5])
def test_spend_ticks_are_round_distinct_and_cover_the_data(highest: float) -> None:
    """Reproduction: a spend axis up to $1.10 was labelled "$0 $0 $0 $1 $1"."""
    from pytest_agentclinic.report.beyond import spend_ticks

    ticks, decimals = spend_ticks(highest)
    labels = [f"${t:,.{decimals}f}" for t in ticks]
    assert len(set(labels)) == len(labels) >= 3 and ticks[0] == 0 and ticks[-1] >= highest
    assert ticks[-2] < highest  # no empty step past the data


def test_budget_line_chart_only_with_several_budgets(
        small_run: tuple[Path, list[ResultRecord]], tmp_path: Path) -> None:
    run_dir, records = small_run
    assert "Accuracy by turn budget, per doctor" in render_html(run_dir, {}, SUMMARY)
    single = tmp_path / "single"
    save(single, [(encounter(1), "Psoriasis"), (encounter(2), "Psoriasis")])
    assert "per doctor" not in render_html(single, {}, SUMMARY)
    svg = budget_chart(records)
    assert svg.count('class="series"') == 3  # doc-a, doc-b and the imported gpt-x
    assert svg.count('class="point"') == 3


def test_moved_run_finds_transcripts_and_bad_lines_are_counted(
        small_run: tuple[Path, list[ResultRecord]], tmp_path: Path) -> None:
    run_dir, _ = small_run
    moved = tmp_path / "elsewhere"
    shutil.move(str(run_dir), moved)
    with (moved / "results.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"truncated": \n')
    html = render_html(moved, {}, SUMMARY)
    transcripts = json.loads(parse(html).json_blocks["ac-transcripts"])
    assert transcripts[0] is not None and transcripts[1] is not None
    assert "1 unreadable line(s) of results.jsonl were skipped" in html


def test_write_html_writes_report_html(small_run: tuple[Path, list[ResultRecord]],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir, records = small_run
    monkeypatch.setenv("PAGE_API_KEY", "tok-12345678")
    summary = {**SUMMARY, "command": "pytest --agent-key tok-12345678"}
    path = write_html(run_dir, tables_for(records), summary)
    assert path == run_dir / "report.html"
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # Written a transcript at a time, it is the page made as one string, redacted.
    assert page == redact(render_html(run_dir, tables_for(records), summary))
    assert "tok-12345678" not in page and "--agent-key ***" in page
    assert [p.name for p in run_dir.glob(".*")] == []  # no temporary file left


def test_empty_run_directory_still_renders(tmp_path: Path) -> None:
    html = render_html(tmp_path, {}, {})
    data = json.loads(parse(html).json_blocks["ac-records"])
    assert data["rows"] == [] and "No accuracy tables were given." in html
    assert "Run settings" not in html  # no summary: no empty settings card


# -- a real browser -------------------------------------------------------------------------

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def no_browser(reason: str) -> None:
    """Skip, or fail where CI promised a browser (AGENTCLINIC_REQUIRE_BROWSER=1)."""
    if os.environ.get("AGENTCLINIC_REQUIRE_BROWSER") == "1":
        pytest.fail(f"AGENTCLINIC_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by playwright; a skip with the reason when either is absent."""
    try:
        from playwright import sync_api
    except ImportError as exc:  # absent, or installed without its driver
        no_browser(f"playwright cannot be imported ({exc}); pip install playwright")
    exe = (os.environ.get("AGENTCLINIC_CHROMIUM") or shutil.which("chromium")
           or shutil.which("chromium-browser"))
    if not exe:
        no_browser("no Chromium executable on PATH (apt-get install chromium), "
                   "nor in AGENTCLINIC_CHROMIUM")
    with sync_api.sync_playwright() as p:
        try:
            # playwright gives the browser a fresh temporary profile (--user-data-dir), and
            # with executable_path it never downloads a browser of its own.
            chromium = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, timeout=30000)
        except sync_api.Error as exc:
            no_browser(f"Chromium at {exe} could not be started: {exc}")
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real offline run of the plugin at two budgets, plus imported and error records."""
    root = tmp_path_factory.mktemp("plugin_run")
    wrong = make_case(3, specialty="Neurology", diagnosis=NASTY,
                      choices=[NASTY, "Other thing", "Third option", "Fourth one"],
                      tests={"Skin Biopsy": "Findings typical of Other thing."})
    write_yaml_cases(root / "c.yaml", [make_case(1), make_case(2, specialty="Neurology"), wrong])
    proc = subprocess.run([sys.executable, "-m", "pytest", "c.yaml", "-q", "-p",
                           "no:cacheprovider", "--agent-run-name=r", "--agent-turns=10,20"],
                          cwd=root, capture_output=True, text=True, timeout=120, check=False)
    run_dir = root / "reports" / "r"
    results_file = run_dir / "results.jsonl"
    lines = results_file.read_text().splitlines() if results_file.is_file() else []
    assert len(lines) == 6, f"the plugin wrote {len(lines)} records:\n{proc.stdout}{proc.stderr}"
    # 240 imported records: more than two pages of the list.
    extra = [imported(i, "correct" if i % 3 == 0 else "incorrect") for i in range(239)]
    extra.append(imported(239, "error"))
    # A handmade encounter with an image reference and the patient's perception ratings.
    handmade = encounter(9, doctor="offline", specialty="Dermatology").model_copy(
        update={"perception": Perception(confidence=7, compliance=9)})
    path = write_transcript(run_dir, "t", "c-09", handmade)
    extra.insert(0, ResultRecord.from_transcript(
        handmade, run="r", nodeid="t.yaml::c-09", expected="Psoriasis", transcript_path=path,
        case_file=None))
    with (run_dir / "results.jsonl").open("a", encoding="utf-8") as fh:
        fh.writelines(r.model_dump_json() + "\n" for r in extra)
    records = [ResultRecord.model_validate_json(line)
               for line in (run_dir / "results.jsonl").read_text().splitlines()]
    # As the stats tables give it: one row per (budget, doctor), the model in the label.
    budget_rows = [{**row, "group": f"{row['group']} | {doctor}", "doctor": doctor}
                   for doctor in ("gpt-x", "offline")
                   for row in table([r for r in records if r.doctor == doctor], "turn_budget")]
    tables = {**tables_for(records), "accuracy by turn budget": budget_rows}
    write_html(run_dir, tables, {**SUMMARY, "items": len(records)})
    return run_dir


@pytest.fixture
def page(browser: Any, plugin_run: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    tab.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    tab.on("request", lambda req: None if req.url.startswith(("file:", "data:", "about:"))
           else problems.append(f"network request: {req.url}"))
    tab.goto((plugin_run / "report.html").as_uri())
    yield tab
    context.close()
    assert problems == [], "the page reported errors or used the network"


def _card(tab: Any, title: str) -> Any:
    return tab.locator("section.chart", has=tab.locator(f"h2:text-is('{title}')"))


def expect_rows(tab: Any, case_ids: list[str]) -> None:
    """The list shows exactly these cases, in order (waiting for the page to catch up)."""
    from playwright.sync_api import expect

    expect(tab.locator("#rows tr td.case")).to_have_text(case_ids, timeout=5000)


def test_browser_draws_a_bar_per_group_and_the_budget_lines(page: Any) -> None:
    doctors = _card(page, "Accuracy by doctor")
    assert doctors.locator("text.label").all_text_contents() == ["gpt-x", "offline"]
    assert doctors.locator("rect.bar").count() == 2
    specialties = _card(page, "Accuracy by specialty")
    labels = specialties.locator("text.label").all_text_contents()
    assert labels == ["Cardiology", "Dermatology", "Neurology"]
    assert specialties.locator("rect.bar").count() == 3
    box = specialties.locator("rect.bar").first.bounding_box()
    assert box is not None and box["width"] > 5 and box["height"] > 5
    budgets = _card(page, "Accuracy by turn budget")
    assert budgets.locator("rect.bar").count() == 3  # offline at 10 and 20, gpt-x at 20
    assert budgets.locator("text.label").all_text_contents() == ["10", "20"]
    assert budgets.locator(".legend-item").all_text_contents() == ["gpt-x", "offline"]
    lines = _card(page, "Accuracy by turn budget, per doctor")
    assert lines.locator("g.series").count() == 2
    assert lines.locator("circle.point").count() == 3  # offline at 10 and 20, gpt-x at 20
    page.screenshot(path="/tmp/report.png", full_page=False)


def test_browser_filters_and_pages(page: Any) -> None:
    assert page.locator("#count").inner_text() == "247 encounters"
    assert page.locator("#rows tr").count() == 100
    page.locator("#next").click()
    page.locator("#next").click()
    assert page.locator("#rows tr").count() == 47 and page.locator("#next").is_disabled()
    page.locator("#q").fill("t-02")
    expect_rows(page, ["t-02", "t-02"])
    page.locator("#q").fill("")
    page.locator("#f-specialty").select_option("Neurology")
    expect_rows(page, ["t-02", "t-02", "t-03", "t-03"])
    page.locator("#f-outcome").select_option("incorrect")
    expect_rows(page, ["t-03", "t-03"])
    page.locator("#f-turn_budget").select_option("10")
    expect_rows(page, ["t-03"])
    page.locator("#q").fill("no such words")
    assert page.locator("#rows td.empty").inner_text() == "No encounters match these filters."
    page.locator("#f-specialty").select_option("")
    page.locator("#f-outcome").select_option("error")
    page.locator("#f-turn_budget").select_option("")
    page.locator("#q").fill("")
    expect_rows(page, ["imp-239"])


def test_browser_click_opens_the_whole_dialogue(page: Any, plugin_run: Path) -> None:
    page.locator("#q").fill("t-03")
    page.locator("#f-turn_budget").select_option("20")
    page.locator("#rows tr").first.click()
    panel = page.locator("#drawer .panel")
    panel.wait_for(state="visible")
    assert page.locator("#d-title").inner_text().startswith("t-03")
    doctor = panel.locator(".msg.role-doctor.kind-question")
    assert doctor.count() >= 3
    assert "What brings you in today" in doctor.first.inner_text()
    assert panel.locator(".msg.role-patient").count() >= 3
    request = panel.locator(".msg.kind-test_request").first
    assert "REQUEST TEST:" in request.inner_text()
    assert panel.locator(".msg.role-measurement.kind-test_result").count() >= 1
    diagnosis = panel.locator(".msg.kind-diagnosis").inner_text()
    assert "DIAGNOSIS READY: Other thing" in diagnosis
    verdict = panel.locator(".msg.kind-judgement")
    assert "decided by offline" in verdict.inner_text()
    assert verdict.locator(".badge.incorrect").count() == 1
    # The expected diagnosis is shown as text, markup and all, and never ran.
    assert NASTY in panel.locator(".dx.expected").inner_text()
    assert page.evaluate("window.pwned") is None
    page.screenshot(path="/tmp/report-transcript.png")
    page.keyboard.press("Escape")
    panel.wait_for(state="hidden")


def test_browser_record_without_transcript_shows_its_outcome(page: Any) -> None:
    page.locator("#q").fill("imp-239")
    page.locator("#rows tr").first.click()
    panel = page.locator("#drawer .panel")
    panel.wait_for(state="visible")
    assert panel.locator(".badge.error").count() == 1
    assert "HTTP 503 after 3 retries" in panel.locator(".errbox").inner_text()
    assert "Aortic stenosis" in panel.locator(".dx.expected").inner_text()
    assert "No transcript was saved" in panel.locator(".note").inner_text()


def test_browser_stays_responsive_with_40000_records(browser: Any, tmp_path: Path) -> None:
    records = [imported(i % 1000, "correct" if i % 4 else "incorrect",
                        specialty=f"Specialty {i % 12}") for i in range(40_000)]
    save(tmp_path, [], records)
    path = write_html(tmp_path, {"by specialty": table(records, "specialty")}, {})
    tab = browser.new_page()
    try:
        tab.goto(path.as_uri(), timeout=30000)
        assert tab.locator("#count").inner_text() == "40000 encounters"
        assert tab.locator("#rows tr").count() == 100
        tab.locator("#q").fill("imp-007")
        tab.wait_for_function("document.querySelector('#count').textContent.startsWith('40 of')")
    finally:
        tab.close()



def test_browser_shows_images_as_references_and_the_perception(page: Any) -> None:
    page.locator("#q").fill("c-09")
    page.locator("#rows tr").first.click()
    panel = page.locator("#drawer .panel")
    panel.wait_for(state="visible")
    assert panel.locator(".image-ref").inner_text() == f"image: {IMAGE}"
    assert page.locator("img").count() == 0
    assert "confidence 7/10, compliance 9/10" in panel.locator(".facts").inner_text()



# -- what a new user saw: real runs of both protocols, at 800 and 1,400 px ------------------

SPECIALTIES = ("Dermatology", "Renal and Genitourinary System", "Obstetrics and Gynecology")
VIGNETTE = ("A 40-year-old woman has an itchy rash on her elbows for two weeks. Her mother has "
            "psoriasis. On examination, silvery plaques are seen.")


@pytest.fixture(scope="module")
def protocol_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An AgentClinic run (two bias variants, three specialties) and a CRAFT-MD run (every
    experiment x answer mode), each with the information-gathering measures."""
    root = tmp_path_factory.mktemp("protocol_runs")
    cases = [make_case(i, specialty=SPECIALTIES[i % 3], key_facts=["Scaly plaques"],
                       vignette=VIGNETTE, question="What is the diagnosis?")
             for i in range(1, 7)]
    write_yaml_cases(root / "c.yaml", cases)
    runs = {"agentclinic": ["--agent-bias=none,doctor:recency"],
            "craftmd": ["--agent-protocol=craftmd"]}
    for name, args in runs.items():
        proc = subprocess.run([sys.executable, "-m", "pytest", "c.yaml", "-q", "-p",
                               "no:cacheprovider", f"--agent-run-name={name}", *args],
                              cwd=root, capture_output=True, text=True, timeout=300,
                              check=False)
        assert (root / "reports" / name / "report.html").is_file(), proc.stdout + proc.stderr
    return {name: root / "reports" / name / "report.html" for name in runs}


#: Every SVG text drawn past its SVG's viewBox (cut off on screen), as "text: x0-x1 of w".
CLIPPED_SVG_TEXT = """() => Array.from(document.querySelectorAll('svg.plot text')).flatMap(t => {
  const box = t.getBBox(), view = t.ownerSVGElement.viewBox.baseVal;
  return box.x < -0.5 || box.x + box.width > view.width + 0.5 || box.y < -0.5
    || box.y + box.height > view.height + 0.5
    ? [`${t.textContent}: ${Math.round(box.x)}-${Math.round(box.x + box.width)} of ${view.width}`]
    : [];
})"""
#: Each chart's tick labels along one axis (same x or same y), e.g. "$0 $0 $1 $1".
AXIS_TICKS = """() => Array.from(document.querySelectorAll('svg.plot')).flatMap(svg => {
  const axes = {};
  svg.querySelectorAll('text.tick').forEach(t => {
    for (const k of ['x', 'y']) (axes[k + t.getAttribute(k)] ||= []).push(t.textContent);
  });
  return Object.values(axes).filter(a => a.length > 1);
})"""
#: Text boxes whose words do not fit them (headings, labels, cells of the number tables).
CUT_TEXT = """() => Array.from(document.querySelectorAll(
    '.wrap h1, .wrap h2, .settings dt, .settings dd, .kpi .kl, .kpi .kv, table.data td, ' +
    'table.data th')).filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => e.tagName + ': ' + e.textContent.slice(0, 60))"""


@pytest.mark.parametrize("protocol", ["agentclinic", "craftmd"])
@pytest.mark.parametrize("width", [800, 1400])
def test_browser_page_fits_the_window_and_shows_no_raw_data(
        browser: Any, protocol_runs: dict[str, Path], protocol: str, width: int) -> None:
    """Reproduction: 2,170 px wide in a 1,400 px window, 1,482 px in 800 px; dict reprs in the
    information-gathering cells; CRAFT-MD condition labels cut off at the SVG's left edge; a
    CRAFT-MD cost chart (no test is ever paid for) with ticks "$0 $0 $0 $1 $1"."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    tab = context.new_page()
    try:
        tab.goto(protocol_runs[protocol].as_uri())
        titles = tab.locator("section.chart h2").all_text_contents()
        assert any(t.startswith("Information gathering and test cost by doctor") for t in titles)
        scroll = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll[0] <= scroll[1], f"the page is {scroll[0]} px wide in {scroll[1]} px"
        cells = tab.locator("td, th, dd").all_text_contents()
        assert cells and not [c for c in cells if "{'" in c or "{\"" in c]
        assert tab.evaluate(CLIPPED_SVG_TEXT) == []
        for ticks in tab.evaluate(AXIS_TICKS):
            assert len(set(ticks)) == len(ticks), f"repeated tick labels: {ticks}"
        assert tab.evaluate(CUT_TEXT) == []
        if protocol == "craftmd":
            assert "Accuracy against test cost, per doctor model" not in titles
            labels = _card(tab, "Accuracy by condition").locator("text.label")
            assert labels.count() == 8  # every experiment x answer mode, each labelled
            assert all("experiment=" in t for t in labels.all_text_contents())
        else:
            cost = _card(tab, "Accuracy against test cost, per doctor model")
            assert cost.locator("text.tick").count() > 5
            grid = _card(tab, "Accuracy by specialty and bias")
            assert grid.locator("rect.bar").count() == 6  # 3 specialties x 2 bias variants
        tab.screenshot(path=f"/tmp/report-{protocol}-{width}.png", full_page=True)
    finally:
        context.close()


# -- a large run's page links its transcripts (issue: pages at 10,000 encounters) --------------

def _long(t: Transcript, turns: int) -> Transcript:
    """``t`` with ``turns`` more question-and-answer pairs: a longer dialogue."""
    more = [Utterance(turn=4 + k // 2, role="doctor" if k % 2 == 0 else "patient",
                      kind="question" if k % 2 == 0 else "answer", model="doc-a",
                      text=f"Turn {k}: " + "words of the dialogue " * 12) for k in range(turns)]
    return t.model_copy(update={"utterances": [*t.utterances, *more]})


def test_a_large_run_links_its_transcripts_and_reads_none(
        small_run: tuple[Path, list[ResultRecord]], monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentclinic.report import html, rundir

    run_dir, records = small_run
    monkeypatch.setattr(html, "EMBED_MAX", 2)

    def unread(*_args: Any) -> Any:
        raise AssertionError("a linked page reads no transcript")

    monkeypatch.setattr(rundir, "read_transcript", unread)
    page = parse(render_html(run_dir, tables_for(records), SUMMARY))
    assert json.loads(page.json_blocks["ac-transcripts"]) is None
    data = json.loads(page.json_blocks["ac-records"])
    at = data["fields"].index("transcript")
    refs = [row[at] for row in data["rows"]]
    assert refs[:2] == [f"transcripts/{Path(str(r.transcript)).name}" for r in records[:2]]
    assert all((run_dir / ref).is_file() for ref in refs[:2])
    assert refs[2] is None
    assert "No transcript was saved" in data["rows"][2][data["fields"].index("note")]


def test_a_large_page_stays_small_whatever_the_dialogues(tmp_path: Path) -> None:
    from pytest_agentclinic.report.html import EMBED_MAX

    n = EMBED_MAX + 200
    sizes = {}
    for turns in (0, 20):
        run_dir = tmp_path / f"turns{turns}"
        records = save(run_dir, [(_long(encounter(i), turns), "Psoriasis") for i in range(n)])
        sizes[turns] = write_html(run_dir, tables_for(records), SUMMARY).stat().st_size
    # The dialogues are not in the page: only the turns used grow a digit.
    assert sizes[20] - sizes[0] <= 2 * n
    assert sizes[20] / n <= 1.5 * 1024


def test_browser_loads_a_linked_dialogue_when_served_and_links_it_from_disk(
        browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import functools
    import http.server
    import threading

    from pytest_agentclinic.report import html

    run_dir = tmp_path / "reports" / "r"
    records = save(run_dir, [(encounter(i), "Psoriasis") for i in range(3)])
    monkeypatch.setattr(html, "EMBED_MAX", 2)
    write_html(run_dir, tables_for(records), SUMMARY)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(run_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tab = browser.new_page()
    try:
        tab.goto(f"http://127.0.0.1:{server.server_port}/report.html")
        tab.locator("#q").fill("c-01")
        tab.locator("#rows tr").first.click()
        panel = tab.locator("#drawer .panel")
        panel.locator(".msg.role-doctor.kind-question").first.wait_for(timeout=10000)
        assert "Where is the rash of case 1?" in panel.locator(".msg").first.inner_text()
        assert "decided by offline-matcher" in panel.locator(".msg.kind-judgement").inner_text()
        tab.goto((run_dir / "report.html").as_uri())
        tab.locator("#q").fill("c-02")
        tab.locator("#rows tr").first.click()
        link = tab.locator("#drawer .panel .note a")
        link.wait_for(timeout=10000)
        assert link.get_attribute("href") == f"transcripts/{Path(str(records[2].transcript)).name}"
    finally:
        tab.close()
        server.shutdown()
