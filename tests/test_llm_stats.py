"""Usage and cost as a release manager reads them: what the server saw, counted once per
call and per role; cache hits apart (what the run cost, what it would cost uncached); a
reply billed and discarded counted and charged to the encounter's budget."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, results, write_yaml_cases
from test_protocols_craftmd import VIGNETTE, clinician

from pytest_agentclinic.llm.prices import cost_usd
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
#: A model the price table lists, so costs are not all zero.
PRICED = "openai/gpt-4o-mini"


def _by_model(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in records.values():
        for role, u in r["usage"].items():
            if u["calls"]:
                seen = out.setdefault(r["models"][role], {})
                for k in ("calls", "prompt_tokens", "completion_tokens", "cost_usd"):
                    seen[k] = seen.get(k, 0) + u[k]
    return out


def _served(server: FakeOpenAIServer) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for req in server.requests:
        model = "openai/" + str(req.body["model"])
        seen = out.setdefault(model, {})
        for k, v in (("calls", 1), ("prompt_tokens", 10), ("completion_tokens", 5),
                     ("cost_usd", cost_usd(model, 10, 5))):
            seen[k] = seen.get(k, 0) + v
    return out


def _same(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> None:
    assert a.keys() == b.keys()
    for model in a:
        assert {k: round(v, 9) for k, v in a[model].items()} == \
            {k: round(v, 9) for k, v in b[model].items()}, model


def test_craftmd_usage_is_what_the_server_saw_per_role(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    """The shared conversation is charged once, not to each of its 8 items."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i, vignette=VIGNETTE)
                                               for i in (1, 2)])
    server = fake_server(clinician)
    result = pytester.runpytest(
        "c.yaml", "--agent-protocol=craftmd", f"--agent-doctor={PRICED}",
        "--agent-patient=openai/fake-patient", "--agent-summarizer=openai/fake-summarizer",
        f"--agent-api-base={server.url}", "--agent-cache=off", "-p", "no:cacheprovider",
        *xdist)
    result.assert_outcomes(passed=8, failed=8)  # the script answers case 1's diagnosis
    _same(_by_model(results(pytester.path)), _served(server))


def test_cache_hits_cost_nothing_and_show_what_they_would_have_cost(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    args = ["c.yaml", f"--agent-doctor={PRICED}", f"--agent-api-base={server.url}",
            "-p", "no:cacheprovider", *xdist]
    pytester.runpytest(*args, "--agent-run-name=first").assert_outcomes(passed=1)
    pytester.runpytest(*args, "--agent-run-name=again").assert_outcomes(passed=1)
    assert server.calls == 1
    paid = cost_usd(PRICED, 10, 5)
    assert paid > 0

    def usage_row(run: str) -> dict[str, Any]:
        summary = json.loads((pytester.path / "reports" / run / "summary.json").read_text())
        table = next(t for t in summary["tables"] if t["title"] == "usage by role and model")
        return next(row for row in table["data"] if row["role"] == "doctor")

    first, again = usage_row("first"), usage_row("again")
    assert (first["cache_hits"], first["cost_usd"], first["uncached_cost_usd"]) == \
        (0, pytest.approx(paid), pytest.approx(paid))
    assert (again["cache_hits"], again["cost_usd"], again["uncached_cost_usd"]) == \
        (1, 0.0, pytest.approx(paid))


def test_a_billed_reply_that_is_discarded_is_counted_and_charged(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    """A 200 with no content is asked again; the provider billed it all the same."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])

    nulls: list[int] = []

    def script(req: FakeRequest) -> FakeReply:
        # Each run: the first question comes back billed and empty once, then asked again.
        if req.doctor_turn == 0 and len(nulls) * 2 <= req.index:
            nulls.append(req.index)
            return FakeReply(fault="null_content", prompt_tokens=4000, completion_tokens=1000)
        if req.doctor_turn == 0:
            return FakeReply("How long have you had the rash?")
        return FakeReply("DIAGNOSIS READY: Condition1 disease")

    server = fake_server(script)
    base = ["c.yaml", f"--agent-doctor={PRICED}", f"--agent-api-base={server.url}",
            "--agent-backoff=0.01", "--agent-cache=off", "-p", "no:cacheprovider", *xdist]
    pytester.runpytest(*base).assert_outcomes(passed=1)
    assert server.calls == 3
    doctor = next(iter(results(pytester.path).values()))["usage"]["doctor"]
    assert (doctor["prompt_tokens"], doctor["completion_tokens"]) == (4020, 1010)
    assert doctor["cost_usd"] == pytest.approx(cost_usd(PRICED, 4020, 1010))
    # The budget counts it too: 5,000 tokens billed pass a 1,000-token budget.
    (pytester.path / "reports").rename(pytester.path / "first")
    limited = pytester.runpytest(*base, "--agent-max-tokens-per-encounter=1000")
    limited.assert_outcomes(failed=1)
    limited.stdout.fnmatch_lines(["*--agent-max-tokens-per-encounter*"])


def test_the_cost_cap_states_its_overshoot(pytester: pytest.Pytester) -> None:
    help_text = " ".join(pytester.runpytest("--help").stdout.str().split())
    assert "may overshoot by up to --agent-concurrency encounters per worker" in help_text
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `--agent-max-cost USD`"))
    assert "overshoot" in row


def test_each_models_prices_are_the_whole_tables_and_no_table_is_kept() -> None:
    """A model's two prices are read from its own entry of litellm's table, the same as the
    table decoded whole gives, for every model it lists (and by the name without its
    provider's prefix); the whole table is never held (~4.6 MB in every worker)."""
    import gc
    import importlib.util
    from pathlib import Path

    from pytest_agentclinic.llm import prices

    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    listed = [m for m, e in table.items() if isinstance(e, dict)
              and ("input_cost_per_token" in e or "output_cost_per_token" in e)]
    assert len(listed) > 500
    for model in [*listed[::40], "openai/" + listed[0], "no-such/model"]:
        entry = table.get(model) or table.get(model.split("/", 1)[-1]) or {}
        want = (float(entry.get("input_cost_per_token", 0.0)),
                float(entry.get("output_cost_per_token", 0.0)))
        assert (prices.cost_usd(model, 1, 0), prices.cost_usd(model, 0, 1)) == want, model
    assert prices.cost_usd("no-such/model", 10, 5) == 0.0
    del table, entry
    gc.collect()
    # no dict as large as the table (its thousands of models) is alive after the lookups
    assert not [o for o in gc.get_objects() if isinstance(o, dict) and len(o) > 1000
                and "sample_spec" in o]
