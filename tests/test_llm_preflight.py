"""Model names, keys and the api base are checked before anything is called (issue 23:
``-n 8`` with no key took 82 s to fail, a typo 27 s, a scheme-less api base was retried)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.llm import preflight


@pytest.mark.parametrize(("model", "expected"), [
    ("offline", None), ("gpt-4o", None), ("openai/anything", None),
    ("hosted_vllm/m", None), ("anthropic/claude-x", None),
    ("ofline", "unknown model 'ofline'; did you mean 'offline'?"),
    ("gpt4o", "unknown model 'gpt4o'; did you mean 'gpt-4o'?"),
    ("antropic/claude-x", "unknown provider 'antropic' in 'antropic/claude-x'; did you mean "
                          "'anthropic'?"),
    ("zzzzqqq", "unknown model 'zzzzqqq' ("),
])
def test_model_names(model: str, expected: str | None) -> None:
    problem = preflight.check_model(model)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(expected)


def test_a_deployment_group_is_a_known_name() -> None:
    assert preflight.check_model("doctor-llm") is not None
    assert preflight.check_model("doctor-llm", groups={"doctor-llm"}) is None


@pytest.mark.parametrize(("model", "env", "missing"), [
    ("gpt-4o", {}, "OPENAI_API_KEY"),
    ("openai/x", {"OPENAI_API_KEY": "k"}, None),
    ("anthropic/claude-x", {"OPENAI_API_KEY": "k"}, "ANTHROPIC_API_KEY"),
    ("gemini/gemini-pro", {"GOOGLE_API_KEY": "k"}, None),
    ("together_ai/m", {}, "TOGETHERAI_API_KEY"),
    ("hosted_vllm/m", {}, None),  # no key of its own: not checked
])
def test_key_variables(model: str, env: dict[str, str], missing: str | None) -> None:
    assert preflight.missing_key(model, env) == missing


@pytest.mark.parametrize("url", ["localhost:8000", "127.0.0.1:8000/v1", "ftp://h/v1",
                                 "http:///v1", "http://h:port/v1"])
def test_api_base_needs_a_scheme_and_host(url: str) -> None:
    assert preflight.check_api_base(url) is not None


def test_reachability_is_one_tcp_connect() -> None:
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert preflight.unreachable(f"http://127.0.0.1:{port}/v1") is None
    problem = preflight.unreachable(f"http://127.0.0.1:{port}/v1?key=SECRET")
    assert problem is not None and problem.startswith(f"cannot reach http://127.0.0.1:{port}")
    assert "SECRET" not in problem


def test_checks_never_import_litellm() -> None:
    code = ("import sys; from pytest_agentclinic.llm import preflight as p; "
            "p.check_model('ofline'); p.check_model('x/y'); p.missing_key('gpt-4o'); "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_missing_key_is_one_line_before_any_worker_starts(
        pytester: pytest.Pytester, xdist: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    result = pytester.runpytest("c.yaml", "--agent-doctor=gpt-4o", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == ["ERROR: --agent-doctor=gpt-4o: no API key: set OPENAI_API_KEY (or "
                      "--agent-api-base URL for a local server)"]
    assert "workers" not in result.stdout.str()  # no xdist worker was started


def test_unreachable_api_base_is_a_usage_error_unless_replaying(
        pytester: pytest.Pytester) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    result = pytester.runpytest("c.yaml", "--agent-doctor=openai/x", f"--agent-api-base={dead}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --agent-api-base: cannot reach {dead} (*)"])
    # A replay never asks the server: a dead port is fine (the item is a cache miss error).
    replay = pytester.runpytest("c.yaml", "--agent-doctor=openai/x", f"--agent-api-base={dead}",
                                "--agent-cache=replay")
    assert replay.ret != pytest.ExitCode.USAGE_ERROR
