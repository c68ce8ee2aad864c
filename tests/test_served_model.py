"""Local servers: which model a server actually serves is part of every record, the summary
and the cache key; the summary names the (redacted) api base and every sampling parameter."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.llm.served import identity_from_listing, redact_url
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, Script

Start = Callable[[Script], FakeOpenAIServer]


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _summary(root: Path, run: str) -> dict[str, object]:
    return dict(json.loads((root / "reports" / run / "summary.json").read_text()))


def test_another_model_behind_the_same_name_is_a_cache_miss(pytester: pytest.Pytester,
                                                           fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    server.models, server.fingerprint = ["qwen2.5-0.5b"], "fp-1"
    args = ["c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no"]
    pytester.runpytest(*args, "--agent-run-name=a").assert_outcomes(passed=1, failed=1)
    assert server.calls == 2
    served = {r["served"]["openai/fake-doctor"] for r in results(pytester.path).values()}
    assert served == {"qwen2.5-0.5b (fingerprint fp-1)"}
    summary = _summary(pytester.path, "a")
    assert summary["served_models"] == {"openai/fake-doctor": ["qwen2.5-0.5b (fingerprint fp-1)"]}
    assert summary["api_base"] == server.url
    assert summary["sampling"] == {"temperature": 0.7, "max_tokens": 512}

    pytester.runpytest(*args, "--agent-run-name=b").assert_outcomes(passed=1, failed=1)
    assert server.calls == 2  # same served model: every reply from the cache

    # The server now serves another model under the same name: nothing stale is replayed.
    server.models = ["llama-3.2-1b"]
    pytester.runpytest(*args, "--agent-run-name=c").assert_outcomes(passed=1, failed=1)
    assert server.calls == 4
    served = {r["served"]["openai/fake-doctor"] for r in results(pytester.path).values()}
    assert served == {"llama-3.2-1b (fingerprint fp-1)"}

    # A replay needs no server: it keys on the identity the recording run stored.
    dead = f"--agent-api-base=http://127.0.0.1:{_dead_port()}/v1"
    replay = pytester.runpytest(*args, dead, "--agent-cache=replay", "--agent-run-name=d")
    replay.assert_outcomes(passed=1, failed=1)
    assert server.calls == 4
    assert _summary(pytester.path, "d")["served_models"] == _summary(pytester.path,
                                                                     "c")["served_models"]


def test_a_server_without_a_model_listing_still_runs(pytester: pytest.Pytester,
                                                     fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    server.models = None
    pytester.runpytest("c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no",
                       "--agent-max-tokens=64").assert_outcomes(passed=1)
    (record,) = results(pytester.path).values()
    assert record["served"] == {}
    runs = sorted((pytester.path / "reports").iterdir())
    assert json.loads((runs[-1] / "summary.json").read_text())["sampling"] == {
        "temperature": 0.7, "max_tokens": 64}


def test_api_base_is_redacted() -> None:
    assert redact_url("http://user:secret@host:8000/v1?api_key=sk-1&x=2") == (
        "http://host:8000/v1?api_key=REDACTED&x=REDACTED")
    assert redact_url("https://api.example.com/v1") == "https://api.example.com/v1"
    assert redact_url(None) is None


def test_identity_from_a_model_listing() -> None:
    vllm = {"data": [{"id": "qwen", "root": "/models/Qwen2.5-0.5B-Instruct", "created": 1},
                     {"id": "qwen-lora", "root": "/models/Qwen2.5-0.5B-Instruct"}]}
    assert identity_from_listing(vllm, "hosted_vllm/qwen") == (
        "qwen (root /models/Qwen2.5-0.5B-Instruct)")
    # A name the server does not list (llama.cpp answers any name): all it serves.
    assert identity_from_listing({"data": [{"id": "b"}, {"id": "a"}]}, "openai/x") == "a; b"
    assert identity_from_listing({"data": []}, "openai/x") is None
    assert identity_from_listing(["not", "a", "listing"], "openai/x") is None
