"""Secrets, round 2: a sentinel key placed everywhere a user may put one is found 0 times in
any file the run writes (the reply cache's SQLite bytes included) and in its terminal output.

The places: inline in the ``--agent-models`` file, in the query of ``--agent-api-base``
(``?api-key=...``, as Azure-style gateways take it), and in an environment key holding a quote
and a backslash (which JSON escapes, so a match on the raw value missed it). The fake server
plays a model that repeats the key it was sent and the query it was called with: the worst a
provider can do."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers import make_case, results, write_yaml_cases

from pytest_agentclinic.core.redact import redact, register, register_url
from pytest_agentclinic.llm import client
from pytest_agentclinic.llm.errors import FatalLLMError
from pytest_agentclinic.llm.served import endpoint, server_root
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]


def _echoing(req: FakeRequest) -> FakeReply:
    """A model that repeats its credentials: the key (without ``Bearer``, which the generic
    pattern would catch anyway) and the query string."""
    key = req.headers.get("Authorization", "").removeprefix("Bearer ")
    if req.role == "doctor" and req.doctor_turn == 0:
        return FakeReply(f"My key is {key}. Where does it hurt?")
    if req.role == "doctor":
        return FakeReply(f"Still {key}. DIAGNOSIS READY: Condition1 disease")
    return FakeReply(f"I heard {key} and {req.query}")


def _written(root: Path, inputs: set[str]) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p.name not in inputs]


def test_a_sentinel_key_in_every_place_is_found_nowhere(
        pytester: pytest.Pytester, fake_server: Start, monkeypatch: pytest.MonkeyPatch,
        xdist: list[str]) -> None:
    # One sentinel per place and worker mode: a key registered by an earlier in-process run
    # must not redact this one's.
    mode = "".join(xdist).replace("-", "") or "none"
    tokens = {place: f"SENTINEL{place}{mode}" for place in ("MODELS", "QUERY", "ENV")}
    models_key = f"mf-{tokens['MODELS']}-9f8e7d"
    query_key = f"q-{tokens['QUERY']}-1a2b3c"
    env_key = f'ev"{tokens["ENV"]}\\zz'
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    server = fake_server(_echoing)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    (pytester.path / "models.yaml").write_text(yaml.safe_dump({"model_list": [
        {"model_name": "doc", "litellm_params": {"model": "openai/fake", "api_base": server.url,
                                                 "api_key": models_key}}]}))
    result = pytester.runpytest(
        "c.yaml", "--agent-models=models.yaml", "--agent-doctor=doc",
        "--agent-patient=openai/fake-patient", f"--agent-api-base={server.url}?api-key={query_key}",
        "--agent-perception=no", "--agent-run-name=r", "--junitxml=junit.xml",
        "--agent-retries=0", "--agent-backoff=0.01", *xdist)
    result.assert_outcomes(passed=1, failed=1)

    # Each key was sent, so each could leak: the models file's and the environment's as
    # bearer keys, the query's in the query (after /chat/completions, not before it).
    sent = {r.headers.get("Authorization") for r in server.requests}
    assert sent == {f"Bearer {models_key}", f"Bearer {env_key}"}
    assert {r.query for r in server.requests if r.role == "patient"} == {f"api-key={query_key}"}
    files = _written(pytester.path, {"c.yaml", "models.yaml"})
    names = {p.name for p in files}
    assert {"results.jsonl", "summary.json", "summary.md", "report.html", "junit.xml",
            "cache.db", "step-summary.md"} <= names
    assert len(list((pytester.path / "reports" / "r" / "transcripts").iterdir())) == 2
    # The echoes are there, masked.
    texts = [u["text"] for r in results(pytester.path).values()
             for u in r.get("utterances", [])] or [(pytester.path / "reports" / "r" /
                                                   "report.html").read_text()]
    assert any("***" in t for t in texts)
    output = (result.stdout.str() + result.stderr.str()).encode()
    leaks = {token: [str(p.relative_to(pytester.path)) for p in files
                     if token.encode() in p.read_bytes()] for token in tokens.values()}
    assert leaks == {token: [] for token in tokens.values()}
    assert [output.count(t.encode()) for t in tokens.values()] == [0, 0, 0]


def test_a_reply_cached_redacted_replays_the_whole_encounter(
        pytester: pytest.Pytester, fake_server: Start, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-REPLAYSECRET-123456")
    server = fake_server(_echoing)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    args = ["c.yaml", "--agent-doctor=openai/fake-doctor", "--agent-patient=openai/fake-patient",
            f"--agent-api-base={server.url}", "--agent-perception=no", "-p", "no:cacheprovider"]
    pytester.runpytest(*args, "--agent-run-name=a").assert_outcomes(passed=1)
    calls = server.calls
    assert calls == 3
    # The patient's reply came back masked from the cache; the doctor's next call, keyed on
    # the redacted conversation, still finds its entry.
    pytester.runpytest(*args, "--agent-cache=replay",
                       "--agent-run-name=b").assert_outcomes(passed=1)
    assert server.calls == calls
    cached = b"".join(p.read_bytes() for p in (pytester.path / ".agentclinic_cache").rglob("*")
                      if p.is_file())
    assert b"REPLAYSECRET" not in cached and b"I heard ***" in cached


def test_chat_completions_goes_before_the_query() -> None:
    base = "https://gw.example.com/openai/v1/?api-key=abc%2Fdef&api-version=2024-02-01"
    assert endpoint(base, "chat/completions") == (
        "https://gw.example.com/openai/v1/chat/completions?api-key=abc%2Fdef"
        "&api-version=2024-02-01")
    assert endpoint("http://127.0.0.1:8080/v1", "models") == "http://127.0.0.1:8080/v1/models"
    assert server_root("http://h:8080/v1?k=1") == "http://h:8080?k=1"
    assert endpoint(server_root("http://h:8080/v1/"), "props") == "http://h:8080/props"


def test_litellm_with_a_query_in_the_api_base_says_why(fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply())
    with pytest.raises(FatalLLMError, match=r"query string .* needs the direct HTTP path"):
        asyncio.run(client.acomplete("openai/x", [{"role": "user", "content": "hi"}],
                                     api_base=f"{server.url}?api-key=QUERYKEY-77", timeout=10,
                                     params={}))
    assert server.calls == 0


def test_a_secret_is_masked_in_every_escaped_form(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = 'pa"ss\\word<&>\'é-7f3k'
    monkeypatch.setenv("SERVICE_TOKEN", secret)
    import html
    import json
    import urllib.parse

    for form in (secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=True)[1:-1],
                 html.escape(secret), html.escape(json.dumps(secret)[1:-1]),
                 json.dumps(json.dumps(secret)[1:-1])[1:-1], urllib.parse.quote(secret, safe="")):
        assert redact(f"before {form} after") == "before *** after", form


def test_registered_keys_and_query_credentials_are_masked() -> None:
    register("inline-Kq7VwZ2pX")
    register_url("https://gw.example.com/v1?api-key=Q%2BkEy9x8y7&api-version=2024-02-01")
    text = redact("key inline-Kq7VwZ2pX, query Q%2BkEy9x8y7 and Q+kEy9x8y7 on 2024-02-01")
    assert text == "key ***, query *** and *** on 2024-02-01"  # a date is no credential


# ------------------------------------------------------------------ linear redaction

#: Inputs that made the old URL-userinfo pattern quadratic (40k letters: 2.5 s, so 1 MB
#: would take ~25 min), and the other patterns' worst shapes.
_HOSTILE = textwrap.dedent("""
    import sys
    from pytest_agentclinic.core.redact import redact
    n = 1_000_000
    for text in ("a" * n, "a://" + "b" * n, "x://a" * (n // 5), "bearer " * (n // 7),
                 "sk-" * (n // 3), "api-key: " * (n // 9), "Authorization: basic " * (n // 21)):
        redact(text)
    print("done")
""")


def test_redaction_is_linear_on_hostile_input() -> None:
    # A generous bound, no timing: linear code needs ~0.1 s of CPU here, the quadratic
    # pattern tens of minutes; under any load the two cannot meet at 60 s.
    try:
        done = subprocess.run([sys.executable, "-c", _HOSTILE], capture_output=True,
                              text=True, timeout=60, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail("redact() did not finish 7 MB of hostile text within 60 s: quadratic")
    assert done.stdout.strip() == "done"


def test_userinfo_is_still_masked() -> None:
    assert redact("see http://user:pw@host/x, https://tok@h and ftp://a/b@c") == (
        "see http://***@host/x, https://***@h and ftp://a/b@c")
    assert re.search(r"hunter2", redact("git+ssh://me:hunter2@example.com/r")) is None
