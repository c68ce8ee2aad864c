"""Where case files may come from, and their node ids.

Case files are collected only from the paths given on the command line, or (for a plain
``pytest``) from the ini option ``agent_cases``: a repository that merely uses the plugin
never runs encounters by accident. Whether a file *is* a case file is decided later, by a
parse of the whole file (:func:`..cases.loaders.load_case_file`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import pytest

from ..cases.loaders import has_case_suffix

Origin = Literal["file", "folder"]
_roots_key = pytest.StashKey[tuple[Path, ...]]()


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
    """``file`` when ``path`` was named itself, ``folder`` when it lies in a named folder,
    None when it must not be collected as cases."""
    if not has_case_suffix(path):
        return None
    resolved = path.resolve()
    roots = case_roots(config, ini_paths)
    if resolved in roots:
        return "file"
    return "folder" if any(r in resolved.parents for r in roots) else None


def case_nodeid(config: pytest.Config, path: Path) -> str | None:
    """The file's node id: pytest's own under the rootdir; outside it, the path relative to
    where pytest was started (pytest would give ``""`` and two files would share ids)."""
    try:
        path.resolve().relative_to(config.rootpath)
        return None
    except ValueError:
        return os.path.relpath(path, config.invocation_params.dir).replace(os.sep, "/")
