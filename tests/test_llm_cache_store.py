"""The response cache is data: JSON under a format marker, never a pickle; damaged or
crafted caches are refused in one line, and sources are never written."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_agentclinic.cli import main
from pytest_agentclinic.llm.cache import CacheMode, ResponseCache
from pytest_agentclinic.llm.errors import FatalLLMError


class _Evil:
    """Unpickling this creates ``marker``: the proof that a pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _filled(directory: Path, **entries: str) -> Path:
    cache = ResponseCache(directory, CacheMode.READ_WRITE)
    for key, text in entries.items():
        cache.put(key, {"text": text, "prompt_tokens": 1})
    cache.close()
    return directory


def _rows(directory: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(directory / "cache.db") as db:
        rows = db.execute(sql, args).fetchall()
    db.close()
    return rows


def _craft(directory: Path, marker: Path) -> None:
    """Every entry's value replaced by a pickle that would create ``marker``."""
    payload = pickle.dumps(_Evil(marker))
    _rows(directory, "UPDATE Cache SET mode = 4, value = ? WHERE key != ?", payload,
          "\x1fagentclinic-cache-format")


def test_values_are_stored_as_json_text_under_a_format_marker(tmp_path: Path) -> None:
    _filled(tmp_path, k1="one")
    rows: dict[object, object] = {k: v for k, v in _rows(tmp_path, "SELECT key, value FROM Cache")}
    assert rows["k1"] == '{"text":"one","prompt_tokens":1}'
    assert rows["\x1fagentclinic-cache-format"] == "json-1"
    assert {m for (m,) in _rows(tmp_path, "SELECT mode FROM Cache")} == {1}  # raw, no pickle


def test_long_replies_go_to_text_files_and_come_back(tmp_path: Path) -> None:
    text = "word " * 20_000
    _filled(tmp_path, long=text)
    for mode in (CacheMode.READ_WRITE, CacheMode.REPLAY):
        cache = ResponseCache(tmp_path, mode)
        assert cache.get("long") == {"text": text, "prompt_tokens": 1}
        cache.close()


@pytest.mark.parametrize("mode", [CacheMode.REPLAY, CacheMode.READ_WRITE])
def test_a_crafted_pickle_row_runs_nothing_in_a_run(tmp_path: Path, mode: CacheMode) -> None:
    cache_dir = _filled(tmp_path / "cache", k1="one")
    marker = tmp_path / "pwned"
    _craft(cache_dir, marker)
    cache = ResponseCache(cache_dir, mode)
    with pytest.raises(FatalLLMError, match="refused"):
        cache.get("k1")
    cache.close()
    assert not marker.exists()


def test_a_crafted_pickle_row_runs_nothing_in_merge_cache(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache_dir = _filled(tmp_path / "cache", k1="one")
    marker = tmp_path / "pwned"
    _craft(cache_dir, marker)
    assert main(["merge-cache", str(cache_dir), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert not marker.exists()
    assert len(err.strip().splitlines()) == 1 and "pickled" in err


def test_an_old_pickle_cache_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    import diskcache

    with diskcache.Cache(str(tmp_path)) as old:  # what earlier versions wrote
        old.set("k1", {"text": "one"})
    for mode in (CacheMode.REPLAY, CacheMode.READ_WRITE):
        cache = ResponseCache(tmp_path, mode)
        with pytest.raises(FatalLLMError, match=r"older version .*pickled"):
            cache.get("k1")
        cache.close()


def _shard_missing_files(tmp_path: Path) -> Path:
    shard = _filled(tmp_path / "shard", a="x" * 40_000, b="y" * 40_000, c="short")
    for value in shard.rglob("*.val"):
        value.unlink()
    return shard


def _zero_byte(tmp_path: Path) -> Path:
    (tmp_path / "shard").mkdir()
    (tmp_path / "shard" / "cache.db").write_bytes(b"")
    return tmp_path / "shard"


@pytest.mark.parametrize(("build", "expected"), [
    (_zero_byte, "not a response cache"),
    (_shard_missing_files, "value files are missing"),
])
def test_merge_cache_refuses_a_damaged_shard_and_leaves_it_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], build: object,
        expected: str) -> None:
    shard = build(tmp_path)  # type: ignore[operator]
    before = {p: p.read_bytes() for p in shard.rglob("*") if p.is_file()}
    assert main(["merge-cache", str(shard), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err, err
    assert {p: p.read_bytes() for p in shard.rglob("*") if p.is_file()} == before


def test_merge_cache_reads_a_read_only_source(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    shard = _filled(tmp_path / "shard", k1="one", k2="two")
    _read_only(shard)
    try:
        assert main(["merge-cache", str(shard), "--out", str(tmp_path / "out")]) == 0
    finally:
        _writable(shard)
    assert "2 copied" in capsys.readouterr().out
    merged = ResponseCache(tmp_path / "out", CacheMode.REPLAY)
    assert merged.get("k2") == {"text": "two", "prompt_tokens": 1}
    merged.close()


def _read_only(directory: Path) -> None:
    for path in [*directory.rglob("*"), directory]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable(directory: Path) -> None:
    for path in [directory, *directory.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_replay_reads_a_read_only_warm_cache(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cache_dir = _filled(tmp_path / "cache", k1="one")
    _read_only(cache_dir)
    before = {p: p.read_bytes() for p in cache_dir.rglob("*") if p.is_file()}
    if os.geteuid() == 0:  # root writes read-only directories: any write fails instead
        import diskcache

        def refuse(*args: object, **kwargs: object) -> None:
            raise sqlite3.OperationalError("attempt to write a readonly database")

        monkeypatch.setattr(diskcache, "Cache", refuse)
    try:
        cache = ResponseCache(cache_dir, CacheMode.REPLAY)
        assert cache.probe() is None
        assert cache.get("k1") == {"text": "one", "prompt_tokens": 1}
        assert cache.get("k2") is None
        cache.close()
    finally:
        _writable(cache_dir)
    assert {p: p.read_bytes() for p in cache_dir.rglob("*") if p.is_file()} == before


# --- the write path: batches written by the cache's own thread ----------------------------

def test_stored_replies_wait_as_hits_and_are_written_in_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentclinic.llm import cache as cache_module

    written: list[list[str]] = []
    first_batch_started, release = threading.Event(), threading.Event()
    write = cache_module._Writer._write

    def held_write(self: Any, batch: dict[str, str]) -> None:
        written.append(sorted(batch))
        first_batch_started.set()
        assert release.wait(30)
        write(self, batch)

    monkeypatch.setattr(cache_module._Writer, "_write", held_write)
    cache = ResponseCache(tmp_path, CacheMode.READ_WRITE)
    cache.put("k00", {"text": "first", "prompt_tokens": 1})
    assert first_batch_started.wait(30)
    for i in range(1, 21):  # the writer is busy with the first: these wait together
        cache.put(f"k{i:02d}", {"text": f"reply {i}", "prompt_tokens": 1})
    # A reply not yet written is already a hit, and nothing of it is on disk yet.
    assert cache.get("k07") == {"text": "reply 7", "prompt_tokens": 1}
    assert _rows(tmp_path, "SELECT count(*) FROM Cache WHERE key LIKE 'k%'") == [(0,)]
    release.set()
    cache.flush()
    assert written == [["k00"], [f"k{i:02d}" for i in range(1, 21)]]
    assert _rows(tmp_path, "SELECT count(*) FROM Cache WHERE key LIKE 'k%'") == [(21,)]
    cache.close()


_CRASH = """
import os, signal, sys
from pathlib import Path
from pytest_agentclinic.llm.cache import CacheMode, ResponseCache

cache = ResponseCache(Path(sys.argv[1]), CacheMode.READ_WRITE)
for encounter in range(3):
    for call in range(4):
        cache.put(f"e{encounter}-c{call}", {"text": f"reply {encounter}.{call}"})
    cache.flush()  # the encounter's end
how = sys.argv[2]
if how == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
cache.put("after", {"text": "stored, then the process exits without closing its cache"})
"""


@pytest.mark.parametrize("how", ["killed", "exits without closing"])
def test_replies_written_in_batches_survive_the_process(tmp_path: Path, how: str) -> None:
    script = tmp_path / "crash.py"
    script.write_text(_CRASH)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "cache"), how],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode == -signal.SIGKILL) == (how == "killed"), done.stderr
    cache = ResponseCache(tmp_path / "cache", CacheMode.REPLAY)
    for encounter in range(3):
        for call in range(4):
            assert cache.get(f"e{encounter}-c{call}") == {"text": f"reply {encounter}.{call}"}
    assert (cache.get("after") is None) == (how == "killed")
    cache.close()


def test_a_failed_call_is_never_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    from pytest_agentclinic.llm.caller import CallSettings, ModelCaller
    from pytest_agentclinic.llm.errors import LLMError
    from pytest_agentclinic.llm.retry import RetryPolicy
    from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply

    def script(request: Any) -> FakeReply:
        ok = "fine" in request.last_user
        return FakeReply("a reply" if ok else "overloaded", status=200 if ok else 503)

    cache = ResponseCache(tmp_path, CacheMode.READ_WRITE)
    with FakeOpenAIServer(script) as server:
        caller = ModelCaller(CallSettings(api_base=server.url, timeout=10,
                                          policy=RetryPolicy(attempts=2, backoff=0.001)),
                             cache)

        async def calls() -> None:
            try:
                await caller.complete(role="doctor", model="openai/x", case_id="c", sample=0,
                                      messages=[{"role": "user", "content": "fine"}],
                                      prompt_version="v")
                with pytest.raises(LLMError):
                    await caller.complete(role="doctor", model="openai/x", case_id="c",
                                          sample=0, prompt_version="v",
                                          messages=[{"role": "user", "content": "fail"}])
            finally:
                await caller.aclose()

        asyncio.run(calls())
    cache.close()
    # The reply, and the model the server says it serves; nothing of the failed call.
    values = [json.loads(str(row[0])) for row in _rows(
        tmp_path, "SELECT value FROM Cache WHERE key != ?", "\x1fagentclinic-cache-format")]
    assert [v["text"] for v in values if "text" in v] == ["a reply"]
    assert [v["served"] for v in values if "text" not in v] == ["fake"]
