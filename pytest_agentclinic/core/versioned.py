"""Every versioned file format checked when read, with a hook that migrates older files.

A format names itself once (:class:`Format`: what it is, its current version); its one
reader passes what it read through :meth:`Format.upgrade` (or :func:`load_json` for a
pydantic model), which

* returns the data as they are when they are of the current version;
* applies the registered migrations (:func:`register_migration`) one version at a time to
  the data of an older version it knows how to bring forward;
* refuses any other version (newer, older with no migration, not a number) with one line
  naming the file, the format and the version.

As in vcrpy (a cassette's version checked as it is deserialized, older ones upgraded by a
migration) and inspect_ai's ``EvalLog`` (one version field, one reader). A model's
``version`` field accepts its current version only (:meth:`Format.check`, from a field
validator): an older file is never taken for a current one field by field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .. import __version__
from .errors import InputError

M = TypeVar("M", bound=BaseModel)
#: A migration: the data of version N in, the same data as version N + 1 out.
Migration = Callable[[dict[str, Any]], dict[str, Any]]

#: Every format by its kind (filled as the modules defining them are imported).
FORMATS: dict[str, Format] = {}
_MIGRATIONS: dict[tuple[str, int], Migration] = {}


class UnknownVersion(InputError):
    """A file of a version this pytest-agentclinic cannot read (the message says which; a
    ``ValueError`` too, as every input error)."""


@dataclass(frozen=True)
class Format:
    """One versioned file format: ``kind`` names it in messages (``"summary"``)."""

    kind: str
    current: int
    #: The version a file without a ``version`` field is read as (None: refused).
    unversioned: int | None = None

    def __post_init__(self) -> None:
        FORMATS[self.kind] = self

    def readable(self) -> list[int]:
        """The versions this format reads: the current one and each older one from which
        registered migrations lead to it."""
        versions = [self.current]
        while (self.kind, versions[0] - 1) in _MIGRATIONS:
            versions.insert(0, versions[0] - 1)
        return versions

    def check(self, value: object) -> int:
        """A ``version`` field's validator: the current version passes, any other raises
        (read an older file through :meth:`upgrade`, which migrates it)."""
        if value != self.current or isinstance(value, bool) or not isinstance(value, int):
            raise UnknownVersion(self._refusal(value))
        return value

    def upgrade(self, data: Mapping[str, Any], source: str | None) -> dict[str, Any]:
        """``data`` (read from ``source``) as the current version: as they are, migrated,
        or :class:`UnknownVersion` naming the source, the format and the version."""
        version = data.get("version", self.unversioned)
        where = f"{source}: " if source else ""
        readable = self.readable()
        if version is None:
            raise UnknownVersion(f"{where}no 'version' field, so no {self.kind} format "
                                 f"pytest-agentclinic {__version__} reads")
        if isinstance(version, bool) or not isinstance(version, int) or version not in readable:
            raise UnknownVersion(where + self._refusal(version))
        upgraded = dict(data)
        for step in range(version, self.current):
            upgraded = _MIGRATIONS[(self.kind, step)](upgraded)
        upgraded["version"] = self.current
        return upgraded

    def _refusal(self, version: object) -> str:
        readable = self.readable()
        reads = (f"{readable[0]}" if len(readable) == 1
                 else f"{readable[0]} to {readable[-1]}")
        if isinstance(version, bool) or not isinstance(version, int):
            return f"'version' is {version!r}, not a {self.kind} format number"
        if version > self.current:
            return (f"{self.kind} format {version} is newer than pytest-agentclinic "
                    f"{__version__} reads (format {reads}); upgrade it")
        return (f"{self.kind} format {version} is not one pytest-agentclinic {__version__} "
                f"reads (format {reads}; no migration from {version})")


def register_migration(kind: str, from_version: int, migrate: Migration) -> Migration:
    """Bring the data of ``kind``'s format ``from_version`` to ``from_version + 1`` when
    read (the reader sets the new version number)."""
    fmt = FORMATS.get(kind)
    if fmt is None:
        raise ValueError(f"no versioned format named {kind!r} (known: {sorted(FORMATS)})")
    if not 0 <= from_version < fmt.current:
        raise ValueError(f"{kind}: a migration from format {from_version} must start below "
                         f"the current format {fmt.current}")
    _MIGRATIONS[(kind, from_version)] = migrate
    return migrate


def unregister_migration(kind: str, from_version: int) -> None:
    """Drop a migration (tests register and drop their own)."""
    _MIGRATIONS.pop((kind, from_version), None)


def load_json(fmt: Format, model: type[M], raw: str | bytes, source: str | None) -> M:
    """``model`` read from the JSON text ``raw``: validated in one pass when it is of the
    current version (pydantic's JSON parser, in Rust), else upgraded (or refused) by
    :meth:`Format.upgrade` first."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        if not any(error["loc"] == ("version",) for error in exc.errors()):
            raise
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"{source + ': ' if source else ''}not a {fmt.kind}: a JSON "
                         f"{type(data).__name__}, not an object")
    return model.model_validate(fmt.upgrade(data, source))


def read_json(path: Path) -> Any:
    """The JSON document in the file ``path``; text that is not UTF-8 or not JSON is an
    :class:`InputError` naming the file (and the line), so a command reports it in one line.
    An OSError (no such file) is the caller's to handle."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
