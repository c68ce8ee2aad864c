"""Retries (llm/retry.py): backoff with jitter, Retry-After capped, and the bounds."""

from __future__ import annotations

import asyncio
import random

import pytest

from pytest_agentclinic.llm.errors import InfrastructureError, TransientError
from pytest_agentclinic.llm.retry import RetryPolicy, call_with_retries


def test_backoff_grows_with_jitter_and_retry_after_is_capped() -> None:
    policy = RetryPolicy(attempts=5, backoff=1.0, max_backoff=8.0, retry_after_cap=5.0)
    rng = random.Random(0)
    delays = [policy.delay(a, None, rng) for a in (1, 2, 3, 4, 5)]
    for attempt, delay in enumerate(delays, start=1):
        ceiling = min(8.0, 2 ** (attempt - 1))
        assert ceiling / 2 <= delay <= ceiling
    assert policy.delay(1, 3600.0, rng) == 5.0
    assert policy.delay(1, 2.0, rng) == 2.0


def test_retries_stop_after_the_bound() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TransientError("503", status=503, retry_after=0.0)
        return "ok"

    policy = RetryPolicy(attempts=3, backoff=0.001)
    assert asyncio.run(call_with_retries(flaky, policy)) == ("ok", 3)
    calls = -10
    with pytest.raises(InfrastructureError, match="gave up after 3 attempts"):
        asyncio.run(call_with_retries(flaky, policy))


def test_429s_have_a_larger_bound_than_failures() -> None:
    async def limited() -> str:
        raise TransientError("429", status=429, retry_after=0.0)

    with pytest.raises(InfrastructureError, match="gave up after 12 attempts"):
        asyncio.run(call_with_retries(limited, RetryPolicy(attempts=3, backoff=0.001)))
    with pytest.raises(InfrastructureError, match="gave up after 1 attempts"):
        asyncio.run(call_with_retries(limited, RetryPolicy(attempts=1)))
