"""``--agent-grading-policy`` (ini ``agent_grading_policy``): which broader rule grades a run.

Under ``strict`` (the default) a broader answer counts only when it names one disease with its
variants; under ``paper`` a broader name the truth is a subtype of counts (one level up even a
family), as CRAFT-MD's grader prompt says
(docs/grading.md). "Lymphoma" for Hodgkin lymphoma is a family (27 concepts below it in its
source): 0 under strict, 1 under paper, in both protocols, and summary.json says which rule
graded the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import each_mode_once, make_case, write_yaml_cases

CONFTEST = """
from pytest_agentclinic.core.roles import Reply


class Doctor:
    model = "broader"
    prompt_version = "broader-1"

    async def respond(self, view):
        return Reply("DIAGNOSIS READY: Lymphoma")

    async def final(self, case, context, options, sample):
        return Reply("Final Diagnosis: Lymphoma")


def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
"""

PROTOCOLS = {"agentclinic": ["--agent-turns=1", "--agent-perception=no"],
             "craftmd": ["--agent-protocol=craftmd", "--agent-experiment=vignette",
                         "--agent-answer=frq"]}


def _project(pytester: pytest.Pytester) -> None:
    case = make_case(1, "Hematology", diagnosis="Hodgkin lymphoma", synonyms=[],
                     choices=["Hodgkin lymphoma", "Infectious mononucleosis", "Sarcoidosis",
                              "Tuberculosis"],
                     vignette="A 24-year-old man with painless cervical lymphadenopathy.")
    cases = pytester.mkdir("cases")
    write_yaml_cases(cases / "c.yaml", [case])
    (cases / "conftest.py").write_text(CONFTEST)


def _run(pytester: pytest.Pytester, name: str, *args: str) -> tuple[list[dict[str, Any]],
                                                                    dict[str, Any]]:
    pytester.runpytest("cases", f"--agent-run-name={name}", "-p", "no:cacheprovider", "-q",
                       *args)
    run = Path(pytester.path) / "reports" / name
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return records, json.loads((run / "summary.json").read_text())


# The policy does not change with the worker mode: each protocol runs in one mode, each
# mode with one protocol.
@pytest.mark.parametrize(("xdist", "protocol"), each_mode_once(*sorted(PROTOCOLS)),
                         indirect=["xdist"])
def test_a_family_above_the_truth_scores_under_paper_only(
        pytester: pytest.Pytester, xdist: list[str], protocol: str) -> None:
    _project(pytester)
    strict, strict_summary = _run(pytester, "strict", *PROTOCOLS[protocol], *xdist)
    assert [(r["given"], r["outcome"]) for r in strict] == [("Lymphoma", "incorrect")]
    assert strict_summary["grading_policy"] == "strict"
    paper, paper_summary = _run(pytester, "paper", *PROTOCOLS[protocol],
                                "--agent-grading-policy=paper", *xdist)
    assert [(r["given"], r["outcome"]) for r in paper] == [("Lymphoma", "correct")]
    assert paper_summary["grading_policy"] == "paper"
    assert "- grading policy: paper" in (
        Path(pytester.path) / "reports" / "paper" / "summary.md").read_text()


def test_the_ini_twin_and_a_bad_value(pytester: pytest.Pytester, xdist: list[str]) -> None:
    _project(pytester)
    pytester.makeini("[pytest]\nagent_grading_policy = paper\n")
    records, summary = _run(pytester, "ini", *PROTOCOLS["agentclinic"], *xdist)
    assert [r["outcome"] for r in records] == ["correct"]
    assert summary["grading_policy"] == "paper"
    bad = pytester.runpytest("cases", "--agent-grading-policy=lenient", *xdist)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--agent-grading-policy: 'lenient' is not one of: strict, paper*"])
