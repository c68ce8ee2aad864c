"""The litellm path, end to end, against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]


@pytest.fixture(params=["auto", "litellm"], ids=["aiohttp", "litellm"])
def transport(request: pytest.FixtureRequest) -> str:
    """The tests asking for it run through both transports: the aiohttp fast path (what
    ``auto`` picks for ``openai/`` models with an api base) and litellm."""
    return str(request.param)


def clinic(other: str = "Condition1 disease") -> Script:
    """Every role answers its part; the doctor asks, orders one test, then concludes
    "Condition1 disease" for case t-01 and ``other`` for every other case."""

    def script(req: FakeRequest) -> FakeReply:
        if req.role == "doctor":
            diagnosis = "Condition1 disease" if "complaint 1." in req.system else other
            steps = ["Where does it itch?", "REQUEST TEST: Skin biopsy",
                     f"DIAGNOSIS READY: {diagnosis}"]
            return FakeReply(steps[min(req.doctor_turn, 2)])
        if req.role == "patient" and "Now rate this doctor" in req.last_user:
            return FakeReply("Confidence: 8\nCompliance: 9/10\nConsultation: 12 (!)")
        if req.role == "patient":
            return FakeReply("On my elbows, doctor.")
        if req.role == "measurement":
            return FakeReply("RESULTS: Skin biopsy: typical of condition1")
        # The moderator: a different made-up condition is not the truth.
        return FakeReply("No" if "Condition1" in req.last_user else "Yes")

    return script


def test_whole_encounter_with_all_four_roles_as_llms(pytester: pytest.Pytester,
                                                     fake_server: Start, transport: str) -> None:
    undecided = make_case(2, diagnosis="Tuberculous meningitis", synonyms=[])
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), undecided])
    server = fake_server(clinic("meningitis of bacterial origin"))
    pytester.runpytest("c.yaml", *llm_args(server, transport=transport)
                       ).assert_outcomes(passed=2)
    roles = [r.role for r in server.requests]
    # 3 doctor + 1 patient + 1 measurement calls per case, and the patient's ratings at the
    # end; the moderator model is asked only for case 2, which the rules cannot decide.
    assert roles.count("doctor") == 6 and roles.count("patient") == 4
    assert roles.count("measurement") == 2 and roles.count("moderator") == 1
    first = next(r for r in server.requests if r.role == "doctor")
    assert "complaint 1" in first.system and "[Interactions left: 20]" in first.last_user
    last = [r for r in server.requests if r.role == "doctor"][-1]
    assert "[Interactions left: 18]" in last.last_user
    assert "RESULTS: Skin biopsy" in last.last_user
    assert all(r.body["max_tokens"] == 512 and r.body["temperature"] == 0.7
               for r in server.requests)
    records = results(pytester.path)
    decided = {r["case_id"]: r["decided_by"] for r in records.values()}
    assert decided == {"t-01": "offline", "t-02": "openai/fake-moderator"}
    # The record names the moderator configured, whoever decided.
    assert {r["models"]["moderator"] for r in records.values()} == {"openai/fake-moderator"}
    assert all(r["usage"]["doctor"]["prompt_tokens"] == 30 for r in records.values())
    # Ratings are read only where labelled and within 1-10: 12 is recorded as missing.
    assert {str(r["perception"]) for r in records.values()} == {
        "{'confidence': 8, 'compliance': 9, 'consultation': None}"}


def test_last_interaction_carries_the_warning(pytester: pytest.Pytester,
                                              fake_server: Start, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("Anything else?") if req.role == "doctor"
                         else FakeReply("No."))
    result = pytester.runpytest("c.yaml", "--agent-turns=2",
                                *llm_args(server, ("doctor",), transport=transport))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["no diagnosis", "  expected:   *",
                                 "  why:        no final answer given (2/2 turns, 0 tests)"])
    assert "This is your last interaction" in server.requests[-1].last_user
    assert "This is your last interaction" not in server.requests[0].last_user


def fail_then(status: int, times: int, headers: dict[str, str] | None = None) -> Script:
    def script(req: FakeRequest) -> FakeReply:
        if req.index < times:
            return FakeReply("try later", status=status, headers=headers or {})
        return FakeReply("DIAGNOSIS READY: Condition1 disease")

    return script


@pytest.mark.parametrize("status", [429, 500])
def test_transient_errors_are_retried(pytester: pytest.Pytester, fake_server: Start,
                                      status: int, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(fail_then(status, 2))
    doctor = llm_args(server, ("doctor",), transport=transport)
    pytester.runpytest("c.yaml", *doctor).assert_outcomes(passed=1)
    assert server.calls == 3


def test_exhausted_retries_are_an_error_not_a_failure(pytester: pytest.Pytester,
                                                      fake_server: Start, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(fail_then(503, 99))
    result = pytester.runpytest("c.yaml", "--agent-retries=2",
                                *llm_args(server, ("doctor",), transport=transport))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*gave up after 3 attempts*"])
    assert server.calls == 3
    (record,) = results(pytester.path).values()
    assert record["outcome"] == "error" and record["given"] is None


def test_retry_after_is_honoured_up_to_the_cap(pytester: pytest.Pytester,
                                               fake_server: Start, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    honoured = fake_server(fail_then(429, 1, {"Retry-After": "0.4"}))
    doctor = llm_args(honoured, ("doctor",), transport=transport)
    pytester.runpytest("c.yaml", *doctor).assert_outcomes(passed=1)
    gap = honoured.requests[1].received_at - honoured.requests[0].received_at
    assert gap >= 0.4  # waited at least what was asked (no upper bound: a busy machine)
    capped = fake_server(fail_then(429, 1, {"Retry-After": "3600"}))
    pytester.runpytest("c.yaml", "--agent-retry-after-cap=0.3", "--agent-cache=off",
                       *llm_args(capped, ("doctor",), transport=transport)
                       ).assert_outcomes(passed=1)
    gap = capped.requests[1].received_at - capped.requests[0].received_at
    # The cap, not the hour asked for (the test would hang); the bound only tells them apart.
    assert 0.3 <= gap < 600


@pytest.mark.parametrize("concurrency", ["1", "16"])
def test_unauthorised_stops_the_session_at_the_first_error(
        pytester: pytest.Pytester, fake_server: Start, concurrency: str, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 6)])
    server = fake_server(lambda req: FakeReply("invalid api key", status=401))
    result = pytester.runpytest("c.yaml", f"--agent-concurrency={concurrency}",
                                *llm_args(server, ("doctor",), transport=transport))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*fatal model error, stopping the session: openai/fake-doctor: not authorised (401)*"])
    # One error for five collected items: the session stopped (pytest's "interrupted" exit).
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert server.calls <= int(concurrency)  # no retries, nothing after the first failure


def test_unknown_model_is_fatal_without_network(pytester: pytest.Pytester,
                                                fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    result = pytester.runpytest("c.yaml", "--agent-doctor=nosuchprovider-model-x")
    # Rejected at startup, before litellm loads (issue 23), not as an item error.
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown model 'nosuchprovider-model-x'*"])


def test_missing_api_key_is_fatal(pytester: pytest.Pytester, fake_server: Start,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A hosted provider (no --agent-api-base): the key is needed; nothing is sent.
    monkeypatch.delenv("OPENAI_API_KEY")
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 4)])
    result = pytester.runpytest("c.yaml", "--agent-concurrency=1", "-p", "no:cacheprovider",
                                "--agent-doctor=openai/fake-doctor")
    # One line at startup naming the variable (issue 23), before any item runs.
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*openai/fake-doctor: no API key: set OPENAI_API_KEY*"])


def test_a_local_server_needs_no_dummy_key(pytester: pytest.Pytester, fake_server: Start,
                                           monkeypatch: pytest.MonkeyPatch,
                                           transport: str) -> None:
    # Reproduction: with --agent-api-base and no key, every call failed with "no API key"
    # unless a dummy key was exported.
    monkeypatch.delenv("OPENAI_API_KEY")
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 4)])
    server = fake_server(clinic())
    result = pytester.runpytest("c.yaml", *llm_args(server, ("doctor",), transport=transport))
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([f"agentclinic: api base {server.url}; no OPENAI_API_KEY in "
                                 "the environment: a placeholder key is sent (local servers "
                                 "need none)"])
    assert {r.headers.get("Authorization") for r in server.requests} == {
        "Bearer sk-no-key-needed"}


def test_unreachable_api_base_is_fatal(pytester: pytest.Pytester, fake_server: Start,
                                    transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    result = pytester.runpytest("c.yaml", "--agent-doctor=openai/x",
                                "--agent-api-base=http://127.0.0.1:9/v1",
                                f"--agent-transport={transport}")
    # Checked once at startup (issue 23): a usage error, no item runs.
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-api-base: cannot reach http://127.0.0.1:9/v1*"])


def test_timeout_is_an_error_outcome(pytester: pytest.Pytester, fake_server: Start,
                                    transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("late", delay=1.5))
    result = pytester.runpytest("c.yaml", "--agent-timeout=0.3", "--agent-retries=1",
                                *llm_args(server, ("doctor",), transport=transport))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*timeout calling openai/fake-doctor*deadline*(gave up after 2 attempts)*"])
    assert server.calls == 2


def test_replay_makes_no_http_calls_and_gives_identical_verdicts(
        pytester: pytest.Pytester, fake_server: Start, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    server = fake_server(clinic())
    pytester.runpytest("c.yaml", "--agent-run-name=first", *llm_args(server, transport=transport))
    calls = server.calls
    # 6 calls per case, and the moderator asked about case 2's answer (a name the
    # terminology does not know, so the rules cannot be sure it is wrong).
    assert calls == 13
    replay = pytester.runpytest("c.yaml", "--agent-run-name=second", "--agent-cache=replay",
                                *llm_args(server, transport=transport))
    assert server.calls == calls
    replay.assert_outcomes(passed=1, failed=1)

    def verdicts(run: str) -> list[tuple[str, str, str | None]]:
        lines = (pytester.path / "reports" / run / "results.jsonl").read_text().splitlines()
        import json
        return [(r["nodeid"], r["outcome"], r["given"]) for r in map(json.loads, lines)]

    assert verdicts("first") == verdicts("second")
    replay.stdout.fnmatch_lines(["| openai/fake-doctor*|*13/13*"])


def test_replay_miss_is_an_error_listing_the_key(pytester: pytest.Pytester,
                                                 fake_server: Start, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(clinic())
    result = pytester.runpytest("c.yaml", "--agent-cache=replay",
                                *llm_args(server, ("doctor",), transport=transport))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ReplayMissError: cache miss in replay mode; the key's parts:",
                                 "  model: 'openai/fake-doctor'", "  role: 'doctor'",
                                 "  case_id: 't-01'", "  sample: 0", "*prompt_version*"])
    assert server.calls == 0


def test_errors_are_never_cached(pytester: pytest.Pytester, fake_server: Start,
                                    transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    broken = fake_server(fail_then(500, 99))
    pytester.runpytest("c.yaml", "--agent-retries=0",
                       *llm_args(broken, ("doctor",), transport=transport))
    healthy = fake_server(clinic())
    result = pytester.runpytest("c.yaml", *llm_args(healthy, ("doctor",), transport=transport))
    result.assert_outcomes(passed=1)
    assert healthy.calls == 3


def test_llm_run_under_xdist_matches_the_single_process_run(pytester: pytest.Pytester,
                                                            fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    server = fake_server(clinic())
    pytester.runpytest("c.yaml", "--agent-run-name=one", "--agent-cache=off",
                       *llm_args(server))
    single = server.calls
    result = pytester.runpytest("c.yaml", "-n", "2", "--agent-run-name=two", "--agent-cache=off",
                                *llm_args(server))
    result.assert_outcomes(passed=1, failed=3)
    assert server.calls == 2 * single
    one = (pytester.path / "reports/one/results.jsonl").read_text().count('"outcome":"correct"')
    two = (pytester.path / "reports/two/results.jsonl").read_text().count('"outcome":"correct"')
    assert one == two == 1
