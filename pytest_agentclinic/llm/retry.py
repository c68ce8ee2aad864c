"""Our retry policy: bounded attempts, exponential backoff with jitter, Retry-After capped."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from .errors import InfrastructureError, TransientError

T = TypeVar("T")

#: The jitter's generator, shared: seeding a ``random.Random()`` from the OS for every call
#: took more CPU than the rest of its retry loop.
_JITTER = random.Random()


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` counts the first try; delays are in seconds."""

    attempts: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    retry_after_cap: float = 30.0

    @property
    def rate_limited_attempts(self) -> int:
        """Attempts a call may spend on 429s: those are the provider pacing us (the model's
        gate pauses and slows down on each), not the call failing, so the bound is 4x larger
        (unless retries are off)."""
        return self.attempts if self.attempts == 1 else 4 * self.attempts

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

    Only :class:`TransientError` is retried, up to ``policy.attempts`` failures, or
    ``policy.rate_limited_attempts`` 429s; then it becomes an :class:`InfrastructureError`
    (the item's outcome is *error*).
    """
    rng = rng or _JITTER
    failed = limited = 0
    while True:
        try:
            return await call(), failed + limited + 1
        except TransientError as exc:
            if exc.status == 429:
                limited += 1
            else:
                failed += 1
            if failed >= policy.attempts or limited >= policy.rate_limited_attempts:
                attempts = failed + limited
                raise InfrastructureError(f"{exc} (gave up after {attempts} attempts)",
                                          attempts=attempts) from exc
            await asyncio.sleep(policy.delay(max(failed, 1) if exc.status != 429 else limited,
                                             exc.retry_after, rng))
