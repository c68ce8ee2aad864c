from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from pytest_agentclinic.llm.cache import CacheMode, ResponseCache, cache_key, key_parts
from pytest_agentclinic.llm.errors import InfrastructureError, ReplayMissError, TransientError
from pytest_agentclinic.llm.retry import RetryPolicy, call_with_retries


def parts(**over: object) -> dict[str, object]:
    base: dict[str, object] = dict(model="m", messages=[{"role": "user", "content": "hi"}],
                                   params={"temperature": 0.7}, role="doctor", case_id="c1",
                                   sample=0, prompt_version="v1")
    base.update(over)
    return key_parts(**base)  # type: ignore[arg-type]


def test_cache_key_covers_what_decides_the_answer() -> None:
    key = cache_key(parts())
    for change in ({"sample": 1}, {"case_id": "c2"}, {"prompt_version": "v2"},
                   {"model": "n"}, {"role": "patient"}, {"params": {"temperature": 0.0}}):
        assert cache_key(parts(**change)) != key, change
    assert cache_key(dict(reversed(list(parts().items())))) == key  # order-independent


def test_cache_key_never_holds_secrets_or_transport() -> None:
    assert set(parts()) == {"model", "messages", "params", "role", "case_id", "sample",
                            "prompt_version"}


@pytest.mark.parametrize(("mode", "stored", "read"), [
    (CacheMode.READ_WRITE, True, True), (CacheMode.REPLAY, False, True),
    (CacheMode.REFRESH, True, False), (CacheMode.OFF, False, False)])
def test_cache_modes(tmp_path: Path, mode: CacheMode, stored: bool, read: bool) -> None:
    seed = ResponseCache(tmp_path, CacheMode.READ_WRITE)
    seed.put("old", {"text": "x"})
    seed.close()
    cache = ResponseCache(tmp_path, mode)
    cache.put("new", {"text": "y"})
    assert (cache.get("old") is not None) is read
    cache.close()
    assert (ResponseCache(tmp_path, CacheMode.READ_WRITE).get("new") is not None) is stored


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


def test_replay_miss_lists_the_key_parts() -> None:
    error = ReplayMissError(parts())
    for name in ("model", "role", "case_id", "sample", "prompt_version", "messages"):
        assert f"  {name}: " in str(error)
