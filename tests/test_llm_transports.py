"""llm/transports.py: the Transport protocol, its two implementations, and the choice of one
per model (made once)."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agentclinic.llm import client
from pytest_agentclinic.llm.client import LiteLLM
from pytest_agentclinic.llm.openai_http import OpenAIHTTP
from pytest_agentclinic.llm.transports import Transport, Transports

LLM = Path(__file__).resolve().parents[1] / "pytest_agentclinic" / "llm"


@pytest.fixture
def no_deployments() -> Iterator[None]:
    client.use_deployments([])
    yield
    client.use_deployments([])


@pytest.mark.parametrize(("setting", "api_base", "model", "expected"), [
    ("auto", "http://127.0.0.1:9/v1", "openai/x", "http"),
    ("auto", "http://127.0.0.1:9/v1", "hosted_vllm/x", "http"),
    ("auto", None, "openai/x", "litellm"),  # OpenAI's own API: litellm maps its parameters
    ("auto", "http://127.0.0.1:9/v1", "anthropic/claude", "litellm"),
    ("auto", "http://127.0.0.1:9/v1", "gpt-4o", "litellm"),  # no prefix
    ("litellm", "http://127.0.0.1:9/v1", "openai/x", "litellm"),
])
def test_each_model_gets_the_transport_that_can_serve_it(
        no_deployments: None, setting: str, api_base: str | None, model: str,
        expected: str) -> None:
    transports = Transports(setting, api_base, 4)
    assert transports.of(model).name == expected
    assert transports.of(model) is transports.of(model)  # chosen once, the same object


def test_a_deployment_group_goes_through_litellms_router(no_deployments: None) -> None:
    client.use_deployments([{"model_name": "openai/pool", "litellm_params": {"model": "x"}}])
    transports = Transports("auto", "http://127.0.0.1:9/v1", 4)
    assert transports.of("openai/pool") is transports.litellm
    assert transports.of("openai/other") is transports.http


def test_both_implementations_are_transports() -> None:
    implementations: list[Transport] = [LiteLLM(), OpenAIHTTP(1)]  # mypy checks the protocol
    assert {t.name for t in implementations} == {"litellm", "http"}


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found |= {f"{node.module or ''}.{a.name}".strip(".") for a in node.names}
            found.add(node.module or "")
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_the_fast_path_does_not_import_the_litellm_client() -> None:
    imported = _imported(LLM / "openai_http.py")
    assert not {name for name in imported if name == "client" or name.startswith("client.")
                or name.endswith(".client")}


def test_only_the_client_imports_litellm() -> None:
    package = LLM.parent
    users = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                   if any(n == "litellm" or n.startswith("litellm.") for n in _imported(p)))
    assert users == ["llm/client.py"]


def test_the_http_transport_needs_an_api_base() -> None:
    call = OpenAIHTTP(1).acomplete("openai/x", [], api_base=None, timeout=1.0, params={})
    with pytest.raises(ValueError, match="needs an api base"):
        asyncio.run(call)
