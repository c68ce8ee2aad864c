"""Model calls as the agents make them: cached, retried, and costed."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ..core.roles import Reply
from ..core.transcript import Usage
from . import client, served
from .cache import CacheMode, ResponseCache, cache_key, key_parts
from .errors import ReplayMissError, TransientError
from .retry import RetryPolicy, call_with_retries
from .stats import CallStats


@dataclass(frozen=True)
class CallSettings:
    """Where and how to call models: none of it enters the cache key but the sampling."""

    api_base: str | None = None
    timeout: float = 60.0
    temperature: float = 0.7
    max_tokens: int = 512
    policy: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def sampling(self) -> dict[str, Any]:
        """The sampling parameters sent with (and keyed into) every call."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


class ModelCaller:
    """Looks a call up in the cache, else makes it under the retry policy and stores it."""

    def __init__(self, settings: CallSettings, cache: ResponseCache) -> None:
        self.settings = settings
        self.cache = cache
        #: Requests sent over HTTP (attempts included) by this process.
        self.http_attempts = 0
        self.stats = CallStats()
        #: What the api base serves under each model name (None: it does not say).
        self._served: dict[str, asyncio.Future[str | None]] = {}
        #: ``system_fingerprint`` values seen per model (replies and cache hits).
        self.fingerprints: dict[str, set[str]] = {}

    async def served_model(self, model: str) -> str | None:
        """The served identity of ``model`` behind ``--agent-api-base`` (None without one).

        Asked once per model and process. A replay never asks (it may have no server): it
        uses the identity the recording run stored beside its replies.
        """
        if self.settings.api_base is None:
            return None
        if model not in self._served:
            self._served[model] = asyncio.ensure_future(self._identify(model))
        return await self._served[model]

    async def _identify(self, model: str) -> str | None:
        stored_key = f"served\x1f{model}"
        if self.cache.mode is CacheMode.REPLAY:
            stored = self.cache.get(stored_key)
            return None if stored is None else stored.get("served")
        assert self.settings.api_base is not None
        identity = await served.probe(self.settings.api_base, model)
        if identity is not None:
            self.cache.put(stored_key, {"served": identity})
        return identity

    def served_identities(self, models: Any) -> dict[str, str]:
        """``model -> identity`` for the ``models`` whose identity this process learned."""
        out: dict[str, str] = {}
        for model in models:
            future = self._served.get(model)
            identity = future.result() if future is not None and future.done() else None
            prints = sorted(self.fingerprints.get(model, ()))
            if identity is None and not prints:
                continue
            text = identity or "unknown"
            out[model] = text + (f" (fingerprint {', '.join(prints)})" if prints else "")
        return out

    def _note_fingerprint(self, model: str, fingerprint: str | None) -> None:
        if fingerprint:
            self.fingerprints.setdefault(model, set()).add(fingerprint)

    async def complete(self, *, role: str, model: str, messages: list[dict[str, Any]],
                       case_id: str, sample: int, prompt_version: str) -> Reply:
        """The model's reply to ``messages``, as role ``role`` in case ``case_id``."""
        parts = key_parts(model=model, messages=messages, params=self.settings.sampling,
                          role=role, case_id=case_id, sample=sample,
                          prompt_version=prompt_version, served=await self.served_model(model))
        key = cache_key(parts)
        hit = self.cache.get(key)
        stats = self.stats
        if hit is not None:
            stats.calls += 1
            stats.cache_hits += 1
            stats.prompt_tokens += hit["prompt_tokens"]
            stats.completion_tokens += hit["completion_tokens"]
            self._note_fingerprint(model, hit.get("fingerprint"))
            return Reply(hit["text"], Usage(calls=1, cache_hits=1,
                                            prompt_tokens=hit["prompt_tokens"],
                                            completion_tokens=hit["completion_tokens"],
                                            cost_usd=hit["cost_usd"]))
        if self.cache.mode is CacheMode.REPLAY:
            raise ReplayMissError(parts)
        started = time.perf_counter()
        tries = 0

        async def attempt() -> client.Completion:
            nonlocal tries
            tries += 1
            self.http_attempts += 1
            stats.retries += tries > 1
            stats.in_flight += 1
            try:
                return await client.acomplete(model, messages, api_base=self.settings.api_base,
                                              timeout=self.settings.timeout,
                                              params=self.settings.sampling)
            except TransientError as exc:
                stats.rate_limited += exc.status == 429
                raise
            finally:
                stats.in_flight -= 1

        stats.calls += 1
        done, _attempts = await call_with_retries(attempt, self.settings.policy)
        stats.paid_calls += 1
        stats.spent_usd += done.cost_usd
        stats.prompt_tokens += done.prompt_tokens
        stats.completion_tokens += done.completion_tokens
        self._note_fingerprint(model, done.fingerprint)
        self.cache.put(key, {"text": done.text, "prompt_tokens": done.prompt_tokens,
                             "completion_tokens": done.completion_tokens,
                             "cost_usd": done.cost_usd, "fingerprint": done.fingerprint})
        return Reply(done.text, Usage(calls=1, prompt_tokens=done.prompt_tokens,
                                      completion_tokens=done.completion_tokens,
                                      cost_usd=done.cost_usd,
                                      latency_s=time.perf_counter() - started))
