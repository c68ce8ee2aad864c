"""plugin.executor and the item: the item reports from the Outcome the executor returns."""

from __future__ import annotations

import pytest
from helpers import make_case, write_yaml_cases

#: Replaces the executor's play with one returning made-up outcomes: no encounter is played,
#: nothing is written, and the items must report exactly what the outcomes say.
FAKE_EXECUTOR = """
from pytest_agentclinic.core.transcript import Transcript
from pytest_agentclinic.plugin.outcome import Outcome
from pytest_agentclinic.plugin.state import session_of

def fake_play(item, spec):
    case = spec.case
    header = session_of(item.config).protocol.header(spec).header()
    if case.id == "t-01":
        return Outcome(transcript=Transcript(**header, diagnosis="Made-up disease",
                                             outcome="incorrect"))
    if case.id == "t-02":
        return Outcome(unplayed="not played: made up")
    return Outcome(transcript=Transcript(**header, outcome="error"), failure="made-up failure")

def pytest_sessionstart(session):
    session_of(session.config).executor.play = fake_play
"""


def test_the_item_reports_what_the_returned_outcome_says(pytester: pytest.Pytester,
                                                         xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2), make_case(3)])
    pytester.makeconftest(FAKE_EXECUTOR)
    result = pytester.runpytest("c.yaml", "-rA", "--agent-run-name=fake", *xdist)
    result.assert_outcomes(failed=1, skipped=1, errors=1)
    result.stdout.fnmatch_lines_random([
        "misdiagnosis: Made-up disease", "SKIPPED*not played: made up",
        "made-up failure",
        "agentclinic: 1 item(s) not played, not judged (not played: made up)"])
    # The outcomes were made up: nothing played, nothing recorded.
    assert not list(pytester.path.glob("reports/fake/results*.jsonl")) or all(
        not p.read_text() for p in pytester.path.glob("reports/fake/results*.jsonl"))
