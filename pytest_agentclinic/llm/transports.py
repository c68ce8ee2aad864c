"""How a model call leaves the process: the :class:`Transport` protocol and the choice of one
per model, made once.

Two transports implement it: litellm (:class:`.client.LiteLLM`, every provider, the
``--agent-models`` Router) and the OpenAI-compatible aiohttp fast path
(:class:`.openai_http.OpenAIHTTP`, for ``openai/`` and ``hosted_vllm/`` models behind an
``--agent-api-base``). Both return a :class:`~.types.Completion` and raise the same
:mod:`.errors`; the caller's cache, retries, limits and deadline do not depend on which.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import client, openai_http
from .modes import TRANSPORTS as TRANSPORTS
from .types import Completion, Messages


class Transport(Protocol):
    """Sends one chat completion; knows nothing of caching, retries or limits."""

    #: ``litellm`` or ``http``.
    name: str

    def warm(self, pool: int) -> None:
        """Start loading what the first call needs, off the event loop (in a thread)."""

    async def acomplete(self, model: str, messages: Messages, *, api_base: str | None,
                        timeout: float, params: dict[str, Any],
                        max_bytes: int = 4_194_304) -> Completion:
        """One attempt: the reply, or an :mod:`.errors` exception (never a bare one)."""
        ...

    async def aclose(self) -> None:
        """Release connections (on the loop that used them)."""


class Transports:
    """Each model's transport, chosen on its first call and kept: ``litellm`` for every
    model under ``--agent-transport litellm``, a deployment group of ``--agent-models``, or
    a model the fast path cannot serve; the fast path otherwise."""

    def __init__(self, setting: str, api_base: str | None, pool: int) -> None:
        self.setting = setting
        self.api_base = api_base
        self.litellm: Transport = client.LiteLLM()
        self.http: Transport = openai_http.OpenAIHTTP(pool)
        self._chosen: dict[str, Transport] = {}

    def of(self, model: str) -> Transport:
        """The transport of ``model``."""
        chosen = self._chosen.get(model)
        if chosen is None:
            fast = (self.setting != "litellm" and not client.routed(model)
                    and openai_http.eligible(model, self.api_base))
            chosen = self._chosen[model] = self.http if fast else self.litellm
        return chosen

    async def aclose(self) -> None:
        """Close both transports' connections."""
        await self.http.aclose()
        await self.litellm.aclose()
