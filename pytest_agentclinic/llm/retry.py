"""Our retry policy: bounded attempts, exponential backoff with jitter, Retry-After capped."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from .errors import InfrastructureError, TransientError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` counts the first try; delays are in seconds."""

    attempts: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    retry_after_cap: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None:
            # A server's Retry-After is honoured, but never beyond our cap.
            return float(max(0.0, min(retry_after, self.retry_after_cap)))
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + rng.random() / 2)  # jitter spreads synchronized retries


async def call_with_retries(call: Callable[[], Awaitable[T]], policy: RetryPolicy,
                            rng: random.Random | None = None) -> tuple[T, int]:
    """Run ``call`` until it succeeds; return its result and the attempts it took.

    Only :class:`TransientError` is retried; when the attempts run out it becomes an
    :class:`InfrastructureError` (the item's outcome is *error*).
    """
    rng = rng or random.Random()
    for attempt in range(1, policy.attempts + 1):
        try:
            return await call(), attempt
        except TransientError as exc:
            if attempt == policy.attempts:
                raise InfrastructureError(f"{exc} (gave up after {attempt} attempts)",
                                          attempts=attempt) from exc
            await asyncio.sleep(policy.delay(attempt, exc.retry_after, rng))
    raise AssertionError("unreachable: attempts must be >= 1")
