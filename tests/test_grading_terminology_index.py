"""The terminology's SQLite index answers exactly as the table loaded into memory, and a cache
directory that is unwritable, raced for or holds a damaged file never breaks grading."""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agentclinic.grading import terminology_cache
from pytest_agentclinic.grading.terminology import key, normaliser_fingerprint
from pytest_agentclinic.grading.terminology_index import SqliteIndex, Stamp, open_index
from pytest_agentclinic.grading.terminology_memory import MemoryIndex, joined
from pytest_agentclinic.grading.terminology_table import (
    DATA_FILE,
    FORMAT_VERSION,
    Header,
    Row,
    read_table,
    write_table,
)
from pytest_agentclinic.grading.terms.concepts import Terminology

needs_table = pytest.mark.skipif(not DATA_FILE.exists(), reason="no bundled terminology")
#: The tests of ``both`` share its table and index (a build of the whole index): under
#: ``--dist loadgroup`` they run on one worker, which builds them once, not one per worker.
BOTH = pytest.mark.xdist_group("terminology_both")
HARD = ["myocardial infarction", "heart attack", "psoriasis", "plaque psoriasis", "melanoma",
        "rosacea", "lung cancer", "small cell lung cancer", "schizophrenia",
        "paranoid schizophrenia", "measles", "rubeola", "neoplasm", "disease", "lymphoma",
        "hodgkin lymphoma", "chickenpox", "varicella", "type 2 diabetes mellitus",
        "diabetes mellitus", "valley fever", "coccidioidomycosis", "", "no such illness"]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Terminology, Terminology]:
    """The bundled table in memory, and through an index built in an empty directory."""
    memory = Terminology.load(cache=None)
    indexed = Terminology.load(cache=tmp_path_factory.mktemp("index"))
    assert isinstance(memory.backend, MemoryIndex)
    assert isinstance(indexed.backend, SqliteIndex)
    return memory, indexed


def _sample() -> list[Row]:
    return read_table()[1][::97]


def _names(rows: list[Row]) -> list[str]:
    return HARD + [name for row in rows for name in row.names[:3]]


def _idents(rows: list[Row]) -> list[str]:
    return ["MESH:NOPE", "ICD:NOPE", "nothing"] + [
        i for row in rows for i in (row.id, row.cluster, *row.parents)]


@needs_table
@BOTH
def test_every_lookup_answers_as_in_memory(both: tuple[Terminology, Terminology]) -> None:
    memory, indexed = both
    rows = _sample()
    assert len(rows) > 700
    assert indexed.site_words == memory.site_words and memory.site_words
    for name in _names(rows):
        assert indexed.concepts(name) == memory.concepts(name), name
        assert indexed.known(name) == memory.known(name), name
        for word in name.lower().split():
            assert indexed.one_word_name(word) == memory.one_word_name(word), word
        for word in key(name):
            assert indexed.is_word(word) == memory.is_word(word), word
    for ident in _idents(rows):
        for method in ("label", "cluster", "ancestors", "breadth"):
            assert getattr(indexed, method)(ident) == getattr(memory, method)(ident), (
                method, ident)
    assert not indexed.backend.degraded  # type: ignore[attr-defined]  # answered by SQLite


@needs_table
@BOTH
def test_every_relation_answers_as_in_memory(both: tuple[Terminology, Terminology]) -> None:
    memory, indexed = both
    rows = _sample()
    keys = [key(n) for n in _names(rows)]
    # Neighbours in the sample, each name against its own parents' names (broader and
    # narrower), and every hard name against every other.
    pairs = list(itertools.pairwise(keys))
    labels = {r.id: r.names[0] for r in read_table()[1]}
    pairs += [(key(row.names[0]), key(labels[p])) for row in rows for p in row.parents
              if p in labels]
    hard = [key(n) for n in HARD]
    pairs += [(g, t) for g in hard for t in hard]
    relations = 0
    for given, truth in pairs + [(t, g) for g, t in pairs]:
        link = indexed.link(given, truth)
        assert link == memory.link(given, truth), (given, truth)
        assert indexed.icd_relation(given, truth) == memory.icd_relation(given, truth)
        relations += link is not None
    assert relations > 300  # the sample exercises the hierarchy, not only misses
    assert not indexed.backend.degraded  # type: ignore[attr-defined]


@needs_table
@BOTH
def test_backend_lookups_match(both: tuple[Terminology, Terminology]) -> None:
    memory, indexed = both
    m, s = memory.backend, indexed.backend
    first_words: set[str] = set()
    for row in _sample():
        for name_key in row.keys:
            assert s.concepts_of(name_key) == m.concepts_of(name_key)
            assert s.icd_codes(name_key) == m.icd_codes(name_key)
            assert s.icd_described(name_key) == m.icd_described(name_key)
            assert s.is_single(name_key) == m.is_single(name_key)
            assert all(s.is_word(w) == m.is_word(w) for w in name_key.split())
            first_words.update(name_key.split()[:1])
        for ident in (row.id, *row.parents):
            assert s.parents_of(ident) == m.parents_of(ident)
            assert sorted(s.members_of(row.cluster)) == sorted(m.members_of(row.cluster))
            assert s.below(ident) == m.below(ident)
    # The index answers a word by a scan of every name (tens of milliseconds, asked for few
    # words in a run): every 6th of the sample's first words, in order, and the commonest.
    words = [*sorted(first_words)[::6], "acute", "syndrome", "disease"]
    assert len(words) > 100
    for word in words:
        assert s.keys_with(word) == m.keys_with(word), word


# --- the cache directory -------------------------------------------------------------------

def _mini_table(path: Path, normaliser: str | None = None) -> Path:
    names = {"MESH:D1": ["Psoriasis", "Psoriases"], "MESH:D2": ["Plaque psoriasis"],
             "ICD:L40": ["Psoriasis"], "ICD:L40.0": ["Psoriasis vulgaris", "Plaque psoriasis"]}
    parents = {"MESH:D2": ("MESH:D1",), "ICD:L40.0": ("ICD:L40",)}
    rows = [Row(i, i, parents.get(i, ()), tuple("p" + "s" * (len(n) - 1)),
                tuple(joined(key(x)) for x in n), tuple(n)) for i, n in names.items()]
    write_table(path, Header(FORMAT_VERSION, normaliser or normaliser_fingerprint(),
                             frozenset({"lip"})), rows)
    return path


def _answers(terms: Terminology) -> list[object]:
    p, pv = key("plaque psoriasis"), key("psoriasis")
    return [terms.concepts("psoriasis vulgaris"), terms.link(p, pv), terms.icd_relation(p, pv),
            terms.breadth("MESH:D1"), terms.ancestors("ICD:L40.0"), sorted(terms.site_words)]


def test_the_cache_directory_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(terminology_cache.ENV, raising=False)
    assert terminology_cache.cache_dir() == tmp_path / "xdg" / "pytest-agentclinic"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert terminology_cache.cache_dir() == tmp_path / ".cache" / "pytest-agentclinic"
    monkeypatch.setenv(terminology_cache.ENV, str(tmp_path / "mine"))
    assert terminology_cache.cache_dir() == tmp_path / "mine"
    assert terminology_cache.cache_dirs() == [tmp_path / "mine"]  # configured: that one only
    monkeypatch.setenv(terminology_cache.ENV, "off")
    assert terminology_cache.cache_dir() is None and terminology_cache.cache_dirs() == []


def test_a_read_only_home_builds_in_a_private_temporary_directory(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.delenv(terminology_cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))  # cannot be created
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    private = terminology_cache.private_temp_dir()
    assert private.parent == tmp_path / "tmp"
    assert terminology_cache.writable_cache_dir() == private
    terms = Terminology.load(table)
    assert isinstance(terms.backend, SqliteIndex) and terms.backend.path.parent == private
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert _answers(terms) == _answers(Terminology.load(table, cache=None))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making a directory another user's takes root")
def test_a_temporary_directory_of_another_user_is_never_read(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    private = terminology_cache.private_temp_dir()
    assert isinstance(Terminology.load(table, cache=private).backend, SqliteIndex)
    os.chown(private, 4242, -1)  # planted by another user: its index could change verdicts
    assert isinstance(Terminology.load(table, cache=private).backend, MemoryIndex)


def test_default_load_builds_in_the_configured_directory(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    monkeypatch.setenv(terminology_cache.ENV, str(tmp_path / "cache"))
    terms = Terminology.load(table)
    assert isinstance(terms.backend, SqliteIndex)
    assert terms.backend.path.parent == tmp_path / "cache"
    assert _answers(terms) == _answers(Terminology.load(table, cache=None))
    monkeypatch.setenv(terminology_cache.ENV, "off")
    assert isinstance(Terminology.load(table).backend, MemoryIndex)


@pytest.mark.parametrize("normaliser", [None, "stale"])
def test_mini_index_answers_as_in_memory(tmp_path: Path, normaliser: str | None) -> None:
    # A stale normaliser fingerprint: the keys are recomputed from the names, in both.
    table = _mini_table(tmp_path / "t.tsv.gz", normaliser)
    indexed = Terminology.load(table, cache=tmp_path / "cache")
    assert isinstance(indexed.backend, SqliteIndex)
    expected = _answers(Terminology.load(table, cache=None))
    assert _answers(indexed) == expected
    assert expected[1] is not None and expected[2] is not None


def test_unwritable_cache_falls_back_to_memory(tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    read_only = tmp_path / "read-only"
    read_only.mkdir(mode=0o500)
    expected = _answers(Terminology.load(table, cache=None))
    for cache in (blocker / "cache", read_only):
        terms = Terminology.load(table, cache=cache)
        if cache == read_only and os.access(read_only, os.W_OK):
            continue  # root writes anywhere: the path under a file covers the fallback
        assert isinstance(terms.backend, MemoryIndex)
        assert _answers(terms) == expected
    # Nothing there, or (as root) the index and its build lock.
    assert {p.suffix for p in read_only.iterdir()} in (set(), {".sqlite", ".lock"})


def test_a_build_removes_only_abandoned_temporary_files(tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    cache = tmp_path / "cache"
    cache.mkdir()
    old, fresh = cache / ".terminology-x.sqlite.1.tmp", cache / ".terminology-x.sqlite.2.tmp"
    for leftover in (old, fresh):
        leftover.write_bytes(b"partial")
    os.utime(old, (0, 0))
    assert open_index(table, cache) is not None
    assert not old.exists() and fresh.exists()  # fresh: maybe another process's build


def test_a_ready_index_is_opened_not_rebuilt(tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    first = open_index(table, tmp_path / "cache")
    assert first is not None
    before = first.path.stat()
    second = open_index(table, tmp_path / "cache")
    assert second is not None and second.path == first.path
    assert (second.path.stat().st_ino, second.path.stat().st_mtime_ns) == (
        before.st_ino, before.st_mtime_ns)


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    elif how == "empty":
        path.write_bytes(b"")
    else:  # another table's index under this name: a valid file with the wrong stamp
        other = _mini_table(path.parent.parent / "other.tsv.gz", "other")
        rogue = open_index(other, path.parent.parent / "other")
        assert rogue is not None
        path.write_bytes(rogue.path.read_bytes())


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty", "wrong-stamp"])
def test_a_damaged_or_stale_index_is_rebuilt(tmp_path: Path, how: str) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    built = open_index(table, tmp_path / "cache")
    assert built is not None
    good = built.path.read_bytes()
    _damage(built.path, how)
    terms = Terminology.load(table, cache=tmp_path / "cache")
    assert isinstance(terms.backend, SqliteIndex)
    assert _answers(terms) == _answers(Terminology.load(table, cache=None))
    assert built.path.stat().st_size == len(good)
    assert not list((tmp_path / "cache").glob("*.tmp"))


def test_an_index_damaged_while_open_answers_from_memory(tmp_path: Path) -> None:
    table = _mini_table(tmp_path / "t.tsv.gz")
    terms = Terminology.load(table, cache=tmp_path / "cache")
    backend = terms.backend
    assert isinstance(backend, SqliteIndex)
    with open(backend.path, "r+b") as handle:  # every page but the first (the schema)
        page_size = int.from_bytes(handle.read(18)[16:18], "big")
        handle.seek(page_size)
        handle.write(b"\xff" * (backend.path.stat().st_size - page_size))
    assert _answers(terms) == _answers(Terminology.load(table, cache=None))
    assert backend.degraded


_BUILD = """
import json, sys
from pathlib import Path
from pytest_agentclinic.grading.terms.concepts import Terminology
from pytest_agentclinic.grading.terminology import key
from pytest_agentclinic.grading import terminology_index
built = []
build = terminology_index.build_index
terminology_index.build_index = lambda *args: built.append(1) or build(*args)
terms = Terminology.load(cache=Path(sys.argv[1]))
print(json.dumps([type(terms.backend).__name__, str(getattr(terms.backend, "path", "")),
                  sorted(terms.concepts("heart attack")[1]),
                  terms.link(key("heart attack"), key("myocardial infarction")).kind,
                  len(built)]))
"""


@pytest.fixture
def two_builds(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    cache = tmp_path / "cache"
    procs = [subprocess.Popen([sys.executable, "-c", _BUILD, str(cache)],
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


@needs_table
def test_two_processes_building_at_once_both_get_the_index(
        tmp_path: Path, two_builds: list[subprocess.Popen[str]]) -> None:
    outputs = [json.loads(p.communicate(timeout=120)[0]) for p in two_builds]
    assert [p.returncode for p in two_builds] == [0, 0]
    # One built it; the other waited for that build (not two builds of one file).
    assert sorted(out.pop() for out in outputs) == [0, 1]
    assert outputs[0] == outputs[1]
    kind, path, concepts, link = outputs[0]
    assert kind == "SqliteIndex" and concepts and link == "synonym"
    cache = tmp_path / "cache"
    lock = f".{Path(path).name}.lock"
    assert sorted(p.name for p in cache.iterdir()) == sorted([Path(path).name, lock])
    assert Path(path).name == Stamp.of(DATA_FILE).file_name()
    assert open_index(DATA_FILE, cache) is not None
