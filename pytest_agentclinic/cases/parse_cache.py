"""Parsed case files kept by content: a file is parsed once, not once per xdist worker.

Every xdist worker collects every item, so each parsed the whole case file: 10,000 cases cost
each of 8 workers the YAML parse and the validation. Here the first process to load a file
writes what it loaded (its cases as pydantic JSON, its errors) under the cache directory,
keyed by a hash of the file's bytes, its resolved path, its specialty sidecar and this
format's version; the others wait for it (a lock per file) and read that back:
``Case.model_validate_json`` over a case is ~15x cheaper than reading it from YAML.

The form is JSON lines (never pickle: nothing read back executes): a header of the file's
format, errors, lines and specialty markers, the cases' names, then one case a line. A
damaged or foreign entry is ignored and rewritten; a cache directory that cannot be written
means each process parses on its own. Files of a format an extension reads are not kept
(their reader may depend on more than the file's bytes).

An xdist worker of a split run makes the items of its share of the cases only: it reads an
entry back with ``load(..., stored=True)``, which decodes no case. The header gives each
case's line and the file's specialty markers; the line after it each case's dataset and id,
decoded only by a worker whose share goes by them (``--agent-shard``): a share dealt by
position alone finds its cases without decoding a name (10,000 cases' names and positions,
decoded in each of 8 workers, were ~3 ms of CPU and ~2.7 MB at its collection's peak). A
protocol still expands the file's cases together (:class:`~.stored.StoredCases` builds
another worker's case from its text when the protocol reads it, and keeps it no longer).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..core.case import Case
from ..core.heap import gc_paused
from ..core.versioned import Format
from .errors import CaseError
from .loaders import CASE_SUFFIXES, SIDECAR_SUFFIX, LoadedFile, load_case_file
from .stored import GivenFields, MarkerOf, StoredCases, split_lines

#: The stored form's version: a change of it (or of the package's) makes a new key.
#: 2: the header lists each case's dataset, id, specialty and specialty marker (``keys``).
#: 3: the header gives the file's specialty markers (``markers``) and no case positions (a
#: sidecar's specialties are in the stored cases); the cases' names are a line of their own.
FORMAT_VERSION = 3
#: An entry of another version is not read (it is parsed anew and rewritten).
PARSE_CACHE_FORMAT = Format("parse cache", FORMAT_VERSION)
#: Where under the cache directory the parsed files live.
FOLDER = "parsed-cases"


def load(path: Path, cache_dir: Path | None, *, stored: bool = False,
         models_kept: bool = True, names: bool = True) -> LoadedFile:
    """:func:`~.loaders.load_case_file` of ``path``, parsed once for all processes that share
    ``cache_dir`` (None: no cache).

    ``stored``: a load read back from the store decodes no case: its cases are
    ``LoadedFile.stored`` (:class:`~.stored.StoredCases`), ``cases`` and ``texts`` are
    empty. A load this process parses itself has its cases decoded as ever. ``names``: the
    read-back decodes the cases' names (for :meth:`.StoredCases.choose` by names); without
    them it can only choose by position.

    ``models_kept=False``: the caller keeps the cases' texts, not their models, so a load
    that has texts (``texts``, or ``stored``) shares only the models' sets of given fields
    (``load_case_file(share=False)``); a load without texts (no store) shares every part."""
    if cache_dir is None or path.suffix not in CASE_SUFFIXES:
        return load_case_file(path)
    try:
        key = _key(path)
    except OSError:
        return load_case_file(path)  # unreadable: the loader says why
    entry = cache_dir / FOLDER / f"{_path_tag(path)}-{key}.jsonl"
    def read(entry: Path, path: Path) -> LoadedFile | None:
        return _read_stored(entry, path, names) if stored else _read(entry, path, models_kept)

    found = read(entry, path)
    if found is not None:
        return found
    try:
        with _locked(entry):
            found = read(entry, path)  # another process wrote it while this one waited
            if found is not None:
                return found
            loaded = load_case_file(path, share=models_kept)
            _write(entry, loaded)
            _forget_older(entry)
            return loaded
    except OSError:
        return load_case_file(path)


def load_all(argv: list[str]) -> None:
    """``CACHE_DIR FILE...``: parse each file into the store (what the controller of an xdist
    run starts in a process of its own while its workers start; ``plugin.scheduling``). A
    file that fails is left to the workers, which meet the failure again."""
    cache_dir, *files = argv
    for name in files:
        with contextlib.suppress(Exception):
            load(Path(name), Path(cache_dir), models_kept=False)


def _path_tag(path: Path) -> str:
    """What names the entries of one case file (its resolved path's hash)."""
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def _forget_older(entry: Path) -> None:
    """Remove the entries of earlier versions of the file: one entry a case file, not one
    per edit of it."""
    tag = entry.name.split("-", 1)[0]
    for old in entry.parent.glob(f"{tag}-*.jsonl"):
        if old != entry:
            with contextlib.suppress(OSError):
                old.unlink()


def _key(path: Path) -> str:
    digest = hashlib.sha256(f"{FORMAT_VERSION}\0{__version__}\0{path.resolve()}\0".encode())
    digest.update(path.read_bytes())
    sidecar = path.with_name(path.stem + SIDECAR_SUFFIX)
    with contextlib.suppress(OSError):
        digest.update(b"\0sidecar\0" + sidecar.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(entry: Path) -> Iterator[None]:
    entry.parent.mkdir(parents=True, exist_ok=True)
    # One lock a case file (not a version of it): nothing accumulates.
    with open(entry.parent / f"{entry.name.split('-', 1)[0]}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _error(error: CaseError | None) -> list[Any] | None:
    return None if error is None else [str(error.path), error.line, error.field, error.message]


def _unerror(data: list[Any] | None, path: Path) -> CaseError | None:
    # Named by the reader's own path to the file (or to its sidecar beside it): the process
    # that stored the load may have been given the file by another path (relative, say).
    if data is None:
        return None
    return CaseError(path.with_name(Path(data[0]).name), int(data[1]), str(data[2]),
                     str(data[3]))


def _write(entry: Path, loaded: LoadedFile) -> None:
    marker_of = MarkerOf()
    markers: dict[str, str] = {}
    for _line, case in loaded.cases:
        markers.setdefault(marker_of(case), case.specialty)
    header = {"version": FORMAT_VERSION, "format": loaded.format,
              "lines": [line for line, _ in loaded.cases], "markers": markers,
              "errors": [_error(e) for e in loaded.errors], "not_cases": loaded.not_cases,
              "damaged": loaded.damaged, "sidecar_error": _error(loaded.sidecar_error)}
    names = [[case.dataset, case.id] for _line, case in loaded.cases]
    temporary = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
    # exclude_unset: read back, each model has the same given fields as parsed.
    texts = [case.model_dump_json(exclude_unset=True) for _line, case in loaded.cases]
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        out.write(json.dumps(names) + "\n")
        for text in texts:
            out.write(text + "\n")
    os.replace(temporary, entry)
    loaded.texts = texts


def _loaded(header: dict[str, Any], path: Path) -> LoadedFile:
    """The stored load's header as a load of ``path`` with no cases yet."""
    errors = (_unerror(data, path) for data in header["errors"])
    return LoadedFile(path=path, format=str(header["format"]), errors=[e for e in errors if e],
                      not_cases=header["not_cases"], damaged=bool(header["damaged"]),
                      sidecar_error=_unerror(header["sidecar_error"], path))


def _read_stored(entry: Path, path: Path, names: bool) -> LoadedFile | None:
    """The stored load of ``path`` with its cases undecoded, or None (as :func:`_read`);
    with the cases' names decoded when ``names`` (else that line is only checked)."""
    try:
        with open(entry, "rb") as stored:
            header = PARSE_CACHE_FORMAT.upgrade(json.loads(stored.readline()), str(entry))
            names_line = stored.readline()
            if not (names_line.startswith(b"[") and names_line.endswith(b"]\n")):
                raise ValueError("the stored cases' names are not a JSON list")
            data = stored.read()
        loaded = _loaded(header, path)
        markers = {str(k): str(v) for k, v in header["markers"].items()}
        decoded = [(str(d), str(i)) for d, i in json.loads(names_line)] if names else None
        loaded.stored = StoredCases(data, split_lines(data), array("q", header["lines"]),
                                    markers, decoded)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError):
        return None  # absent, being replaced, or not this version's: parse the file
    return loaded


def _read(entry: Path, path: Path, models_kept: bool = True) -> LoadedFile | None:
    """The stored load of ``path``, or None when there is none (or it cannot be used);
    its models share their equal parts when ``models_kept``, else their sets of given fields
    (:class:`~.stored.GivenFields`)."""
    try:
        with open(entry, encoding="utf-8") as stored, gc_paused():
            header = PARSE_CACHE_FORMAT.upgrade(json.loads(stored.readline()), str(entry))
            stored.readline()  # the cases' names: in the cases
            loaded = _loaded(header, path)
            if not models_kept:
                loaded.shared = GivenFields()
            for line, text in zip(header["lines"], stored, strict=True):
                case = Case.model_validate_json(text)
                loaded.shared.share(case)
                loaded.cases.append((int(line), case))
                loaded.texts.append(text.rstrip("\n"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ValidationError):
        return None  # absent, being replaced, or not this version's: parse the file
    return loaded
