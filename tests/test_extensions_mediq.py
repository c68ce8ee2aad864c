"""MediQ (issue 35): a third benchmark from its own distribution (extensions/mediq), on the
extension API alone. Its data is read from ../shared (skipped where absent)."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from helpers import SHARED, llm_args, results
from test_report_html import browser  # noqa: F401  (the real-browser fixture)

from pytest_agentclinic import api
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

MEDIQ = SHARED / "mediq"
ICRAFT, IMEDQA = MEDIQ / "all_craft_md.jsonl", MEDIQ / "all_dev_good.jsonl"
pytestmark = [
    pytest.mark.skipif(not ICRAFT.is_file(), reason="../shared/datasets/mediq is absent"),
    pytest.mark.skipif(
        not any(p.name == "mediq" for p in entry_points(group="pytest_agentclinic.protocols")),
        reason="extensions/mediq is not installed (pip install ./extensions/mediq)"),
]
Start = Callable[[Script], FakeOpenAIServer]


def _lines(path: Path, n: int) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[:n]


def words(text: str) -> str:
    """Lower-case words, single-spaced."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _accuracy(records: dict[str, dict[str, Any]]) -> dict[str, float]:
    by: dict[str, list[bool]] = {}
    for r in records.values():
        by.setdefault(r["conditions"]["setting"], []).append(r["outcome"] == "correct")
    return {setting: sum(v) / len(v) for setting, v in by.items()}

# --------------------------------------------------------------------- cases


def test_every_case_of_both_files_loads() -> None:
    craft, craft_errors = api.load_cases(ICRAFT)
    medqa, medqa_errors = api.load_cases(IMEDQA)
    assert (len(craft), len(medqa), craft_errors, medqa_errors) == (140, 1272, [], [])
    # The 3 records without context run as upstream's Patient runs them: nothing up front.
    empty = [c for c in medqa if not c.metadata["context"]]
    assert len(empty) == 3 and all(c.patient.history == "" for c in empty)
    t = asyncio.run(api.play_encounter("mediq", empty[0], {},
                                       options={"mediq_setting": ("fixed",)}))
    answers = [u.text for u in t.utterances if u.role == "patient" and u.turn > 0]
    assert t.outcome in ("correct", "incorrect") and len(answers) == 12
    assert set(answers) == {"The patient cannot answer this question."}
    first = json.loads(_lines(ICRAFT, 1)[0])
    case = craft[0]
    assert case.metadata["answer_idx"] == first["answer_idx"] == "A"
    assert case.diagnosis == first["options"]["A"] and case.choices == list(
        first["options"].values())


def test_icraft_cases_carry_the_craftmd_case_id_of_their_vignette() -> None:
    craft, _ = api.load_cases(ICRAFT)
    with (SHARED / "craftmd" / "usmle_and_derm_dataset.csv").open(encoding="utf-8") as f:
        vignettes = {row["case_id"]: row for row in csv.DictReader(f)}
    linked = [c for c in craft if "craftmd_case_id" in c.metadata]
    assert len(linked) >= 130  # 133 of 140: the others match no vignette's text
    raw = {r["id"]: r for r in map(json.loads, _lines(ICRAFT, 140))}
    for case in linked:
        row = vignettes[str(case.metadata["craftmd_case_id"])]
        assert words(case.patient.history) in words(row["case_vignette"])
        # MediQ's ``answer`` text (its letter is graded: 4 records' texts differ from it)
        assert words(row["answer"]) == words(raw[case.metadata["mediq_id"]]["answer"])
        assert case.specialty == row["category"]


def test_both_files_collect_in_every_worker_mode(pytester: pytest.Pytester,
                                                 xdist: list[str]) -> None:
    """Every case of both files, under two settings; ``-k`` selects one of them."""
    run = pytester.runpytest(str(MEDIQ), "--agent-protocol=mediq", "--collect-only", "-q",
                             "--agent-mediq-setting=full,scale-rg", "-k", "scale",
                             "-p", "no:cacheprovider", *xdist)
    run.stdout.fnmatch_lines(["*1412/2824 tests collected (1412 deselected)*"])
    assert run.ret == 0


def test_a_bad_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("m.jsonl").write_text("\n".join(_lines(ICRAFT, 1)))
    run = pytester.runpytest("m.jsonl", "--agent-protocol=mediq", "--agent-mediq-setting=wild")
    assert run.ret == 4
    run.stderr.fnmatch_lines(["*--agent-mediq-setting*'wild' is not one of full*"])

# --------------------------------------------------------------------- offline run


def test_offline_baselines_rank_full_over_initial_over_none(pytester: pytest.Pytester,
                                                            xdist: list[str]) -> None:
    run = pytester.runpytest(str(ICRAFT), "--agent-protocol=mediq", "-p", "no:cacheprovider",
                             "--agent-mediq-setting=full,initial",
                             "--agent-mediq-setting=none", *xdist)
    assert run.ret == 1  # some wrong options: failures
    acc = _accuracy(results(pytester.path))
    assert acc["full"] > acc["initial"] >= acc["none"], acc
    run.stdout.fnmatch_lines(["mediq: accuracy by setting (option letter):",
                              f"*offline*icraft-md*full*140*{acc['full']:.3f}*"])


def test_offline_experts_ask_and_report_each_measure(pytester: pytest.Pytester,
                                                     xdist: list[str]) -> None:
    pytester.path.joinpath("m.jsonl").write_text("\n".join(_lines(ICRAFT, 6)))
    run = pytester.runpytest("m.jsonl", "--agent-protocol=mediq", "-p", "no:cacheprovider",
                             "--agent-mediq-setting=full,basic,fixed,scale-rg",
                             "--agent-mediq-questions=3", "--agent-run-name=m",
                             "--agent-gate-on", "setting=fixed", "--agent-min-accuracy=0.99",
                             *xdist)
    records = results(pytester.path)
    # The gate judges the setting chosen, alone.
    run.stdout.fnmatch_lines(["offline [[]*setting=fixed[]]: accuracy * < minimum 0.990: FAIL"])
    assert run.ret != 0 and "setting=full]" not in run.stdout.str()
    assert len(records) == 24
    fixed = [r for r in records.values() if r["conditions"]["setting"] == "fixed"]
    # The fixed expert asks until the budget runs out: 3 questions, then a forced answer.
    assert {r["measures"]["questions"] for r in fixed} == {3}
    assert all(r["measures"]["facts"] > 0 for r in fixed)
    assert all(r["measures"] is None for r in records.values()
               if r["conditions"]["setting"] == "full")
    for title in ("accuracy by setting", "questions asked by setting",
                  "budget ran out by setting", "facts revealed by setting"):
        run.stdout.fnmatch_lines([f"mediq: {title}*"])
    run.stdout.fnmatch_lines(["*offline*icraft-md*fixed*6*3*6*1.000*"])  # ran out: all 6
    summary = json.loads((pytester.path / "reports" / "m" / "summary.json").read_text())
    titles = {t["title"] for t in summary["tables"]}
    assert {"mediq: budget ran out by setting (answer forced)",
            "mediq: facts revealed by setting"} <= titles
    html = (pytester.path / "reports" / "m" / "report.html").read_text()
    assert "budget ran out by setting" in html.lower()
    assert (summary["question_budget"], summary["settings"]) == (
        3, ["full", "basic", "fixed", "scale-rg"])

# --------------------------------------------------------------------- models


def _facts(case_line: str) -> list[str]:
    return [re.sub(r"^\d+\.\s*", "", f) for f in json.loads(case_line)["facts"]]


def _scripted(asks: list[int], marks: list[tuple[str, str]], fact: list[str]) -> Script:
    """On case i (told by its first fact, which the patient sees, or its first context
    sentence, which the expert sees): an expert that asks ``asks[i]`` questions (it counts
    the doctor questions in its prompt), then answers B; a patient that recites the fact
    ``fact[i]`` and a line it made up."""

    def reply(req: FakeRequest) -> FakeReply:
        text = json.dumps(req.messages)
        i = next(i for i, pair in enumerate(marks) if any(m in text for m in pair))
        if "truthful assistant" in req.system:
            return FakeReply(f"{fact[i]}\nThe patient is an astronaut.")
        asked = req.last_user.count("Doctor question:")
        if "LETTER CHOICE" in req.last_user:
            return FakeReply("B")
        return FakeReply("Do you have a fever?" if asked < asks[i] else "B")

    return reply


def test_a_model_expert_asks_k_questions_then_answers_or_is_forced(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    """Budget 3: the expert asking 2 answers after 2; the one asking 4 is forced after 3."""
    lines = _lines(ICRAFT, 2)
    pytester.path.joinpath("m.jsonl").write_text("\n".join(lines))
    raw = [json.loads(line) for line in lines]
    facts = [_facts(line) for line in lines]
    marks = [(json.dumps(f[0])[1:-1], json.dumps(r["context"][0])[1:-1])
             for f, r in zip(facts, raw, strict=True)]
    server = fake_server(_scripted([2, 4], marks, [f[4] for f in facts]))
    pytester.runpytest("m.jsonl", "--agent-protocol=mediq", "--agent-mediq-setting=basic",
                       "--agent-mediq-questions=3", "--agent-run-name=m",
                       *llm_args(server, ("doctor", "patient")), *xdist)
    records = sorted(results(pytester.path).values(), key=lambda r: r["case_id"])
    assert len(records) == 2
    for record, r, fact, asked, forced in zip(records, raw, facts, (2, 3), (0, 1),
                                              strict=True):
        assert record["measures"]["questions"] == asked and record["given"] == "B"
        assert record["expected"] == r["answer_idx"]
        said = json.loads(Path(pytester.path, record["transcript"]).read_text())["utterances"]
        assert [u["kind"] for u in said if u["role"] == "doctor"] == ["question"] * asked + [
            "choice"]
        answers = [u["text"] for u in said if u["role"] == "patient" and u["turn"] > 0]
        assert answers == [fact[4]] * asked  # only the fact: the made-up line is dropped
        assert record["measures"]["facts_elicited"] == 1
        assert sum(u["kind"] == "forced" for u in said) == forced


def test_model_abstention_modules_follow_their_thresholds(fake_server: Start) -> None:
    """numcutoff answers at 0.8, scale at 'somewhat confident' (4), binary on YES."""
    cases, _ = api.load_cases(ICRAFT)
    seen: list[str] = []

    def reply(req: FakeRequest) -> FakeReply:
        user = req.last_user
        seen.append(user)
        if "LETTER CHOICE" in user:
            return FakeReply("C")
        if "ATOMIC QUESTION" in user:
            return FakeReply("ATOMIC QUESTION: Any itching?")
        if "truthful assistant" in req.system:
            return FakeReply("nothing")
        if "probability" in user:
            return FakeReply("0.85" if user.count("Doctor question:") >= 1 else "0.79")
        if "rating" in user:
            return FakeReply("Somewhat Confident" if user.count("Doctor question:") >= 2
                             else "Neither Confident or Unconfident")
        return FakeReply("YES" if user.count("Doctor question:") >= 3 else "NO")

    server = fake_server(reply)

    async def play(setting: str) -> api.Transcript:
        return await _play_llm(server, cases[0], setting)

    for setting, asked in (("numcutoff", 1), ("scale", 2), ("binary", 3)):
        t = asyncio.run(play(setting))
        assert [u.kind for u in t.utterances if u.role == "doctor"][-1] == "choice"
        assert sum(u.kind == "question" for u in t.utterances) == asked, setting
        assert t.diagnosis == "C"


async def _play_llm(server: FakeOpenAIServer, case: api.Case, setting: str) -> api.Transcript:
    from pytest_agentclinic.llm.cache import CacheMode, ResponseCache
    from pytest_agentclinic.llm.caller import CallSettings, ModelCaller

    caller = ModelCaller(CallSettings(api_base=server.url),
                         ResponseCache(Path("."), CacheMode.OFF))
    protocol = api.get_protocol("mediq")()
    options = {"mediq_setting": (setting,), "mediq_questions": 5, "mediq_threshold": 0.8,
               "mediq_scale_threshold": 4, "mediq_samples": 3}
    run = api.RunOptions(doctors=("openai/fake",), patients=("openai/fake",), options=options)
    item = next(iter(protocol.expand([case], run)))
    ctx = api.PlayContext(caller, lambda *a: None, options)
    return await caller.closing(protocol.play(item, ctx))

# --------------------------------------------------------------------- export


def test_an_exported_mediq_run_reads_back_with_inspect(pytester: pytest.Pytester) -> None:
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log
    pytester.path.joinpath("m.jsonl").write_text("\n".join(_lines(ICRAFT, 3)))
    pytester.runpytest("m.jsonl", "--agent-protocol=mediq", "-p", "no:cacheprovider",
                       "--agent-mediq-setting=initial,basic", "--agent-run-name=m")
    records = results(pytester.path)
    done = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "export",
                           "--format", "inspect", "reports/m"], cwd=pytester.path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    (path,) = (pytester.path / "reports" / "m" / "inspect").iterdir()
    log = read_eval_log(str(path))
    assert log.status == "success" and log.samples is not None
    assert len(log.samples) == len(records) == 6
    assert {s.target for s in log.samples} == {r["expected"] for r in records.values()}
    roles = {m.metadata["role"] for s in log.samples for m in s.messages if m.metadata}
    assert {"doctor", "patient"} <= roles


def test_the_view_shows_each_mediq_table(pytester: pytest.Pytester,
                                         browser: Any) -> None:  # noqa: F811
    pytester.path.joinpath("m.jsonl").write_text("\n".join(_lines(ICRAFT, 3)))
    for run in ("old", "new"):
        pytester.runpytest("m.jsonl", "--agent-protocol=mediq", "-p", "no:cacheprovider",
                           "--agent-mediq-setting=initial,fixed", f"--agent-run-name={run}",
                           "--agent-mediq-questions=2")
    done = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "view",
                           "reports/old", "reports/new", "-o", "view.html"],
                          cwd=pytester.path, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    tab = browser.new_page()
    tab.goto((pytester.path / "view.html").as_uri())
    titles = tab.locator("#ptables h3").all_inner_texts()
    assert len(titles) == 8 and sum("budget ran out by setting" in t for t in titles) == 2
    budget = tab.locator("#ptables table").nth(2).locator("tr").all_inner_texts()
    assert budget[1].split("\t") == ["offline", "icraft-md", "fixed", "3", "2", "3", "1.000"]
    tab.close()
