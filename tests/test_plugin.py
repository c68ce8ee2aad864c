"""pytester runs of the plugin with the offline agents (no network, no model)."""

from __future__ import annotations

import json

import pytest
from helpers import each_mode_once, make_case, nejm_line, osce_line, results, write_yaml_cases

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture
def library(pytester: pytest.Pytester) -> pytest.Pytester:
    """A folder of case files in every supported format."""
    cases = pytester.mkdir("cases")
    write_yaml_cases(cases / "derm.yaml", [make_case(1), make_case(2)])
    (cases / "neuro.json").write_text(json.dumps([make_case(3, specialty="Neurology")]))
    (cases / "upstream_medqa.jsonl").write_text(osce_line(0) + "\n" + osce_line(1) + "\n")
    (cases / "upstream_medqa.specialties.json").write_text(json.dumps(
        {"cases": {"0": {"specialty": "Infectious Diseases"}}}))
    (cases / "images_nejm.jsonl").write_text(nejm_line(0) + "\n")
    (cases / "notes.yaml").write_text("title: not a case file\n")
    return pytester


def test_collects_every_format_with_ids_that_carry_dataset_case_and_specialty(
        library: pytest.Pytester, xdist: list[str]) -> None:
    result = library.runpytest("cases", "--collect-only", "-q", *xdist)
    result.stdout.fnmatch_lines([
        "cases/derm.yaml::t-01[[]dermatology-offline[]]",
        "cases/derm.yaml::t-02[[]dermatology-offline[]]",
        "cases/images_nejm.jsonl::nejm-0000[[]unspecified-offline[]]",
        "cases/neuro.json::t-03[[]neurology-offline[]]",
        "cases/upstream_medqa.jsonl::medqa-0000[[]infectious-diseases-offline[]]",
        "cases/upstream_medqa.jsonl::medqa-0001[[]unspecified-offline[]]",
        "6 tests collected*",
    ])


# Each selection runs in one worker mode, each mode with one selection (three runs, not
# nine): test_plugin_xdist_split.py runs every selection in every mode against the split.
@pytest.mark.parametrize(("xdist", "how"), each_mode_once("k", "id", "m"), indirect=["xdist"])
def test_select_by_specialty_keyword_and_marker(library: pytest.Pytester,
                                                xdist: list[str], how: str) -> None:
    if how == "k":
        by_k = library.runpytest("cases", "-k", "dermatology", "--strict-markers", *xdist)
        by_k.assert_outcomes(passed=2)
    elif how == "m":
        by_m = library.runpytest("cases", "-m", "infectious_diseases", "--strict-markers",
                                 *xdist)
        by_m.assert_outcomes(passed=1)
    else:
        by_id = library.runpytest("cases", "-k", "medqa-0001", "--agent-run-name=by-id", *xdist)
        by_id.assert_outcomes(passed=1)
        ran = (library.path / "reports/by-id/results.jsonl").read_text().splitlines()
        assert [json.loads(line)["nodeid"] for line in ran] == [
            "cases/upstream_medqa.jsonl::medqa-0001[unspecified-offline]"]
        if xdist != ["-n", "2"]:  # xdist's controller does not count its workers' deselections
            assert by_id.parseoutcomes()["deselected"] == 5


def test_broken_line_is_one_collection_error_and_the_rest_run(pytester: pytest.Pytester,
                                                              xdist: list[str]) -> None:
    bad = json.loads(osce_line(1))
    bad["OSCE_Examination"]["Objective_for_Doctor"] = ""
    path = pytester.path / "mixed.jsonl"
    path.write_text("\n".join([osce_line(0), json.dumps(bad), osce_line(2)]) + "\n")
    result = pytester.runpytest(str(path), "--agent-run-name=r", *xdist)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([
        f"bad case record: {path}:2: field 'OSCE_Examination.Objective_for_Doctor': "
        "missing or empty",
        "ERROR mixed.jsonl::line-2*",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # Counted once, also when every worker met it.
    summary = json.loads((pytester.path / "reports/r/summary.json").read_text())
    assert summary["bad_case_records"] == 1 and summary["items"] == 2


def test_failure_message_and_run_directory(pytester: pytest.Pytester, xdist: list[str]) -> None:
    wrong = make_case(2, choices=["Abc unrelated", "Condition2 disease"],
                      tests={"Skin Biopsy": "Unremarkable."})
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), wrong])
    result = pytester.runpytest("c.yaml", "--agent-run-name=r1", *xdist)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "misdiagnosis: Abc unrelated",
        "  expected:   Condition2 disease",
        "  why:        offline: * (16/20 turns, 8 tests)",
        "  transcript: reports/r1/transcripts/c__t-02_dermatology-offline-*.json (-v: *)",
        "*FAILED c.yaml::t-02[[]dermatology-offline[]] - misdiagnosis: Abc unrelated",
    ])
    run = pytester.path / "reports" / "r1"
    records = results(pytester.path)
    assert [r["outcome"] for r in records.values()] == ["correct", "incorrect"]
    (path,) = (run / "transcripts").glob("c__t-02_dermatology-offline-*.json")
    transcript = json.loads(path.read_text())
    assert transcript["version"] == 1 and transcript["outcome"] == "incorrect"
    kinds = [u["kind"] for u in transcript["utterances"]]
    assert kinds[-4:] == ["diagnosis", "judgement", "perception_request", "perception"]
    assert transcript["perception"] == {"confidence": 10, "compliance": 10, "consultation": 10}
    summary = json.loads((run / "summary.json").read_text())
    assert summary["roles"]["doctor"] == "offline" and summary["items"] == 2
    assert next(iter(summary["case_files"].values())) != "unreadable"


def test_header_and_summary_name_every_role(pytester: pytest.Pytester,
                                            xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-moderator=offline", *xdist)
    result.stdout.fnmatch_lines([
        "agentclinic: doctor=offline, patient=offline, measurement=offline, moderator=offline",
        "*agentclinic summary*",
        "roles: doctor=offline, patient=offline, measurement=offline, moderator=offline",
        "accuracy by doctor model:",
        "| doctor*|*n *|*correct *|*accuracy *|*95% CI*",
        "| offline*|*1 *|*1 *|*100.0% *|*",
    ])


def test_repeats_and_budgets_multiply_items(pytester: pytest.Pytester,
                                            xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-repeat=2", "--agent-turns=3,20",
                                "--collect-only", "-q", *xdist)
    result.stdout.fnmatch_lines(["c.yaml::t-01[[]dermatology-offline-t3-r0[]]",
                                 "c.yaml::t-01[[]dermatology-offline-t20-r1[]]",
                                 "4 tests collected*"])


@pytest.mark.parametrize("args", [[], ["tests"]], ids=["plain pytest", "a test folder"])
def test_an_unknown_agent_ini_key_is_a_usage_error_with_a_did_you_mean(
        pytester: pytest.Pytester, args: list[str], xdist: list[str]) -> None:
    """`agent_doctr = gpt-4o` ran the offline doctor with only a warning at the bottom."""
    pytester.makeini("[pytest]\nagent_doctr = gpt-4o\nagent_turns = 5\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    result = pytester.runpytest(*args, *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown ini option 'agent_doctr'; did you mean "
                                 "'agent_doctor'?*"])
    assert "agent_turns" not in result.stderr.str()  # a known key is not named


def test_ini_twins_and_cli_precedence(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.makeini("[pytest]\nagent_turns = 3\nagent_run_name = from-ini\n")
    pytester.runpytest("c.yaml", *xdist).assert_outcomes(passed=1)
    assert results(pytester.path)["c.yaml::t-01[dermatology-offline]"]["turn_budget"] == 3
    pytester.runpytest("c.yaml", "--agent-turns=5", "--agent-run-name=from-cli", *xdist)
    budgets = json.loads((pytester.path / "reports/from-cli/results.jsonl").read_text())
    assert budgets["turn_budget"] == 5


@pytest.mark.parametrize(("option", "message"), [
    ("--agent-cache=sometimes", "*--agent-cache: 'sometimes' is not one of: read-write, replay, "
                                "refresh, off*"),
    ("--agent-turns=0", "*--agent-turns: expected a whole number >= 1, got '0'*"),
    ("--agent-concurrency=many", "*--agent-concurrency: expected a whole number >= 1, got 'many'*"),
    # Typos are answered before litellm loads (issue 23: 27 s), schemes before any call.
    ("--agent-doctor=ofline", "ERROR: --agent-doctor: unknown model 'ofline'; did you mean "
                              "'offline'?*"),
    ("--agent-patient=opena/gpt-4o", "ERROR: --agent-patient: unknown provider 'opena' in "
                                     "'opena/gpt-4o'; did you mean 'openai'?*"),
    ("--agent-api-base=localhost:8000", "ERROR: --agent-api-base: expected an http:// or "
                                        "https:// URL*got 'localhost:8000'"),
])
def test_bad_option_values_are_usage_errors(pytester: pytest.Pytester, xdist: list[str],
                                            option: str, message: str) -> None:
    result = pytester.runpytest(option, *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_conftest_can_supply_an_agent(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    pytester.makeconftest("""
        from pytest_agentclinic.core.roles import Reply

        class Oracle:
            model = "oracle-for-case-1"
            prompt_version = "oracle-1"
            async def respond(self, view):
                return Reply("DIAGNOSIS READY: Condition1 disease")

        def pytest_agentclinic_make_agent(role, model, case, config):
            return Oracle() if role == "doctor" else None
    """)
    result = pytester.runpytest("c.yaml", *xdist)
    result.assert_outcomes(passed=1, failed=1)
    records = results(pytester.path)
    assert {r["models"]["doctor"] for r in records.values()} == {"oracle-for-case-1"}
    assert {r["turns_used"] for r in records.values()} == {1}


def test_same_aggregate_with_and_without_xdist(library: pytest.Pytester,
                                               xdist: list[str]) -> None:
    result = library.runpytest("cases", "-p", "xdist", *xdist)
    outcomes = {k: v["outcome"] for k, v in results(library.path).items()}
    assert len(outcomes) == 6
    result.assert_outcomes(passed=sum(v == "correct" for v in outcomes.values()),
                           failed=sum(v != "correct" for v in outcomes.values()))
    result.stdout.fnmatch_lines(["| offline*|*6 *|*"])
    # The baseline's own numbers on this library, with or without workers.
    assert sorted(outcomes.values()).count("correct") == 5


def _failure_blocks(lines: list[str]) -> list[list[str]]:
    """The lines of each item's block in pytest's FAILURES section (header included)."""
    start = lines.index(next(line for line in lines if " FAILURES " in line)) + 1
    blocks: list[list[str]] = []
    for line in lines[start:]:
        if line.startswith("=") or line.startswith("-- "):
            break
        if line.startswith("_"):
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def test_a_misdiagnosis_is_a_few_lines_and_the_dialogue_with_v(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    # Reproduction (issue 23): `pytest cases` printed ~380 lines of 7-line blocks.
    wrong = [make_case(i, choices=["Abc unrelated", f"Condition{i} disease"],
                       tests={"Skin Biopsy": "Unremarkable."}) for i in (1, 2)]
    write_yaml_cases(pytester.path / "c.yaml", wrong)
    result = pytester.runpytest("c.yaml", *xdist)
    result.assert_outcomes(failed=2)
    blocks = _failure_blocks(result.outlines)
    assert len(blocks) == 2 and all(len(block) <= 6 for block in blocks), blocks
    assert all(any("transcript: reports/" in line for line in b) for b in blocks)
    verbose = pytester.runpytest("c.yaml", "-v", "--agent-run-name=v", *xdist)
    (first, _) = _failure_blocks(verbose.outlines)
    assert len(first) > 10 and "  dialogue:" in first
    assert any(line.startswith("    doctor: ") for line in first)
    assert any(line.startswith("    patient: ") for line in first)


def test_one_version_in_the_cli_the_header_and_the_package_metadata(
        pytester: pytest.Pytester) -> None:
    import subprocess
    import sys
    from pathlib import Path

    import tomllib

    from pytest_agentclinic import __version__

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "pytest_agentclinic.__version__"}
    out = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"agentclinic {__version__}"
    result = pytester.runpytest("--collect-only")
    result.stdout.fnmatch_lines([f"agentclinic: pytest-agentclinic {__version__}"])


def test_the_readme_lists_every_subcommand() -> None:
    import re
    from pathlib import Path

    from pytest_agentclinic.cli import COMMANDS

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    listed = re.search(r"The `agentclinic` command: (.*?)\(each with", readme, re.S)
    assert listed is not None
    names = set(re.findall(r"`([a-z-]+)`", listed.group(1)))
    assert names == {c.replace("_", "-") for c in COMMANDS}
