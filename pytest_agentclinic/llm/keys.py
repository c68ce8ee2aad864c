"""The API key a call sends, as both transports decide it: the provider's variable, or a
placeholder for a local server that wants none."""

from __future__ import annotations

import os

#: Sent as the API key to a server given by ``--agent-api-base`` when the environment has no
#: key for the provider: local servers (vLLM, Ollama, llama.cpp) want none, but litellm's
#: OpenAI-compatible path refuses to call without one.
PLACEHOLDER_KEY = "sk-no-key-needed"


def key_variable(model: str) -> str:
    """The environment variable litellm reads the key of ``model``'s provider from."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return f"{provider.upper().replace('-', '_')}_API_KEY"


def needs_placeholder_key(model: str, api_base: str | None) -> bool:
    """Whether calls to ``model`` get :data:`PLACEHOLDER_KEY` (a server given, no key set)."""
    return api_base is not None and not os.environ.get(key_variable(model))
