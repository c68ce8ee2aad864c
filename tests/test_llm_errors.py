"""Deadlines (a call, an encounter), secrets kept out of every artefact, and the errors that
must stop a session once instead of failing every item."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import llm_args, make_case, write_yaml_cases

from pytest_agentclinic.core.redact import redact
from pytest_agentclinic.llm import client
from pytest_agentclinic.llm.errors import FatalLLMError, RequestError, TransientError
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
NO_CACHE = ("-p", "no:cacheprovider")


def _doctor_right(req: FakeRequest) -> FakeReply:
    if req.role == "doctor":
        return FakeReply("DIAGNOSIS READY: Condition1 disease")
    return FakeReply("Confidence: 8\nCompliance: 9\nConsultation: 7")


# ------------------------------------------------------------------ call deadlines


def test_a_trickling_body_cannot_hold_a_call_past_its_deadline(
        pytester: pytest.Pytester, fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    # A valid body, one byte every 0.25 s: ~80 s to send in full.
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease",
                                               fault="trickle", trickle=0.25))
    # No wall-clock bound (issue 23): the body takes ~80 s, so only the deadline can make
    # the item an error naming it.
    result = pytester.runpytest("c.yaml", "--agent-timeout=1", "--agent-retries=0",
                                *llm_args(server, ("doctor",)))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*timeout calling openai/fake-doctor*1 s deadline*"])


def test_a_stalled_first_call_is_a_timeout_and_never_cached(
        pytester: pytest.Pytester, fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    stalled = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease",
                                                delay=3))
    args = ("c.yaml", "--agent-timeout=1", "--agent-retries=0", "--agent-perception=no")
    pytester.runpytest(*args, *llm_args(stalled, ("doctor",))).assert_outcomes(errors=1)
    healthy = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    pytester.runpytest(*args, *llm_args(healthy, ("doctor",))).assert_outcomes(passed=1)
    assert healthy.calls == 1  # the late answer was not kept


def test_a_custom_agent_that_never_returns_ends_as_an_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
import asyncio

class Stuck:
    model, prompt_version = "stuck-doctor", "1"
    async def respond(self, view):
        await asyncio.Event().wait()

def pytest_agentclinic_make_agent(role, model, case, config):
    return Stuck() if role == "doctor" and case.id == "t-01" else None
''')
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    # The agent never returns: only the encounter deadline ends the run (no wall-clock bound).
    result = pytester.runpytest("c.yaml", "--agent-encounter-timeout=1", *NO_CACHE)
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(["encounter timeout: not finished within 1 s "
                                 "(--agent-encounter-timeout), in turn 1: doctor"])


def test_an_agent_blocking_the_event_loop_stops_the_session(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
import asyncio
import time

from pytest_agentclinic.api import Reply

class Blocking:
    model, prompt_version = "blocking-doctor", "1"
    blocked = False
    async def respond(self, view):
        if not Blocking.blocked:
            Blocking.blocked = True
            time.sleep(3)  # synchronous: no deadline on the loop can fire meanwhile
        await asyncio.sleep(0)
        return Reply("Any fever?")

def pytest_agentclinic_make_agent(role, model, case, config):
    return Blocking() if role == "doctor" and case.id == "t-01" else None
''')
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    result = pytester.runpytest("c.yaml", "--agent-encounter-timeout=1", *NO_CACHE)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*an encounter blocked the event loop past "
                                 "--agent-encounter-timeout (1 s), in respond (conftest.py:*"
                                 "a custom agent or plugin calling blocking code?*"])


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_bad_encounter_timeout_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    result = pytester.runpytest(f"--agent-encounter-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-encounter-timeout: expected*"])


# ------------------------------------------------------------------ secrets


def test_redact_masks_every_credential_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk_livevalue_123456")
    text = ("http://user:hunter22@host/v1 Authorization: Bearer abc.def-123456 "
            "Incorrect API key provided: sk-proj-AbCdEf123456 key gsk_livevalue_123456 "
            "authorization: Basic dXNlcjpwYXNz basic metabolic panel, token limit")
    clean = redact(text)
    for secret in ("hunter22", "abc.def-123456", "AbCdEf123456", "gsk_livevalue_123456",
                   "dXNlcjpwYXNz"):
        assert secret not in clean
    # Clinical text that merely looks alike stays.
    assert "basic metabolic panel, token limit" in clean


def test_no_secret_reaches_any_artefact(pytester: pytest.Pytester, fake_server: Start,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-live-SECRETVALUE123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def echoing(req: FakeRequest) -> FakeReply:
        if req.role == "doctor" and "complaint 2." in req.system:
            # A provider that echoes the key in its error body.
            return FakeReply(f"Incorrect API key provided: {key}", status=400)
        if req.role == "doctor":
            # A model that repeats a header it saw.
            return FakeReply(f"Authorization: Bearer {key}\nDIAGNOSIS READY: Condition1 "
                             "disease")
        return FakeReply("Confidence: 8\nCompliance: 9\nConsultation: 7")

    server = fake_server(echoing)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    result = pytester.runpytest("c.yaml", "--agent-run-name=r", "--junitxml=junit.xml",
                                "--agent-retries=0", *llm_args(server, ("doctor", "patient")))
    result.assert_outcomes(passed=1, errors=1)
    artefacts = [p for p in (pytester.path / "reports").rglob("*") if p.is_file()]
    artefacts.append(pytester.path / "junit.xml")
    assert {p.name for p in artefacts} >= {"results.jsonl", "summary.json", "summary.md",
                                           "report.html", "junit.xml"}
    assert len(list((pytester.path / "reports" / "r" / "transcripts").iterdir())) == 2
    leaks = [p for p in artefacts if "SECRETVALUE" in p.read_text(errors="replace")]
    output = result.stdout.str() + result.stderr.str()
    assert not leaks and "SECRETVALUE" not in output
    assert "sk-***" in output or "***" in output


def test_credentials_in_the_api_base_are_a_usage_error_never_echoed(
        pytester: pytest.Pytester) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-doctor=openai/x",
                                "--agent-api-base=http://user:PASSW0RD@127.0.0.1:9/v1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--agent-api-base: credentials in the URL" in err and "PASSW0RD" not in err


# ------------------------------------------------------------------ errors that stop a session


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# litellm's ollama module declares TypedDicts pydantic warns about on import.
@pytest.mark.filterwarnings("ignore:Items? .* using the `ReadOnly` qualifier")
@pytest.mark.parametrize("prefix", ["openai", "hosted_vllm", "ollama", "ollama_chat",
                                    "lm_studio"])
def test_connection_refused_is_fatal_for_every_provider_prefix(prefix: str,
                                                               warm_litellm: None) -> None:
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(FatalLLMError, match=r"cannot reach http://127\.0\.0\.1"):
        asyncio.run(client.acomplete(f"{prefix}/m", [{"role": "user", "content": "hi"}],
                                     api_base=base, timeout=5, params={"api_key": "sk-x1"}))


def test_unknown_host_is_fatal(warm_litellm: None) -> None:
    with pytest.raises(FatalLLMError, match="cannot reach"):
        asyncio.run(client.acomplete("hosted_vllm/m", [{"role": "user", "content": "hi"}],
                                     api_base="http://no-such-host.invalid/v1", timeout=5,
                                     params={"api_key": "sk-x1"}))


def test_unreachable_hosted_vllm_stops_the_session_once(pytester: pytest.Pytester,
                                                        warm_litellm: None) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(4)])
    result = pytester.runpytest("c.yaml", "--agent-doctor=hosted_vllm/m",
                                f"--agent-api-base=http://127.0.0.1:{_closed_port()}/v1",
                                "--agent-concurrency=1", *NO_CACHE)
    # Checked once before any item (issue 23): one line, no item run.
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("cannot reach http://127.0.0.1:") == 1


def test_a_client_side_configuration_error_is_not_retried(fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply("hi"))
    with pytest.raises(FatalLLMError, match="client-side configuration error"):
        asyncio.run(client.acomplete("openai/m", [{"role": "user", "content": "hi"}],
                                     api_base=server.url, timeout=5,
                                     params={"extra_headers": {"Content-Length": "abc"}}))
    assert server.calls == 0


def test_a_lost_connection_mid_reply_is_transient(fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply("hi", fault="truncated"))
    with pytest.raises(TransientError, match="connection lost mid-reply"):
        asyncio.run(client.acomplete("openai/m", [{"role": "user", "content": "hi"}],
                                     api_base=server.url, timeout=5, params={}))


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
@pytest.mark.parametrize("prefix", ["openai", "hosted_vllm"])
def test_a_reply_litellm_cannot_read_is_the_servers_fault(prefix: str,
                                                          fake_server: Start) -> None:
    # litellm raises a TypeError reading it: not to be taken for a client-side error.
    server = fake_server(lambda req: FakeReply("hi", fault="bad_usage"))
    with pytest.raises(TransientError):
        asyncio.run(client.acomplete(f"{prefix}/m", [{"role": "user", "content": "hi"}],
                                     api_base=server.url, timeout=5, params={}))


def test_the_fast_path_reads_a_bad_usage_block_as_the_servers_fault(fake_server: Start) -> None:
    # It raised a bare AttributeError: never retried, and the item's error named no model.
    from pytest_agentclinic.llm.openai_http import OpenAIHTTP

    server = fake_server(lambda req: FakeReply("hi", fault="bad_usage"))

    async def call() -> None:
        fast = OpenAIHTTP(4)
        try:
            await fast.acomplete("openai/m", [{"role": "user", "content": "hi"}],
                                 api_base=server.url, timeout=5, params={})
        finally:
            await fast.aclose()

    with pytest.raises(TransientError, match="bad response from openai/m: unreadable usage"):
        asyncio.run(call())


def test_a_reply_cut_by_the_token_limit_is_an_error_not_a_diagnosis(
        pytester: pytest.Pytester, fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Cond", finish_reason="length"))
    with pytest.raises(RequestError, match="finish_reason=length"):
        asyncio.run(client.acomplete("openai/m", [{"role": "user", "content": "hi"}],
                                     api_base=server.url, timeout=5,
                                     params={"max_tokens": 5}))
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", *llm_args(server, ("doctor",)))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*reply cut by the token limit*raise --agent-max-tokens*"])


def test_a_failed_perception_call_keeps_the_verdict(pytester: pytest.Pytester,
                                                    fake_server: Start) -> None:
    def script(req: FakeRequest) -> FakeReply:
        if req.role == "doctor":
            return FakeReply("DIAGNOSIS READY: Condition1 disease")
        return FakeReply("no", status=400)  # the patient's ratings call fails

    server = fake_server(script)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-run-name=r",
                                *llm_args(server, ("doctor", "patient")))
    result.assert_outcomes(passed=1)
    (line,) = (pytester.path / "reports" / "r" / "results.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["outcome"] == "correct" and record["perception"] is None


def test_a_damaged_cache_stops_the_session_once(pytester: pytest.Pytester,
                                                fake_server: Start) -> None:
    server = fake_server(_doctor_right)
    cache = pytester.mkdir("cache")
    (cache / "cache.db").write_bytes(b"this is not a database" * 100)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(4)])
    result = pytester.runpytest("c.yaml", "--agent-cache-dir=cache", "--agent-concurrency=1",
                                *llm_args(server, ("doctor",)))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the response cache *cache cannot be used*--agent-cache=off*"])
    assert server.calls == 0


def test_a_missing_key_under_xdist_prints_one_fatal_block(pytester: pytest.Pytester,
                                                          warm_litellm: None,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    # A hosted provider (no api base: a local server would get a placeholder key instead).
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(6)])
    result = pytester.runpytest("c.yaml", "-n", "2", "--agent-doctor=openai/x", *NO_CACHE)
    out = result.stdout.str() + result.stderr.str()
    # Checked in the controller before the workers start (issue 23): one line.
    assert out.count("no API key") == 1 and "never awaited" not in out, out
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_redacted_text_is_stable(tmp_path: Path) -> None:
    # Redaction is idempotent: records re-rendered by `agentclinic report` stay the same.
    text = "Bearer sk-abcdefghijk http://u:p@h/v1"
    assert redact(redact(text)) == redact(text)


def test_reply_text_is_checked_alike_for_every_transport() -> None:
    from pytest_agentclinic.llm.errors import reply_text

    def check(text: object, finish: object = "stop", max_bytes: int | None = None) -> str:
        return reply_text("m", text, finish, max_tokens=7, max_bytes=max_bytes,
                          billed=lambda: (3, 0, 0.5))

    assert check("Final diagnosis: gout") == "Final diagnosis: gout"
    for blank in (None, "", "  \n", 42):
        with pytest.raises(TransientError, match="empty message") as empty:
            check(blank)
        assert empty.value.billed == (3, 0, 0.5)
    with pytest.raises(RequestError, match=r"cut by the token limit .*7 tokens"):
        check("DIAGNOSIS READY: R", "length")
    with pytest.raises(RequestError, match="a reply of 12 bytes, over"):
        check("é" * 6, max_bytes=11)
    assert check("é" * 6, max_bytes=12) == "é" * 6
    assert check("x" * 100) == "x" * 100  # no cap: the transport capped its read
