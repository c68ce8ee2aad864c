"""Local servers: which model a server actually serves is part of every record, the summary
and the cache key; the summary names the (redacted) api base and every sampling parameter."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.llm.served import (
    UNKNOWN,
    identity_from_listing,
    identity_from_props,
    probe,
    redact_url,
)
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
    assert record["served"] == {"openai/fake-doctor": UNKNOWN}
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


def _llama_cpp(server: FakeOpenAIServer, gguf: str) -> None:
    """``server`` as llama.cpp's: its listing names the alias only, ``/props`` the file."""
    server.models = ["smollm2"]
    server.props = {"model_path": f"/models/{gguf}", "build_info": "b4500-abc123",
                    "chat_template": "{{ messages }}", "total_slots": 1}


def test_a_gguf_swapped_behind_one_alias_is_a_cache_miss(pytester: pytest.Pytester,
                                                         fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    _llama_cpp(server, "SmolLM2-135M-Q4_1.gguf")
    args = ["c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no"]
    pytester.runpytest(*args, "--agent-run-name=a").assert_outcomes(passed=1)
    (record,) = results(pytester.path).values()
    assert "/models/SmolLM2-135M-Q4_1.gguf" in record["served"]["openai/fake-doctor"]
    assert "b4500-abc123" in record["served"]["openai/fake-doctor"]
    pytester.runpytest(*args, "--agent-run-name=b").assert_outcomes(passed=1)
    assert server.calls == 1  # the same file: every reply from the cache
    # Another GGUF under the same alias (the listing is unchanged): asked again.
    _llama_cpp(server, "SmolLM2-360M-Q8_0.gguf")
    pytester.runpytest(*args, "--agent-run-name=c").assert_outcomes(passed=1)
    assert server.calls == 2
    # The listing's ``meta`` (the file's size, parameters) alone tells a swap too.
    server.props, server.meta = None, {"n_params": 134515008, "size": 91000000}
    pytester.runpytest(*args, "--agent-run-name=d").assert_outcomes(passed=1)
    server.meta = {"n_params": 361821120, "size": 386000000}
    pytester.runpytest(*args, "--agent-run-name=e").assert_outcomes(passed=1)
    assert server.calls == 4


def test_a_busy_single_slot_server_is_asked_again(fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply())
    _llama_cpp(server, "a.gguf")
    server.busy, server.busy_delay = 3, 0.0  # 503 "busy" three times
    identity = asyncio.run(probe(server.url, "openai/smollm2", backoff=0.0))
    template = identity_from_props({"chat_template": "{{ messages }}"})
    assert template is not None
    assert identity == f"smollm2 | model /models/a.gguf, build b4500-abc123, {template}"
    assert server.probes == 5  # 3 refused, then both endpoints answered
    # Slower than the probe's timeout once: the next try answers.
    server.busy, server.busy_delay = 2, 5.0
    slow = asyncio.run(probe(server.url, "openai/smollm2", timeout=1.0, backoff=0.0))
    assert slow == identity


def test_an_unknown_identity_is_said_and_keys_the_same_every_run(
        pytester: pytest.Pytester, fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    server.models = None  # no listing, no /props
    args = ["c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no"]
    first = pytester.runpytest(*args, "--agent-run-name=a")
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines([f"agentclinic: the model behind openai/fake-doctor at "
                                f"{server.url} is unknown*"])
    assert _summary(pytester.path, "a")["served_models"] == {"openai/fake-doctor": [UNKNOWN]}
    pytester.runpytest(*args, "--agent-run-name=b").assert_outcomes(passed=1)
    assert server.calls == 1  # the same key: replayed, not asked again


def test_a_server_busy_at_the_first_probe_is_still_identified(pytester: pytest.Pytester,
                                                               fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    _llama_cpp(server, "a.gguf")
    server.busy = 2
    pytester.runpytest("c.yaml", *llm_args(server, ("doctor",)),
                       "--agent-perception=no").assert_outcomes(passed=1)
    (record,) = results(pytester.path).values()
    assert "/models/a.gguf" in record["served"]["openai/fake-doctor"]


def test_identity_from_props() -> None:
    props = {"model_path": "/m/x.gguf", "build_info": "b1", "chat_template": "t"}
    assert str(identity_from_props(props)).startswith("model /m/x.gguf, build b1, template ")
    assert identity_from_props({"model_path": "/m/y.gguf"}) == "model /m/y.gguf"
    assert identity_from_props({}) is None and identity_from_props([1]) is None


PROBE_IMPORTS = """
import asyncio, json, sys
from pytest_agentclinic.llm.served import probe
identity = asyncio.run(probe(sys.argv[1], "openai/smollm2", backoff=0.0))
print(json.dumps({"identity": identity, "modules": sorted(sys.modules)}))
"""


def test_the_probe_asks_with_http_client_alone(fake_server: Start) -> None:
    # urllib.request (its handlers, cookies, auth) held ~0.4 MB more in every xdist worker
    # than the one GET a process makes needs.
    server = fake_server(lambda req: FakeReply())
    _llama_cpp(server, "a.gguf")
    out = subprocess.run([sys.executable, "-c", PROBE_IMPORTS, server.url], text=True,
                         capture_output=True, check=True)
    found = json.loads(out.stdout)
    assert found["identity"].startswith("smollm2 | model /models/a.gguf")
    assert "urllib.request" not in found["modules"]
