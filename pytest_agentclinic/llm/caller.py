"""Model calls as the agents make them: cached, retried, and costed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..core.roles import Reply
from ..core.transcript import Usage
from . import client
from .cache import CacheMode, ResponseCache, cache_key, key_parts
from .errors import ReplayMissError
from .retry import RetryPolicy, call_with_retries


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

    async def complete(self, *, role: str, model: str, messages: list[dict[str, Any]],
                       case_id: str, sample: int, prompt_version: str) -> Reply:
        """The model's reply to ``messages``, as role ``role`` in case ``case_id``."""
        parts = key_parts(model=model, messages=messages, params=self.settings.sampling,
                          role=role, case_id=case_id, sample=sample,
                          prompt_version=prompt_version)
        key = cache_key(parts)
        hit = self.cache.get(key)
        if hit is not None:
            return Reply(hit["text"], Usage(calls=1, cache_hits=1,
                                            prompt_tokens=hit["prompt_tokens"],
                                            completion_tokens=hit["completion_tokens"],
                                            cost_usd=hit["cost_usd"]))
        if self.cache.mode is CacheMode.REPLAY:
            raise ReplayMissError(parts)
        started = time.perf_counter()

        async def attempt() -> client.Completion:
            self.http_attempts += 1
            return await client.acomplete(model, messages, api_base=self.settings.api_base,
                                          timeout=self.settings.timeout,
                                          params=self.settings.sampling)

        done, _attempts = await call_with_retries(attempt, self.settings.policy)
        self.cache.put(key, {"text": done.text, "prompt_tokens": done.prompt_tokens,
                             "completion_tokens": done.completion_tokens,
                             "cost_usd": done.cost_usd})
        return Reply(done.text, Usage(calls=1, prompt_tokens=done.prompt_tokens,
                                      completion_tokens=done.completion_tokens,
                                      cost_usd=done.cost_usd,
                                      latency_s=time.perf_counter() - started))
