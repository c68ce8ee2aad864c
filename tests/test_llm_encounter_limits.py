"""Per-encounter budgets (llm/encounter_limits.py): a call past the budget is refused and the
encounter ends as ``limit``, neither an error nor a misdiagnosis."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.llm.encounter_limits import EncounterBudget, EncounterLimitReached
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]


def _records(root: Path) -> list[dict[str, Any]]:
    (run,) = (root / "reports").iterdir()
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_the_budget_refuses_the_call_after_the_one_that_crossed_it() -> None:
    budget = EncounterBudget(max_tokens=100)
    budget.check()
    budget.charge(90, 0.0)
    budget.check()  # 90 <= 100: the next call may go
    budget.charge(30, 0.0)
    with pytest.raises(EncounterLimitReached, match="120 tokens"):
        budget.check()
    cost = EncounterBudget(max_cost_usd=0.01)
    cost.charge(0, 0.02)
    with pytest.raises(EncounterLimitReached, match=r"\$0.0200"):
        cost.check()


def _chatty_doctor(req: FakeRequest) -> FakeReply:
    """Never decides; every reply is 500 + 500 tokens."""
    del req
    return FakeReply("Tell me more about it?", prompt_tokens=500, completion_tokens=500)


def test_a_runaway_encounter_ends_as_limit(pytester: pytest.Pytester, fake_server: Start,
                                           xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in (1, 2)])
    server = fake_server(_chatty_doctor)
    result = pytester.runpytest(
        "c.yaml", "--agent-doctor=openai/fake-doctor", f"--agent-api-base={server.url}",
        "--agent-cache=off", "--agent-perception=no", "--agent-turns=20",
        "--agent-max-tokens-per-encounter=2500", "-p", "no:cacheprovider", *xdist)
    records = _records(pytester.path)
    assert [r["outcome"] for r in records] == ["limit", "limit"]
    for r in records:
        # Three calls (1,000 tokens each) crossed 2,500; the fourth was never sent.
        assert r["turns_used"] == 3 and r["usage"]["doctor"]["calls"] == 3
        assert "2,500" in r["error"]
    assert len(server.requests) == 6
    # Neither an error nor a misdiagnosis: a failed item whose message says limit.
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "limit: the encounter used 3,000 tokens" in out and "misdiagnosis" not in out
