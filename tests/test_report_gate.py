"""The CI gate decides the exit status; both sides of each rule."""

from __future__ import annotations

import contextlib
import io
import json
import re
import xml.etree.ElementTree as ET

import pytest
from helpers import each_mode_once, make_case, write_yaml_cases
from test_report_statistics import rec

from pytest_agentclinic.cli import main
from pytest_agentclinic.report.conditions import gate_cells
from pytest_agentclinic.report.gate import GateSettings, evaluate

# A doctor that gives the right diagnosis except on the case numbers listed in $WRONG.
ORACLE = """
import asyncio
import os
from pytest_agentclinic.core.roles import Reply
from pytest_agentclinic.llm.errors import InfrastructureError

class Doctor:
    model = "release"
    prompt_version = "test-1"
    async def respond(self, view):
        await asyncio.sleep(float(os.environ.get("DELAY", "0")))
        if os.environ.get("OUTAGE") == view.case.id:
            raise InfrastructureError("simulated outage", attempts=3)
        wrong = os.environ.get("WRONG", "").split(",")
        short = os.environ.get("WRONG_UNDER_BUDGET")  # wrong on every case under this budget
        lost = view.case.id.split("-")[1] in wrong or str(view.turn_budget) == short
        answer = "Nothing at all" if lost else view.case.diagnosis
        return Reply("DIAGNOSIS READY: " + answer)

def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 31)])
    pytester.makeconftest(ORACLE)
    return pytester


def run(p: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, wrong: list[int],
        *args: str) -> pytest.RunResult:
    """One run of the oracle doctor. Baselines are recorded in one process only: what is
    under test is the gated run, under each xdist mode (a baseline recorded under -n 2 cost
    a worker start per test and tested nothing more)."""
    monkeypatch.setenv("WRONG", ",".join(f"{i:02d}" for i in wrong))
    return p.runpytest("c.yaml", "-p", "no:cacheprovider", *args)


def test_without_a_gate_pytest_exit_status_stands(suite: pytest.Pytester,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   xdist: list[str]) -> None:
    result = run(suite, monkeypatch, [1], *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "agentclinic gate" not in result.stdout.str()


# The gate's threshold does not change with the worker mode: each threshold runs in one
# mode (the failing gate under -n 2), each mode with one threshold, not every pair.
@pytest.mark.parametrize(("xdist", "minimum", "status"),
                         each_mode_once(("0.99", 1), ("0.9", 0)), indirect=["xdist"])
def test_min_accuracy(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                      xdist: list[str], minimum: str, status: int) -> None:
    result = run(suite, monkeypatch, [1, 2], f"--agent-min-accuracy={minimum}", *xdist)
    # Under a gate, misdiagnoses are measurements (xfailed): the gate alone fails the run.
    result.assert_outcomes(passed=28, xfailed=2)
    assert result.ret == status
    verdict = "pass" if status == 0 else "FAIL"
    result.stdout.fnmatch_lines([f"release: accuracy 0.933 (28/30, 30 cases, 95% CI "
                                 f"0.787-0.982) * minimum *: {verdict}",
                                 f"gate {'PASSED' if status == 0 else 'FAILED'}: *"])


@pytest.mark.parametrize(("xdist", "minimum", "colour"),
                         each_mode_once(("0.99", "31"), ("0.9", "32")), indirect=["xdist"])
def test_the_final_line_says_the_gate_verdict_in_its_colour(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str],
        minimum: str, colour: str) -> None:
    """A failed gate ended on a green "28 passed, 2 xfailed" line with exit status 1."""
    # An in-process run finds the plugin imported already (by this suite) and, started as the
    # `pytest` script, warns that it cannot rewrite its asserts: a warning colours the final
    # line yellow whatever the gate says. Users' runs import it once, and never warn so.
    result = run(suite, monkeypatch, [1, 2], f"--agent-min-accuracy={minimum}", "--color=yes",
                 "-W", "ignore::pytest.PytestAssertRewriteWarning", *xdist)
    lines = result.stdout.lines
    last = next(line for line in reversed(lines) if "passed" in line)
    assert last.startswith(f"\x1b[{colour}m"), repr(last)
    assert ("1 gate failed" in last) == (colour == "31")
    verdict = next(line for line in lines if "gate PASSED" in line or "gate FAILED" in line)
    assert f"\x1b[{colour}m" in verdict, repr(verdict)


@pytest.mark.parametrize(("xdist", "wrong", "status", "why"), each_mode_once(
    (list(range(1, 16)), 1, "drop larger than allowed and significant"),  # 15 lost: p < 0.001
    ([1, 2], 0, "drop not significant at alpha=0.05"),  # drop 0.067 > 0.05, but 2 cases only
    ([1], 0, "drop within the allowed margin"),  # drop 0.033 <= 0.05
), indirect=["xdist"])
def test_baseline_drop_must_be_larger_than_allowed_and_significant(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str],
        wrong: list[int], status: int, why: str) -> None:
    assert run(suite, monkeypatch, [], "--agent-run-name=base").ret == 0
    result = run(suite, monkeypatch, wrong, "--agent-baseline=reports/base",
                 "--agent-max-drop=0.05", *xdist)
    assert result.ret == status
    result.stdout.fnmatch_lines([f"release: baseline 1.000 -> * (drop *; 30 paired cases, "
                                 f"{len(wrong)} lost / 0 gained, one-sided sign-flip test "
                                 f"over cases p=*): *, {why}"])


def test_baseline_given_as_a_summary_uses_a_binomial_test(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]) -> None:
    run(suite, monkeypatch, [], "--agent-run-name=base")
    result = run(suite, monkeypatch, list(range(1, 11)),
                 "--agent-baseline=reports/base/summary.json", "--agent-max-drop=0.1", *xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["release: baseline 1.000 -> 0.667 *30 cases against the "
                                 "baseline summary's accuracy*sign-flip test over cases "
                                 "p=*FAIL*"])


def test_errors_fail_the_gate(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                              xdist: list[str]) -> None:
    monkeypatch.setenv("OUTAGE", "t-03")
    result = run(suite, monkeypatch, [], "--agent-min-accuracy=0.5", *xdist)
    result.assert_outcomes(passed=29, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["1 item(s) ended in infrastructure errors: FAIL*",
                                 "release: accuracy 1.000 (29/29, *) >= minimum 0.500: pass",
                                 "gate FAILED*"])


@pytest.mark.parametrize(("args", "message"), [
    (["--agent-max-drop=0.1"], "*--agent-max-drop needs --agent-baseline RUN*"),
    (["--agent-baseline=nowhere"], "*--agent-baseline: */nowhere does not exist*"),
    (["--agent-min-accuracy=1.5"], "*--agent-min-accuracy: expected a fraction between 0 and 1*"),
])
def test_gate_usage_errors(pytester: pytest.Pytester, args: list[str], message: str,
                           xdist: list[str]) -> None:
    result = pytester.runpytest(*args, *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def literal(text: str) -> str:
    """``text`` as an fnmatch pattern matching itself ('[' opens a character class)."""
    return text.replace("[", "[[]")


@pytest.fixture
def ten(pytester: pytest.Pytester) -> pytest.Pytester:
    """Ten cases: enough for the per-condition checks, cheap at two budgets."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 11)])
    pytester.makeconftest(ORACLE)
    return pytester


@pytest.fixture
def derm(pytester: pytest.Pytester) -> pytest.Pytester:
    """The issue's example: six dermatology cases."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 7)])
    pytester.makeconftest(ORACLE)
    return pytester


def test_repeats_are_not_independent_evidence(derm: pytest.Pytester,
                                              monkeypatch: pytest.MonkeyPatch,
                                              xdist: list[str]) -> None:
    # Reproduction: baseline with 10 repeats, then a doctor losing 2 of the 6 cases on every
    # repeat. The old gate counted 20 lost items (exact McNemar p=1.9e-06: FAIL); two cases are
    # two pieces of evidence: p = 1/4 with a sign-flip over cases, not significant.
    assert run(derm, monkeypatch, [], "--agent-repeat=10", "--agent-run-name=base").ret == 0
    result = run(derm, monkeypatch, [1, 2], "--agent-repeat=10", "--agent-run-name=cand",
                 "--agent-baseline=reports/base", "--agent-max-drop=0.05", *xdist)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["release: baseline 1.000 -> 0.667 (drop +0.333, max 0.050; "
                                 "6 paired cases, 2 lost / 0 gained, one-sided sign-flip test "
                                 "over cases p=0.25): pass, drop not significant at alpha=0.05"])
    # compare says the same on the same two runs: the case-level p is not significant either.
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["compare", str(derm.path / "reports/base"),
                     str(derm.path / "reports/cand")]) == 0
    row = next(line for line in out.getvalue().splitlines() if line.startswith("| all"))
    p_cases = float(row.split("|")[-2])
    assert p_cases == pytest.approx(0.5)  # two-sided: twice the gate's one-sided 0.25
    assert p_cases >= 0.05


# Which condition the gate is on does not change with the worker mode: each choice runs in
# one mode, each mode with one choice (three runs, not nine; per budget under -n 2).
@pytest.mark.parametrize(("xdist", "gate_on"), each_mode_once(
    "", "turn_budget=20", "pooled", ids=("per-budget", "one-budget", "pooled")),
    indirect=["xdist"])
def test_each_turn_budget_is_gated_on_its_own(ten: pytest.Pytester,
                                              monkeypatch: pytest.MonkeyPatch,
                                              xdist: list[str], gate_on: str) -> None:
    # Pooled over both budgets the accuracy is 0.5 (>= 0.4): a pooled gate would pass while
    # every case fails under the short budget.
    monkeypatch.setenv("WRONG_UNDER_BUDGET", "5")
    args = ["--agent-turns=5,20", "--agent-min-accuracy=0.4"]
    if not gate_on:
        result = run(ten, monkeypatch, [], *args, *xdist)
        assert result.ret == 1
        result.stdout.fnmatch_lines([literal(
            "release [turn_budget=5]: accuracy 0.000 (0/10, 10 cases, 95% CI 0.000-0.278) < "
            "minimum 0.400: FAIL"),
            literal("release [turn_budget=20]: accuracy 1.000 (10/10, ") + "*"])
    elif gate_on == "turn_budget=20":
        chosen = run(ten, monkeypatch, [], *args, "--agent-gate-on=turn_budget=20", *xdist)
        assert chosen.ret == 0
        assert "turn_budget=5]" not in chosen.stdout.str()
    else:
        pooled = run(ten, monkeypatch, [], *args, "--agent-gate-on=pooled", *xdist)
        assert pooled.ret == 0
        pooled.stdout.fnmatch_lines(["release (pooled over 2 turn_budget values): "
                                     "accuracy 0.500*"])


def test_junit_tells_the_same_story_as_the_exit_status(ten: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       xdist: list[str]) -> None:
    monkeypatch.setenv("WRONG_UNDER_BUDGET", "5")
    monkeypatch.setenv("DELAY", "0.2")  # every encounter takes 0.2 s, 16 at a time
    result = run(ten, monkeypatch, [1, 2], "--agent-turns=5,20", "--agent-min-accuracy=0.4",
                 "--junitxml=junit.xml", *xdist)
    monkeypatch.delenv("DELAY")
    assert result.ret == 1
    suite_el = ET.parse(ten.path / "junit.xml").getroot().find("testsuite")
    assert suite_el is not None
    # Misdiagnoses are measurements; the one failure is the gate's.
    assert suite_el.get("failures") == "1" and suite_el.get("errors") == "0"
    (gate,) = [c for c in suite_el.iter("testcase") if c.get("classname") == "agentclinic gate"]
    assert gate.find("failure") is not None
    # Every item carries its record as JSON, and its own encounter time (before, the first
    # of each concurrent batch was charged 0.2 s and the others nothing).
    items = [c for c in suite_el.iter("testcase") if c.get("classname") == "c.yaml"]
    assert len(items) == 20
    for item in items:
        prop = item.find("properties/property[@name='agentclinic_result']")
        assert prop is not None
        record = json.loads(prop.get("value") or "")
        assert record["duration_s"] >= 0.2
        # At least its own encounter (setup), plus whatever call and teardown took on this
        # machine: no upper bound, which only a quiet machine would meet (issue 23).
        assert float(item.get("time") or -1) >= record["duration_s"] - 0.0005  # 3 decimals

    passing = run(ten, monkeypatch, [1, 2], "--agent-min-accuracy=0.5", "--junitxml=ok.xml", *xdist)
    assert passing.ret == 0
    ok = ET.parse(ten.path / "ok.xml").getroot().find("testsuite")
    assert ok is not None and ok.get("failures") == "0"


def test_junit_shows_gated_misses_as_measured_and_the_gate_as_one_testcase(
        ten: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]) -> None:
    """Reproduction: each gated misdiagnosis was a JUnit *skipped* (72 in one run), which
    dashboards read as "not run", and the gate was one testcase per gated condition."""
    monkeypatch.setenv("WRONG_UNDER_BUDGET", "5")
    monkeypatch.setenv("OUTAGE", "t-03")
    result = run(ten, monkeypatch, [1, 2], "--agent-turns=5,20", "--agent-min-accuracy=0.4",
                 "--junitxml=junit.xml", *xdist)
    monkeypatch.delenv("OUTAGE")
    assert result.ret == 1
    suite_el = ET.parse(ten.path / "junit.xml").getroot().find("testsuite")
    assert suite_el is not None
    # The outage's two items are errors (they fail the gate); nothing is "skipped".
    assert (suite_el.get("tests"), suite_el.get("skipped"), suite_el.get("failures"),
            suite_el.get("errors")) == ("21", "0", "1", "2")
    items = [c for c in suite_el.iter("testcase") if c.get("classname") == "c.yaml"]
    assert len(items) == 20 and not [c for c in items if c.find("skipped") is not None]
    outcomes = {}
    for item in items:
        prop = item.find("properties/property[@name='agentclinic_outcome']")
        assert prop is not None and item.find("failure") is None, ET.tostring(item)
        result_prop = item.find("properties/property[@name='agentclinic_result']")
        assert result_prop is not None
        record = json.loads(result_prop.get("value") or "")
        assert prop.get("value") == record["outcome"]
        outcomes[item.get("name")] = record["outcome"]
        out = item.findtext("system-out") or ""
        if record["outcome"] == "incorrect":
            assert out.startswith("misdiagnosis") and "expected:" in out and "why:" in out
        elif record["outcome"] == "error":
            assert item.find("error") is not None
        else:
            assert out == ""
    # 9 wrong under budget 5, 2 under 20, and t-03's outage under both
    assert sorted(outcomes.values()) == ["correct"] * 7 + ["error"] * 2 + ["incorrect"] * 11
    # The gate: one testcase, failed, with every check's numbers.
    (gate,) = [c for c in suite_el.iter("testcase") if c.get("classname") == "agentclinic gate"]
    assert gate.get("name") == "agentclinic gate"
    failure = gate.find("failure")
    assert failure is not None and "release [turn_budget=5]: accuracy 0.000" in (
        failure.get("message") or "") and "infrastructure error" in (failure.get("message")
                                                                      or "")
    props = {p.get("name"): p.get("value") or "" for p in gate.iter("property")}
    assert props["agentclinic_gate_verdict"] == "FAILED"
    assert json.loads(props["agentclinic_gate[release [turn_budget=20]]"])["passed"] is True
    assert json.loads(props["agentclinic_gate[release [turn_budget=5]]"])["passed"] is False
    assert "release [turn_budget=20]: accuracy 0.778 (7/9" in (gate.findtext("system-out") or "")

    passing = run(ten, monkeypatch, [1, 2], "--agent-turns=20", "--agent-min-accuracy=0.5",
                  "--junitxml=ok.xml", *xdist)
    assert passing.ret == 0
    ok = ET.parse(ten.path / "ok.xml").getroot().find("testsuite")
    assert ok is not None
    assert (ok.get("tests"), ok.get("skipped"), ok.get("failures")) == ("11", "0", "0")
    (gate,) = [c for c in ok.iter("testcase") if c.get("classname") == "agentclinic gate"]
    assert gate.find("failure") is None and "gate PASSED" in (gate.findtext("system-out") or "")


# Writes what pytest would print for each gated miss (its report's long form), per process.
LONGREPR_PROBE = """
def pytest_runtest_logreport(report):
    if report.when == "call" and hasattr(report, "wasxfail"):
        with open(f"longrepr-{os.getpid()}.txt", "a") as fh:
            fh.write(report.longreprtext + "\\n---\\n")
"""


def test_a_gated_miss_is_its_message_not_a_traceback(pytester: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     xdist: list[str]) -> None:
    """pytest formatted the traceback of every gated miss (an xfail no one sees): ~0.15 s of
    parsing the frames' sources apiece, most of a gated run's time."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    pytester.makeconftest(ORACLE + LONGREPR_PROBE)
    result = run(pytester, monkeypatch, [1, 2], "--agent-min-accuracy=0.5", *xdist)
    result.assert_outcomes(passed=2, xfailed=2)
    written = "".join(p.read_text() for p in pytester.path.glob("longrepr-*.txt"))
    # (on the xdist controller, after the line naming the worker)
    reprs = [re.sub(r"^\[gw\d+\] .*\n", "", r.strip()) for r in written.split("---")
             if r.strip()]
    assert len(reprs) >= 2  # each miss, in the process that ran it (and the controller)
    for text in reprs:
        assert text.startswith("misdiagnosis") and "expected:" in text, text
        assert "def runtest" not in text and "collect.py" not in text, text


def test_a_gate_over_no_judged_items_says_so(ten: pytest.Pytester,
                                            monkeypatch: pytest.MonkeyPatch,
                                            xdist: list[str]) -> None:
    monkeypatch.setenv("OUTAGE", "t-01")
    result = ten.runpytest("c.yaml", "-p", "no:cacheprovider", "-k", "t-01",
                             "--agent-min-accuracy=0.5", *xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["release: no judged items (1 errors): FAIL*"])
    assert "(0/0)" not in result.stdout.str()


def test_gate_on_defaults_to_the_unbiased_condition_and_labels_pooling() -> None:
    records = [rec(f"c{i}", "correct" if bias == "none" else "incorrect", bias=bias)
               for i in range(5) for bias in ("none", "doctor:recency", "doctor:status_quo")]
    (cell,) = gate_cells(records, ("default",))
    assert cell.label == "model-a [bias=none]" and len(cell.records) == 5
    assert [c.label for c in gate_cells(records, ("all",))] == [
        "model-a [bias=doctor:recency]", "model-a [bias=doctor:status_quo]",
        "model-a [bias=none]"]
    (pooled,) = gate_cells(records, ("all", "pooled"))
    assert pooled.label == "model-a (pooled over 3 bias values)"
    result = evaluate(GateSettings(min_accuracy=0.9), records)
    assert result.passed and result.lines == (
        "model-a [bias=none]: accuracy 1.000 (5/5, 5 cases, 95% CI 0.566-1.000) >= minimum "
        "0.900: pass",)


def test_craftmd_cells_are_each_experiment_and_answer_mode() -> None:
    records = [rec(f"c{i}", "correct", experiment=e, answer_format=a, protocol="craftmd")
               for i in range(3) for e in ("vignette", "multiturn") for a in ("mcq", "frq")]
    labels = [c.label for c in gate_cells(records, ("default",))]
    assert labels == ["model-a [experiment=multiturn, answer_format=frq]",
                      "model-a [experiment=multiturn, answer_format=mcq]",
                      "model-a [experiment=vignette, answer_format=frq]",
                      "model-a [experiment=vignette, answer_format=mcq]"]


def test_gate_on_usage_error(pytester: pytest.Pytester, xdist: list[str]) -> None:
    result = pytester.runpytest("--agent-gate-on=colour=red", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-gate-on: 'colour=red' is not one of: default, all, "
                                 "pooled, or FIELD=VALUE with FIELD one of patient, bias, "
                                 "turn_budget, experiment, answer_format*"])



def test_summary_says_when_what_how_and_the_verdict(ten: pytest.Pytester,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    xdist: list[str]) -> None:
    step_summary = ten.path / "step_summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    monkeypatch.setenv("WRONG_UNDER_BUDGET", "5")
    result = run(ten, monkeypatch, [], "--agent-turns=5,20", "--agent-min-accuracy=0.4",
                 "--agent-run-name=r1", *xdist)
    assert result.ret == 1
    md = (ten.path / "reports/r1/summary.md").read_text()
    # Reproduction: summary.md printed "- roles: {'doctor': ...}" and lists as reprs.
    assert "{'" not in md and "['" not in md and "roles:" not in md
    assert re.search(r"^- date: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", md, re.M)
    assert re.search(r"^- duration: \d+\.\d s$", md, re.M)
    command = " ".join(["pytest c.yaml -p no:cacheprovider --agent-turns=5,20",
                        "--agent-min-accuracy=0.4 --agent-run-name=r1", *xdist, "--basetemp="])
    assert f"- command line: `{command}" in md
    assert re.search(r"^- pytest-agentclinic: \S+$", md, re.M)
    assert re.search(r"^- litellm: 1\.\d+\.\d+$", md, re.M)
    assert "- turn budgets: 5, 20" in md and "- doctor model: release" in md
    assert "**gate FAILED**" in md
    assert ("- [FAIL] release [turn_budget=5]: accuracy 0.000 (0/10, 10 cases, 95% CI "
            "0.000-0.278) < minimum 0.400: FAIL") in md
    assert "## accuracy by doctor model (pooled over 2 turn_budget values)" in md
    assert "## accuracy by condition" in md and "| release  | turn_budget=5 " in md
    summary = json.loads((ten.path / "reports/r1/summary.json").read_text())
    assert summary["gate"]["verdict"] == "FAILED"
    assert [c["name"] for c in summary["gate"]["checks"]] == [
        "release [turn_budget=5]", "release [turn_budget=20]"]
    assert summary["conditions"][0]["condition"] == {"turn_budget": "5"}
    assert summary["command"].startswith("pytest c.yaml") and summary["duration_s"] >= 0
    # GitHub's job summary receives summary.md, after what earlier steps wrote.
    assert step_summary.read_text() == "earlier step\n" + md + "\n"


def test_a_summary_baseline_is_read_per_condition(ten: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  xdist: list[str]) -> None:
    monkeypatch.setenv("WRONG_UNDER_BUDGET", "5")
    run(ten, monkeypatch, [], "--agent-turns=5,20", "--agent-run-name=base")
    monkeypatch.delenv("WRONG_UNDER_BUDGET")
    result = run(ten, monkeypatch, list(range(1, 7)), "--agent-turns=5,20",
                 "--agent-baseline=reports/base/summary.json", "--agent-max-drop=0.1", *xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        literal("release [turn_budget=5]: baseline 0.000 -> 0.400 (drop -0.400") + "*pass*",
        literal("release [turn_budget=20]: baseline 1.000 -> 0.400 (drop +0.600") + "*FAIL*"])


def test_failure_headers_carry_the_full_item_id(ten: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch,
                                                xdist: list[str]) -> None:
    # Reproduction: the header read "t-01 (t)" for every variant of the case.
    result = run(ten, monkeypatch, [1], "--agent-turns=5,20", "-k", "t-01", *xdist)
    for budget in (5, 20):  # each on its own: xdist reports failures in finishing order
        result.stdout.fnmatch_lines([f"*_ c.yaml::t-01[[]dermatology-offline-t{budget}] _*"])


def test_an_unreadable_baseline_is_one_clear_line(ten: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  xdist: list[str]) -> None:
    assert run(ten, monkeypatch, [], "--agent-run-name=base").ret == 0
    results = ten.path / "reports/base/results.jsonl"
    lines = results.read_text().splitlines()
    lines[2] = '{"run": "base", "nodeid": 7}'
    results.write_text("\n".join(lines) + "\n")
    result = run(ten, monkeypatch, [], "--agent-baseline=reports/base", "--agent-max-drop=0.1",
                 "--agent-min-accuracy=0.5", *xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["the baseline cannot be read: bad result record: "
                                 "*reports/base/results.jsonl:3: field '*': * (and * more): "
                                 "FAIL",
                                 "release: accuracy 1.000 (10/10, *) >= minimum 0.500: pass",
                                 "gate FAILED*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_baseline_that_does_not_pair_says_why(ten: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch,
                                                xdist: list[str]) -> None:
    assert run(ten, monkeypatch, [], "--agent-turns=10", "--agent-run-name=base").ret == 0
    result = run(ten, monkeypatch, [], "--agent-turns=20", "--agent-baseline=reports/base",
                 "--agent-max-drop=0.1", *xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["release: no case of the baseline pairs with this cell under "
                                 "the same condition (turn_budget: only in A 10; only in B 20; "
                                 "A is the baseline, B this run): FAIL"])


def test_every_table_that_pools_conditions_says_so() -> None:
    from pytest_agentclinic.protocols.registry import report_tables

    records = [rec(f"c{i}", "correct", bias=bias, turn_budget=budget, specialty=specialty)
               for i in range(3) for bias in ("none", "doctor:recency") for budget in (10, 20)
               for specialty in ("Neurology", "Dermatology")]
    titles = [t.title for t in report_tables(records, resamples=10)]
    assert titles == [
        "accuracy by doctor model (pooled over 2 bias values, 2 turn_budget values)",
        "accuracy by condition",
        # AgentClinic's own tables follow the conditions, as every protocol's do.
        "accuracy by bias (pooled over 2 turn_budget values)",
        "accuracy by specialty and bias (pooled over 2 turn_budget values)",
        "accuracy by specialty (pooled over 2 bias values, 2 turn_budget values)",
        "accuracy by turn budget (pooled over 2 bias values)"]


def test_summary_md_puts_the_decision_and_its_numbers_first() -> None:
    """Reproduction: $GITHUB_STEP_SUMMARY showed the verdict after 26 lines of settings."""
    from pytest_agentclinic.report.summary_md import render_markdown
    from pytest_agentclinic.report.tables import overview

    records = [rec(f"c{i}", "correct" if i % 2 else "incorrect", doctor="release")
               for i in range(10)]
    gate_result = evaluate(GateSettings(min_accuracy=0.6), records).to_dict()
    summary = {"run": "r1", "roles": {"doctor": "release", "patient": "offline"},
               "date": "2026-11-25T20:00:00Z", "duration_s": 3.0,
               "command": "pytest cases --agent-min-accuracy=0.6", "turn_budgets": [20],
               "items": 10, "case_files": {f"cases/f{i}.yaml": "ab" * 32 for i in range(12)},
               "gate": gate_result}
    md = render_markdown(summary, [overview(records, 100)]).splitlines()
    assert md[0] == "# agentclinic run r1: gate FAILED"
    head = "\n".join(md[:6])
    assert "**gate FAILED**" in head
    assert "release: accuracy 0.500 (5/10, 10 cases" in head and "< minimum 0.600" in head
    # The accuracy table comes next, the settings after it.
    table_at = md.index("## accuracy by doctor model")
    assert table_at < 10 and md[table_at + 4].startswith("| release ")
    assert md.index("## Settings") > table_at and md.index("- date: 2026-11-25T20:00:00Z") > \
        table_at
