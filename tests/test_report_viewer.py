"""``agentclinic view``: one page across runs, checked in a real browser; and ``agentclinic
export --format inspect``, checked with inspect_ai's own log reader."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases
from test_report_html import browser  # noqa: F401  (the real-browser fixture)

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]


def _doctor(wrong_on: tuple[int, ...]) -> Script:
    """A doctor that names the case's own diagnosis at once (Condition<i> disease), except on
    the cases ``wrong_on``, where it names another case's."""

    def reply(req: FakeRequest) -> FakeReply:
        text = json.dumps(req.messages)
        case = next(i for i in range(1, 10) if f"complaint {i}." in text)
        named = case + 1 if case in wrong_on else case
        return FakeReply(f"DIAGNOSIS READY: Condition{named} disease")

    return reply


def _agentclinic(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def two_runs(pytester: pytest.Pytester, fake_server: Start) -> tuple[Path, list[dict[str, Any]]]:
    """Two runs of two versions of a doctor on the same 4 cases: the old one is wrong on
    cases 1 and 3, the new one always right."""
    cases = [make_case(i, "Dermatology" if i % 2 else "Neurology") for i in range(1, 5)]
    write_yaml_cases(pytester.path / "c.yaml", cases)
    for run, wrong in (("old", (1, 3)), ("new", ())):
        server = fake_server(_doctor(wrong))
        pytester.runpytest("c.yaml", f"--agent-run-name={run}",
                           f"--agent-doctor=openai/fake-doctor-{run}",
                           f"--agent-api-base={server.url}", "--agent-perception=no",
                           "-p", "no:cacheprovider")
    records = [json.loads(line) for run in ("old", "new") for line in
               (pytester.path / "reports" / run / "results.jsonl").read_text().splitlines()]
    return pytester.path, records


def test_view_shows_accuracy_flips_and_transcripts_side_by_side(
        two_runs: tuple[Path, list[dict[str, Any]]], browser: Any) -> None:  # noqa: F811
    root, records = two_runs
    old = {r["case_id"]: r["outcome"] for r in records if r["run"] == "old"}
    flipped = sorted(c for c, outcome in old.items() if outcome != "correct")
    assert flipped == ["t-01", "t-03"]
    done = _agentclinic("view", "reports/old", "reports/new", "-o", "view.html", cwd=root)
    assert done.returncode == 0, done.stderr
    for width in (800, 1400):
        context = browser.new_context(viewport={"width": width, "height": 900})
        tab = context.new_page()
        problems: list[str] = []
        tab.on("pageerror", lambda exc, p=problems: p.append(str(exc)))
        tab.on("request", lambda req, p=problems: None if req.url.startswith(
            ("file:", "data:", "about:")) else p.append(req.url))
        tab.goto((root / "view.html").as_uri())
        assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        accuracy = tab.locator("#acc-table tr").all_inner_texts()
        assert len(accuracy) == 3 and "100.0%" in accuracy[2]
        rows = tab.locator("#flip-table tr").all_inner_texts()
        assert sorted(r.split("\t")[0] for r in rows[1:]) == flipped
        tab.locator("#flip-table button").first.click()
        sides = tab.locator("#compare .side > div")
        assert sides.count() == 2
        assert "DIAGNOSIS READY: Condition" in sides.nth(1).inner_text()
        assert "#1 old" in sides.nth(0).inner_text()
        # Filters: only the correct items of both runs.
        tab.select_option("#f-outcome", "correct")
        shown = tab.locator("#item-table tr").count() - 1
        assert shown == sum(r["outcome"] == "correct" for r in records)
        tab.select_option("#f-specialty", "Neurology")
        assert all("Neurology" in r for r in tab.locator("#item-table tr").all_inner_texts()[1:])
        context.close()
        assert problems == []


def test_view_refuses_a_missing_run(tmp_path: Path) -> None:
    done = _agentclinic("view", "nowhere", cwd=tmp_path)
    assert done.returncode == 2 and "nowhere" in done.stderr and "Traceback" not in done.stderr


def test_export_writes_logs_that_inspect_reads(
        two_runs: tuple[Path, list[dict[str, Any]]]) -> None:
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log
    root, records = two_runs
    done = _agentclinic("export", "--format", "inspect", "reports/new", cwd=root)
    assert done.returncode == 0, done.stderr
    (path,) = (root / "reports" / "new" / "inspect").iterdir()
    log = read_eval_log(str(path))
    new = [r for r in records if r["run"] == "new"]
    assert log.status == "success" and log.eval.model == "openai/fake-doctor-new"
    assert log.samples is not None and len(log.samples) == len(new)
    assert {s.target for s in log.samples} == {r["expected"] for r in new}
    assert {s.scores["moderator"].value for s in log.samples if s.scores} == {"C"}
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    sample = log.samples[0]
    roles = {m.metadata["role"] for m in sample.messages if m.metadata}
    assert "doctor" in roles and len(roles) >= 2
    for message in sample.messages:
        assert message.metadata is not None
        assert message.role == ("assistant" if message.metadata["role"] == "doctor" else "user")
    assert log.eval.model_roles is not None and "patient" in log.eval.model_roles
    assert sample.model_usage  # the doctor's calls
