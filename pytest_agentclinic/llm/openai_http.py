"""The OpenAI-compatible fast path: one HTTP POST per call (:mod:`.http11`), for servers we
are pointed at.

litellm costs ~4 ms of CPU per call (a burst of 64 replies is CPU-bound on a small machine)
and 3-5 s of import; the same load over a direct HTTP call measured 1.05x ideal against
litellm's 1.84x. This path serves ``openai/...`` and ``hosted_vllm/...`` models that have an
``--agent-api-base`` (vLLM, llama.cpp, a gateway): the request is the plain OpenAI chat
format, so there is nothing for litellm to translate. Everything else (OpenAI's own API,
whose newer models need litellm's parameter mapping, and every other provider) stays on
litellm. Errors, usage and the cache key are the same on both paths.

The HTTP client is imported on first use (:func:`preload` starts it in a thread when a run
will use this path): a process that loads the plugin and plays offline never loads it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.redact import redact, register_url
from ..core.threads import start_thread
from .errors import (
    TransientError,
    cannot_reach,
    first_line,
    from_status,
    reply_text,
    timed_out,
    too_large,
)
from .keys import PLACEHOLDER_KEY
from .prices import cost_usd
from .rate_headers import wait_from_headers
from .served import endpoint
from .types import Completion, Messages

if TYPE_CHECKING:
    from . import http11

_T = TypeVar("_T")

#: Model prefixes whose servers speak the OpenAI chat API as is.
PREFIXES = ("openai", "hosted_vllm")
#: Key variables per prefix; ``None``: the server needs no key (litellm sends none either).
_KEY_VARIABLES: dict[str, str | None] = {"openai": "OPENAI_API_KEY",
                                         "hosted_vllm": None}


def preload() -> None:
    """Import the HTTP client now (called from a warm-up thread: not on the loop, at the
    first call)."""
    from . import http11  # noqa: F401


def warm_up() -> None:
    """Import the HTTP client and parse the price table in a thread, off the event loop."""
    start_thread(_warm, name="agentclinic-http-import")


def _warm() -> None:
    preload()
    cost_usd("", 0, 0)  # the price table, parsed once


def eligible(model: str, api_base: str | None) -> bool:
    """Whether ``model`` at ``api_base`` can take the fast path."""
    return api_base is not None and model.split("/", 1)[0] in PREFIXES and "/" in model


class OpenAIHTTP:
    """The fast path's transport (:class:`~.transports.Transport`): one connection pool
    (opened on first use, on the caller's loop) at least as large as the calls in flight."""

    name = "http"

    def __init__(self, pool: int) -> None:
        self.pool = max(pool, 1)
        self._connections: http11.Pool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reached: set[str] = set()
        #: The environment's proxy per URL (read once per URL, as litellm's HTTP clients do
        #: at start, not per call).
        self._proxies: dict[str, str | None] = {}

    def _client(self) -> http11.Pool:
        from . import http11

        loop = asyncio.get_running_loop()
        # A pool belongs to the loop that opened it (a caller reused by a second
        # ``asyncio.run`` gets a new one).
        if self._connections is None or self._loop is not loop:
            self._loop = loop
            self._connections = http11.Pool(self.pool)
        return self._connections

    def warm(self, pool: int) -> None:
        """Import the HTTP client and parse the price table in a thread: loaded on the loop
        they would stall the first replies."""
        del pool  # the pool is this object's own
        warm_up()

    async def aclose(self) -> None:
        """Close the pool (on the loop that opened it)."""
        if self._connections is not None:
            await self._connections.aclose()
            self._connections = None

    async def acomplete(self, model: str, messages: Messages, *, api_base: str | None,
                        timeout: float, params: dict[str, Any],
                        max_bytes: int = 4_194_304) -> Completion:
        """One chat completion; failures are the same :mod:`.errors` as litellm's path. A
        reply longer than ``max_bytes`` is not read past it: an error, never cached."""
        from . import http11

        if api_base is None:
            raise ValueError(f"{model}: the HTTP transport needs an api base (eligible())")

        prefix, name = model.split("/", 1)
        params = dict(params)
        key = params.pop("api_key", None) or _key(prefix)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        url = _completions_url(api_base)
        body = {"model": name, "messages": messages, **params}
        if url not in self._proxies:
            self._proxies[url] = proxy_for(url)
        try:
            reply = await _within(timeout, self._client().post(
                url, json.dumps(body).encode(), headers, proxy=self._proxies[url],
                cap=max_bytes, error_cap=_ERROR_BYTES))
        except asyncio.TimeoutError as exc:
            raise timed_out(model, timeout) from exc
        except http11.HTTPError as exc:
            if api_base not in self._reached and isinstance(exc, http11.ConnectFailed):
                raise cannot_reach(api_base, model, str(exc)) from exc
            raise TransientError(f"{model}: {exc}") from exc
        self._reached.add(api_base)
        if reply.status != 200:
            raise from_status(reply.status, model,
                              f"HTTP {reply.status}: {redact(_message(reply.body or b''))}",
                              wait_from_headers(reply.headers))
        if reply.body is None:
            raise too_large(model, "a reply", reply.declared, max_bytes)
        return _completion(model, reply.body, body.get("max_tokens"))


async def _within(seconds: float, call: Coroutine[Any, Any, _T]) -> _T:
    """``call``'s result, or ``asyncio.TimeoutError`` after ``seconds``: 3.11's
    ``asyncio.timeout`` runs it in the caller's task, where ``wait_for`` makes one per call."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await call
    return await asyncio.wait_for(call, seconds)


@functools.lru_cache(maxsize=8)
def _completions_url(api_base: str) -> str:
    # Split and joined once per api base, not once per call.
    return endpoint(api_base, "chat/completions")


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTP_PROXY``, ``HTTPS_PROXY``,
    ``ALL_PROXY``, minus ``NO_PROXY``), as litellm's clients honour them. Credentials in its
    URL stay there (sent as ``Proxy-Authorization``) and are registered as
    secrets in both forms."""
    import urllib.parse
    import urllib.request

    host = urllib.parse.urlsplit(url).hostname or ""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(urllib.parse.urlsplit(url).scheme) or proxies.get("all")
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if not host or not proxy or bypass(host, proxies):
        return None
    proxy = proxy if "://" in proxy else f"http://{proxy}"
    register_url(proxy)
    return proxy


def _key(prefix: str) -> str | None:
    variable = _KEY_VARIABLES.get(prefix)
    if variable is None:
        return None
    # The fast path always has an api base: a local server wants no key, so with none in the
    # environment the placeholder is sent, as on litellm's path (the run header says so).
    return os.environ.get(variable) or PLACEHOLDER_KEY


#: ``"message": "...`` at the start of an error body cut short.
_MESSAGE_START = re.compile(r'"message"\s*:\s*"([^"\\]{1,400})')
#: The bytes of an error body read: its message is cut to its first line anyway.
_ERROR_BYTES = 65_536


def _message(raw: bytes) -> str:
    """The provider's error message: its first line, bounded, as litellm's path keeps it."""
    try:
        error = json.loads(raw).get("error", {})
        text = str(error.get("message", error) if isinstance(error, dict) else error)
    except (ValueError, AttributeError, RecursionError):
        text = raw[:_ERROR_BYTES].decode("utf-8", "replace")
        # A body cut at the first 64 KB is no JSON: its message's start is still there.
        started = _MESSAGE_START.search(text)
        text = started.group(1) if started else text
    return first_line(text)


def _billed(model: str, data: Any) -> tuple[int, int, float] | None:
    """The usage of a reply that is discarded (it was billed all the same)."""
    try:
        usage = data.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
    except (AttributeError, TypeError, ValueError):
        return None
    return (prompt, completion, cost_usd(model, prompt, completion)) if prompt or completion \
        else None


def _completion(model: str, raw: bytes, max_tokens: object) -> Completion:
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise TransientError(f"bad response from {model}: no message") from exc
    text = reply_text(model, text, choice.get("finish_reason"), max_tokens=max_tokens,
                      billed=lambda: _billed(model, data))
    try:
        usage = data.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
    except (AttributeError, TypeError, ValueError) as exc:
        # A usage block we cannot read is the server's fault, as on litellm's path: retried,
        # never a crash of the item with a bare AttributeError.
        raise TransientError(f"bad response from {model}: unreadable usage") from exc
    fingerprint = data.get("system_fingerprint")
    return Completion(text, prompt, completion, cost_usd(model, prompt, completion),
                      fingerprint if isinstance(fingerprint, str) and fingerprint else None)
