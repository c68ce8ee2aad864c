"""llm/cache_entry.py: the response cache's entries, typed and versioned, checked when read."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from pytest_agentclinic.llm.cache import (
    CacheMode,
    ResponseCache,
    cache_key,
    key_parts,
    merge_caches,
)
from pytest_agentclinic.llm.cache_entry import (
    ENTRY_VERSION,
    CacheEntryError,
    ReplyEntry,
    ServedEntry,
)
from pytest_agentclinic.llm.cache_store import CacheFormatError, ReadOnlyCache
from pytest_agentclinic.llm.call_options import call_settings
from pytest_agentclinic.llm.caller import ModelCaller
from pytest_agentclinic.llm.errors import FatalLLMError

REPLY = ReplyEntry("Final diagnosis: gout", 12, 5, 0.0025, "fp_1")
MESSAGES = [{"role": "user", "content": "hello"}]


def test_an_entry_reads_back_as_written() -> None:
    stored = REPLY.stored()
    assert stored["version"] == ENTRY_VERSION
    assert ReplyEntry.read(stored, "c") == REPLY
    assert ServedEntry.read(ServedEntry("llama-3").stored(), "c") == ServedEntry("llama-3")


def test_an_entry_from_before_versions_is_version_one() -> None:
    legacy = {"text": "t", "prompt_tokens": 1, "completion_tokens": 2, "cost_usd": 0}
    assert ReplyEntry.read(legacy, "c") == ReplyEntry("t", 1, 2, 0.0, None)
    assert ServedEntry.read({"served": "m"}, "c").served == "m"


@pytest.mark.parametrize(("value", "message"), [
    ({**REPLY.stored(), "version": 2}, "holds an entry of version 2; this release reads "
                                       "version 1"),
    ({**REPLY.stored(), "version": "1"}, "holds an entry of version '1'"),
    ({**REPLY.stored(), "version": True}, "holds an entry of version True"),
    ({k: v for k, v in REPLY.stored().items() if k != "text"}, "its 'text' is NoneType"),
    ({**REPLY.stored(), "prompt_tokens": "12"}, "its 'prompt_tokens' is str"),
    ({**REPLY.stored(), "completion_tokens": False}, "its 'completion_tokens' is bool"),
    ({**REPLY.stored(), "fingerprint": 3}, "its 'fingerprint' is int"),
])
def test_an_entry_this_release_cannot_read_is_refused(value: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(CacheEntryError) as refused:
        ReplyEntry.read(value, "/runs/cache")
    assert "/runs/cache" in str(refused.value) and message in str(refused.value)


def _key() -> str:
    settings = call_settings()
    return cache_key(key_parts(model="openai/x", messages=MESSAGES, params=settings.sampling,
                               role="doctor", case_id="c1", sample=0, prompt_version="v1"))


def _ask(cache: ResponseCache) -> str:
    caller = ModelCaller(call_settings(retries=0), cache)

    async def ask() -> str:
        reply = await caller.complete(role="doctor", model="openai/x", messages=MESSAGES,
                                      case_id="c1", sample=0, prompt_version="v1")
        return reply.text

    return asyncio.run(caller.closing(ask()))


def test_a_hit_is_typed_and_an_unknown_version_stops_the_run(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, CacheMode.READ_WRITE)
    cache.put(_key(), REPLY.stored())
    assert _ask(cache) == REPLY.text
    newer = {**REPLY.stored(), "version": 2}
    cache.put(_key(), newer)
    # Neither a crash of the item nor a miss (which would call the model and overwrite it).
    with pytest.raises(FatalLLMError, match="version 2"):
        _ask(cache)
    cache.close()
    with contextlib.closing(ReadOnlyCache(tmp_path)) as stored:
        assert stored.get(_key()) == newer  # not overwritten by a new call
    replay = ResponseCache(tmp_path, CacheMode.REPLAY)
    with pytest.raises(FatalLLMError, match="version 2"):
        _ask(replay)
    replay.close()


def test_merging_refuses_an_unknown_version_and_keeps_a_legacy_entry(tmp_path: Path) -> None:
    legacy = {k: v for k, v in REPLY.stored().items() if k != "version"}
    old, new, bad = (ResponseCache(tmp_path / n, CacheMode.READ_WRITE)
                     for n in ("old", "new", "bad"))
    old.put("k", legacy)
    new.put("k", REPLY.stored())
    bad.put("k", {**REPLY.stored(), "version": 9})
    for cache in (old, new, bad):
        cache.close()
    counts = merge_caches([tmp_path / "old", tmp_path / "new"], tmp_path / "out")
    assert (counts.copied, counts.present, counts.conflicts) == (1, 1, 0)
    with pytest.raises(CacheFormatError, match="version 9"):
        merge_caches([tmp_path / "bad"], tmp_path / "out2")
