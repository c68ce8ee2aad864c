"""Opt-in: a real small model served by llama.cpp through the whole harness.

Skipped unless ``AGENTCLINIC_REAL_MODEL`` names a GGUF file (the test serves it with
``python -m llama_cpp.server``, from ``pip install 'llama-cpp-python[server]'``) or
``AGENTCLINIC_REAL_SERVER`` names a running OpenAI-compatible server's api base. It asserts
robustness, not accuracy: a 135M model rambles and rarely writes the markers.

    AGENTCLINIC_REAL_MODEL=.../SmolLM2-135M-Instruct.Q4_1.gguf \\
        pytest tests/test_plugin_real_model.py

Every request goes through a recording proxy (the fake server's script forwards it), so the
transcripts can be checked against the server's raw replies.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest

MODEL_ENV, SERVER_ENV = "AGENTCLINIC_REAL_MODEL", "AGENTCLINIC_REAL_SERVER"
#: Seconds for llama.cpp to load the model, and for one reply on a busy CPU.
START_TIMEOUT, CALL_TIMEOUT = 180.0, 300.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def real_server() -> Iterator[str]:
    """The api base of a real model server: the one named, or llama.cpp serving the GGUF."""
    if os.environ.get(SERVER_ENV):
        yield os.environ[SERVER_ENV].rstrip("/")
        return
    gguf = os.environ.get(MODEL_ENV)
    if not gguf:
        pytest.skip(f"opt-in: set {MODEL_ENV}=FILE.gguf or {SERVER_ENV}=URL to run a real model")
    if not Path(gguf).is_file():
        pytest.fail(f"{MODEL_ENV}={gguf}: no such file")
    pytest.importorskip("llama_cpp.server", reason="pip install 'llama-cpp-python[server]'")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", "smollm2",
         "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "4096"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                _get(base + "/models")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp did not start serving {gguf}")
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(30)


class Recorder:
    """Forwards each request to the real server and keeps its raw reply."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.replies: list[dict[str, Any]] = []

    def __call__(self, req: FakeRequest) -> FakeReply:
        request = urllib.request.Request(
            self.upstream + "/chat/completions", data=json.dumps(req.body).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=CALL_TIMEOUT) as response:
            raw = json.loads(response.read())
        self.replies.append(raw)
        usage = raw.get("usage") or {}
        return FakeReply(raw["choices"][0]["message"]["content"] or "",
                         prompt_tokens=usage.get("prompt_tokens", 0),
                         completion_tokens=usage.get("completion_tokens", 0))


def _run_records(root: Path, run: str) -> dict[str, dict[str, Any]]:
    lines = (root / "reports" / run / "results.jsonl").read_text().splitlines()
    return {r["nodeid"]: r for r in map(json.loads, lines)}


def test_a_real_model_runs_robustly_and_replays_exactly(
        pytester: pytest.Pytester, real_server: str, monkeypatch: pytest.MonkeyPatch,
        warm_litellm: None) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    recorder = Recorder(real_server)
    proxy = FakeOpenAIServer(recorder).__enter__()
    try:
        proxy.models = [m["id"] for m in _get(real_server + "/models")["data"]]
        common = ["c.yaml", "--agent-doctor=openai/smollm2", "--agent-patient=openai/smollm2",
                  "--agent-turns=2", "--agent-max-tokens=32", "--agent-perception=no",
                  "--agent-concurrency=1", f"--agent-timeout={CALL_TIMEOUT}",
                  # 4 calls of up to CALL_TIMEOUT each: past the default 900 s on a busy CPU
                  f"--agent-encounter-timeout={4 * CALL_TIMEOUT}",
                  "-p", "no:cacheprovider"]
        first = pytester.runpytest(*common, f"--agent-api-base={proxy.url}",
                                   "--agent-run-name=real")
    finally:
        proxy.__exit__(None, None, None)
    outcomes = first.parseoutcomes()
    assert first.ret in (0, 1), first.stdout.str()
    assert sum(outcomes.get(k, 0) for k in ("passed", "failed", "error")) == 2, outcomes
    records = _run_records(pytester.path, "real")
    raw = [r["choices"][0]["message"]["content"] for r in recorder.replies]
    for record in records.values():
        assert record["outcome"] in ("correct", "incorrect", "no_diagnosis", "error")
        assert record["served"] == {"openai/smollm2": "; ".join(sorted(proxy.models))}
        transcript = json.loads(Path(record["transcript"]).read_text())
        assert transcript["outcome"] == record["outcome"]
        assert transcript["diagnosis"] == record["given"]
        said = [u for u in transcript["utterances"] if u["model"] == "openai/smollm2"]
        assert sum(u["role"] == "doctor" for u in said) == record["turns_used"]
        assert all(u["text"] in raw for u in said), "a reply the server never sent"
    assert len(raw) == sum(len([u for u in json.loads(Path(r["transcript"]).read_text())
                                ["utterances"] if u["model"] == "openai/smollm2"])
                           for r in records.values())

    # Replay against a dead port: no server at all, the same run.
    replay = pytester.runpytest(*common, f"--agent-api-base=http://127.0.0.1:{_free_port()}/v1",
                                "--agent-cache=replay", "--agent-run-name=replay")
    assert replay.parseoutcomes() == outcomes
    again = _run_records(pytester.path, "replay")
    for nodeid, record in records.items():
        for field in ("outcome", "given", "turns_used", "tests_requested", "served"):
            assert again[nodeid][field] == record[field], (nodeid, field)
        texts = [[u["text"] for u in json.loads(Path(r["transcript"]).read_text())
                  ["utterances"]] for r in (record, again[nodeid])]
        assert texts[0] == texts[1]
