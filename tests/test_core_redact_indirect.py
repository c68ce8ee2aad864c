"""Secrets, round 3: credentials the run learns indirectly are masked too: values behind
litellm's ``os.environ/NAME`` references (whatever the variable is called), header values,
proxy credentials in both forms (``user:pass`` and its base64, a bare ``Basic ...``), and
any variable a models file names. The fast path goes through the environment's proxy."""

from __future__ import annotations

import asyncio
import base64
import html
import json
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.core.redact import redact, register_params
from pytest_agentclinic.llm import deployments
from pytest_agentclinic.llm.openai_http import OpenAIHTTP
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]


def _forms(secret: str) -> list[str]:
    return [secret, json.dumps(secret)[1:-1], html.escape(secret),
            urllib.parse.quote(secret, safe=""), base64.b64encode(secret.encode()).decode()]


def test_a_value_behind_an_environment_reference_is_masked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The variable's name ends in neither KEY nor TOKEN: only the reference makes it secret.
    monkeypatch.setenv("GATEWAY_AUTH", "gw-REF-Sentinel-4711")
    register_params({"model": "openai/x", "api_key": "os.environ/GATEWAY_AUTH"})
    for form in _forms("gw-REF-Sentinel-4711"):
        assert redact(f"echo {form} end") == "echo *** end", form


def test_a_variable_named_anywhere_in_a_models_file_is_masked_even_when_set_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models.yaml").write_text(yaml.safe_dump({"model_list": [{
        "model_name": "doc", "litellm_params": {
            "model": "openai/x", "api_base": "os.environ/GW_BASE_URL",
            "extra_headers": {"X-Tenant": "os.environ/TENANT_PASS"}}}]}))
    deployments.load(tmp_path / "models.yaml")
    monkeypatch.setenv("TENANT_PASS", "tenant-Later-0815")
    assert redact("got tenant-Later-0815") == "got ***"


def test_header_values_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    register_params({"model": "openai/x", "extra_headers": {
        "X-Gateway-Auth": "hdr-Sentinel-2222", "Content-Type": "application/json"}})
    assert redact("hdr-Sentinel-2222 as application/json") == "*** as application/json"


def test_proxy_credentials_are_masked_in_both_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://puser:pr0xy-Sentinel-9@proxy.example:3128")
    basic = base64.b64encode(b"puser:pr0xy-Sentinel-9").decode()
    assert redact(f"Proxy-Authorization: Basic {basic}") == "Proxy-Authorization: Basic ***"
    assert "Sentinel" not in redact("user puser:pr0xy-Sentinel-9 in clear")
    assert basic not in redact(f"echoed {basic} bare")


def test_a_bare_basic_credential_is_masked_but_clinical_text_is_not() -> None:
    token = base64.b64encode(b"someone:s3cret-pass").decode()
    assert redact(f"I saw Basic {token} there") == "I saw Basic *** there"
    text = "A basic metabolic panel and basic life support were normal."
    assert redact(text) == text


def _proxy(seen: list[str]) -> Script:
    def script(req: FakeRequest) -> FakeReply:
        seen.append(req.headers.get("Proxy-Authorization", ""))
        return FakeReply("DIAGNOSIS READY: Condition1 disease")
    return script


def test_the_fast_path_goes_through_the_environments_proxy(
        fake_server: Start, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    proxy = fake_server(_proxy(seen))
    port = proxy.url.split(":")[2].split("/")[0]
    monkeypatch.setenv("HTTP_PROXY", f"http://puser:pw-Sentinel-77@127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    async def call(base: str) -> str:
        fast = OpenAIHTTP(2)
        try:
            done = await fast.acomplete("openai/m", [{"role": "user", "content": "hi"}],
                                        api_base=base, timeout=10, params={})
        finally:
            await fast.aclose()
        return done.text

    # An address nothing listens on: only the proxy can answer it.
    assert asyncio.run(call("http://upstream.invalid:9/v1")).startswith("DIAGNOSIS READY")
    assert seen == ["Basic " + base64.b64encode(b"puser:pw-Sentinel-77").decode()]
    monkeypatch.setenv("NO_PROXY", "upstream.invalid")
    with pytest.raises(Exception, match=r"upstream\.invalid"):
        asyncio.run(call("http://upstream.invalid:9/v1"))
    assert len(seen) == 1


def _echo_everything(req: FakeRequest) -> FakeReply:
    """A provider that repeats every credential header it was sent."""
    creds = " ".join(f"{k}={v}" for k, v in req.headers.items()
                     if k.lower() in ("authorization", "x-gateway-auth"))
    if req.role == "doctor" and req.doctor_turn == 0:
        return FakeReply(f"I was sent {creds}. Where does it hurt?")
    if req.role == "doctor":
        return FakeReply(f"Sent {creds}. DIAGNOSIS READY: Condition1 disease")
    return FakeReply(f"I heard {creds}")


def test_referenced_and_header_secrets_are_found_in_no_artefact(
        pytester: pytest.Pytester, fake_server: Start, monkeypatch: pytest.MonkeyPatch,
        xdist: list[str]) -> None:
    mode = "".join(xdist).replace("-", "") or "none"
    ref, header = f"gwREF{mode}x7Q", f"hdrHDR{mode}k9Z"
    monkeypatch.setenv("GATEWAY_AUTH", f"ga-{ref}-01")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-audit-key-000")
    server = fake_server(_echo_everything)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    (pytester.path / "models.yaml").write_text(yaml.safe_dump({"model_list": [
        {"model_name": "doc", "litellm_params": {
            "model": "openai/fake", "api_base": server.url, "api_key": "os.environ/GATEWAY_AUTH",
            "extra_headers": {"X-Gateway-Auth": f"xh-{header}-02"}}}]}))
    result = pytester.runpytest(
        "c.yaml", "--agent-models=models.yaml", "--agent-doctor=doc",
        "--agent-patient=doc", "--agent-perception=no", "--agent-run-name=r",
        "--agent-retries=0", "--agent-backoff=0.01", "--junitxml=junit.xml", *xdist)
    result.assert_outcomes(passed=1)
    sent = {r.headers.get("x-gateway-auth") for r in server.requests}
    assert sent == {f"xh-{header}-02"}  # each was sent, so each could leak
    files = [p for p in pytester.path.rglob("*") if p.is_file() and p.name != "models.yaml"]
    output = result.stdout.str() + result.stderr.str()
    for token in (ref, header):
        for form in {f for secret in (f"ga-{token}-01", f"xh-{token}-02", token)
                     for f in _forms(secret)}:
            assert form not in output
            assert [p.name for p in files if form.encode() in p.read_bytes()] == [], form


def test_a_run_reaches_its_api_base_through_the_proxy(
        pytester: pytest.Pytester, fake_server: Start, monkeypatch: pytest.MonkeyPatch,
        xdist: list[str]) -> None:
    seen: list[str] = []
    proxy = fake_server(_proxy(seen))
    port = proxy.url.split(":")[2].split("/")[0]
    monkeypatch.setenv("HTTP_PROXY", f"http://puser:pw-RunSentinel-5@127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-doctor=openai/fake-doctor",
                                "--agent-api-base=http://upstream.invalid:9/v1",
                                "--agent-perception=no", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=1)
    assert seen and set(seen) == {"Basic " + base64.b64encode(b"puser:pw-RunSentinel-5").decode()}
