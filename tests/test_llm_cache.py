"""The response cache (llm/cache.py): its key, its modes, and what a replay miss says."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentclinic.llm.cache import CacheMode, ResponseCache, cache_key, key_parts
from pytest_agentclinic.llm.errors import ReplayMissError


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


def test_replay_miss_lists_the_key_parts() -> None:
    error = ReplayMissError(parts())
    for name in ("model", "role", "case_id", "sample", "prompt_version", "messages"):
        assert f"  {name}: " in str(error)
