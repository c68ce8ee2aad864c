"""Checks of model strings, keys and the api base that run before any model is called.

A typo in ``--agent-doctor`` or a missing API key used to surface only after litellm's
import (2-3 s per process) and a first failed call in every xdist worker: ``-n 8`` with no
key took 82 s to fail. These checks need neither litellm nor the network (except one TCP
connect to ``--agent-api-base``): litellm's provider prefixes and the bare model names it
knows are copied from its source into ``data/litellm_names.json`` by
``tools/litellm_names.py``; the key variables of the common providers are listed here, as
litellm's ``validate_environment`` names them.

Every function returns one line saying what is wrong, or None.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import socket
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core import converters
from ..core.roles import OFFLINE as OFFLINE  # the built-in agent's model name

#: Each provider's key variables (any one will do), the first is the one to name. Providers
#: not listed (bedrock, vertex_ai, ollama, hosted_vllm, ...) authenticate otherwise or need
#: no key; they are not checked.
KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "text-completion-openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "codestral": ("CODESTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_TOKEN"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY"),
    "xai": ("XAI_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
    "replicate": ("REPLICATE_API_KEY", "REPLICATE_API_TOKEN"),
    "ai21": ("AI21_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
}

#: Seconds to wait for the api base's TCP handshake.
CONNECT_TIMEOUT = 3.0


@functools.cache
def _names() -> dict[str, Any]:
    path = Path(__file__).parent / "data" / "litellm_names.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def providers() -> frozenset[str]:
    """litellm's provider prefixes."""
    return frozenset(_names()["providers"])


def provider_of(model: str) -> str | None:
    """The provider litellm would route ``model`` to, or None when it knows none."""
    if "/" in model:
        return model.split("/", 1)[0]
    known: dict[str, str] = _names()["models"]
    if model in known:
        return known[model]
    return "openai" if model.startswith("ft:gpt-") else None


def _suggest(word: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_model(model: str, groups: Iterable[str] = ()) -> str | None:
    """Why ``model`` cannot be called: an unknown bare name or provider prefix."""
    if model == OFFLINE or model in groups:
        return None
    if "/" in model:
        prefix = model.split("/", 1)[0]
        if prefix in providers():
            return None
        return (f"unknown provider {prefix!r} in {model!r}{_suggest(prefix, providers())} "
                "(a litellm provider prefix, e.g. openai/, anthropic/, hosted_vllm/)")
    if provider_of(model) is not None:
        return None
    return (f"unknown model {model!r}{_suggest(model, [OFFLINE, *_names()['models']])} "
            "('offline', a model litellm knows, or provider/model)")


def missing_key(model: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key variable ``model``'s provider reads when none of its variables is set."""
    env = os.environ if environ is None else environ
    variables = KEY_VARIABLES.get(provider_of(model) or "", ())
    if not variables or any(env.get(v) for v in variables):
        return None
    return variables[0]


def check_api_base(url: str) -> str | None:
    """Why ``url`` is not an http(s) URL with a host and no credentials (the converter of
    ``--agent-api-base`` and of the commands' ``--api-base`` says it)."""
    try:
        converters.api_base(url)
    except ValueError as exc:
        return str(exc)
    return None


def unreachable(url: str, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why nothing accepts a TCP connection at ``url``'s host and port (or at the proxy the
    environment names for it, where the calls go), or None."""
    from .openai_http import proxy_for

    proxy = proxy_for(url)
    parts = urlsplit(proxy or url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        from .served import redact_url

        reason = exc.strerror or type(exc).__name__
        through = f" through the proxy {redact_url(proxy)}" if proxy else ""
        return f"cannot reach {redact_url(url)}{through} ({reason})"
