"""Where case files may come from, which files are case files, and their node ids.

A run involves agents only when it asks to (:func:`may_involve_agents`): it gives an
``--agent-*`` option (or its ini twin), names a case file, names a path that the ini's
``agent_cases`` covers, or names a folder holding a file that positively looks like cases
(:func:`looks_like_cases`: a key only a case has, found in the file's first bytes). A
repository that merely has the plugin installed, whose ``tests/data`` holds JSON, YAML or
CSV fixtures, never has them parsed, and pays no import for the plugin's stack.

In a folder walk only files that look like cases are parsed; a data file that does not is
left alone. A file named on the command line is parsed whatever it holds (the user pointed
at it as cases), so its problems are errors.

Nothing here imports the case loaders: it runs in every pytest run that names a path.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import pytest

from ..core import extensions

Origin = Literal["file", "folder"]
_roots_key = pytest.StashKey[tuple[Path, ...]]()

#: The suffixes of the project's own readers (``cases.loaders``; a test checks they agree).
BUILT_IN_SUFFIXES = (".csv", ".json", ".jsonl", ".yaml", ".yml")
#: A case file's specialty sidecar: read with its case file, never a case file itself.
SIDECAR_SUFFIX = ".specialties.json"
#: How much of a file the sniff reads: a case's own key comes early in any case file.
SNIFF_BYTES = 256 * 1024
#: A key only a case record has (JSON or YAML): the diagnosis, AgentClinic's OSCE record,
#: NEJM's patient_info, or the project's ``cases`` list (a file meant as cases, even an
#: empty one). Fixtures of other kinds (``{}``, ``[]``, a config) have none.
_CASE_KEY = re.compile(rb"""(?:^|[\s{,'"-])["']?"""
                       rb"""(?:diagnosis|OSCE_Examination|patient_info|cases)"""
                       rb"""["']?\s*:""", re.MULTILINE)
#: CRAFT-MD's CSV: the header names the vignette column.
_CSV_HEADER = re.compile(rb"^[^\n]*\bcase_vignette\b")


def extension_suffixes() -> tuple[str, ...]:
    """The suffixes installed case formats declare (their entry points' names; nothing is
    imported to know them), and those a conftest registered."""
    formats = sys.modules.get("pytest_agentclinic.cases.formats")
    registered: tuple[str, ...] = formats.registered() if formats is not None else ()
    return (*registered, *(n if n.startswith(".") else f".{n}"
                           for n in (p.name for p in extensions.declared(extensions.CASE_FORMATS))))


def case_suffix(path: Path) -> bool:
    """Whether ``path``'s name allows it to be a case file."""
    if path.name.endswith(SIDECAR_SUFFIX):
        return False
    return path.suffix in BUILT_IN_SUFFIXES or path.suffix in extension_suffixes()


def looks_like_cases(path: Path | str, suffixes: tuple[str, ...] | None = None) -> bool:
    """Whether ``path`` positively looks like a case file: an extension's suffix (that
    format is cases by definition), or a key only a case has in its first bytes. An empty
    file, ``{}``, ``[]``, a header-only CSV or any other fixture does not."""
    name = os.fspath(path)
    suffix = os.path.splitext(name)[1]
    if name.endswith(SIDECAR_SUFFIX):
        return False
    if suffix not in BUILT_IN_SUFFIXES:
        return suffix in (extension_suffixes() if suffixes is None else suffixes)
    # os-level reads: a folder walk may sniff thousands of small fixtures (2,000 in ~25 ms).
    try:
        fd = os.open(name, os.O_RDONLY)
        try:
            head = os.read(fd, SNIFF_BYTES)
        finally:
            os.close(fd)
    except OSError:
        return False
    pattern = _CSV_HEADER if suffix == ".csv" else _CASE_KEY
    return pattern.search(head.removeprefix(b"\xef\xbb\xbf")) is not None


def _ignored(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def _walk(folder: str, norecurse: tuple[str, ...]) -> Iterator[str]:
    """The files pytest's own walk would visit under ``folder`` (roughly: its
    ``norecursedirs`` and virtual environments skipped)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if not _ignored(entry.name, norecurse) and \
                    not os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                yield from _walk(entry.path, norecurse)
        else:
            yield entry.path


def _covered(path: Path, ini_paths: tuple[Path, ...]) -> bool:
    return any(path == p or p in path.parents or path in p.parents for p in ini_paths)


def may_involve_agents(config: pytest.Config, ini_paths: tuple[Path, ...]) -> bool:
    """For a run with paths on the command line: whether one of them can hold cases (see
    the module's docstring). Option-given runs are decided by the caller."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return bool(ini_paths)
    norecurse = tuple(config.getini("norecursedirs"))
    suffixes = extension_suffixes()
    for root in case_roots(config, ini_paths):
        if _covered(root, ini_paths):
            return True
        if root.is_file():
            if case_suffix(root):
                return True
        elif root.is_dir() and any(looks_like_cases(p, suffixes)
                                   for p in _walk(str(root), norecurse)):
            return True
    return False


def case_roots(config: pytest.Config, ini_paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The paths on the command line, or, for a plain ``pytest``, those of ``agent_cases``."""
    if _roots_key not in config.stash:
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            here = config.invocation_params.dir
            roots = tuple((here / a.split("::")[0]).resolve() for a in config.args)
        else:
            roots = tuple(p.resolve() for p in ini_paths)
        config.stash[_roots_key] = roots
    return config.stash[_roots_key]


def extra_args(config: pytest.Config, ini_paths: tuple[Path, ...]) -> list[str]:
    """For a plain ``pytest``: the ``agent_cases`` paths pytest's own search would miss."""
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return []
    here = [Path(a).resolve() for a in config.args]
    return [str(p) for p in ini_paths if not any(h == p or h in p.parents for h in here)]


def case_origin(config: pytest.Config, path: Path,
                ini_paths: tuple[Path, ...]) -> Origin | None:
    """``file`` when ``path`` was named itself, ``folder`` when it lies in a named folder
    and looks like cases, None when it must not be collected as cases."""
    from ..cases.loaders import has_case_suffix

    if not has_case_suffix(path):
        return None
    resolved = path.resolve()
    roots = case_roots(config, ini_paths)
    if resolved in roots:
        return "file"
    if any(r in resolved.parents for r in roots) and (looks_like_cases(path)
                                                      or _extension_records(path)):
        return "folder"
    return None


def _extension_records(path: Path) -> bool:
    """Whether a JSON-lines file's first record has the keys of an extension's record shape
    (MediQ's ``question``/``facts``/``options``): such files hold cases too. Asked during
    collection only, when the run involves agents and the extensions may be loaded."""
    if path.suffix != ".jsonl":
        return False
    import json

    from ..cases.formats import jsonl_shape_for

    try:
        with path.open("rb") as handle:
            first = handle.readline(SNIFF_BYTES)
        record = json.loads(first.removeprefix(b"\xef\xbb\xbf"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and jsonl_shape_for(record) is not None


def case_nodeid(config: pytest.Config, path: Path) -> str | None:
    """The file's node id: pytest's own under the rootdir; outside it, the path relative to
    where pytest was started (pytest would give ``""`` and two files would share ids)."""
    try:
        path.resolve().relative_to(config.rootpath)
        return None
    except ValueError:
        return os.path.relpath(path, config.invocation_params.dir).replace(os.sep, "/")
