"""``summary.json``: one typed, versioned model and its one builder.

The pytest session, ``agentclinic report`` (a summary rebuilt from the records), ``merge``
(shards joined) and ``import-craftmd`` (recorded answers) all build it with
:func:`build_summary`, so a field one of them writes is never lost by another; its one
reader (:func:`pytest_agentclinic.runs.directory.read_summary`) checks the version
(:func:`check_version`) so a summary of a newer format is refused by name rather than
misread, and an older one is migrated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import __version__
from ..core.records import ResultRecord
from ..core.versioned import Format

#: The format of ``summary.json``; a reader refuses a newer one.
SUMMARY_VERSION = 1
#: A summary written before the format was numbered is of the first format.
SUMMARY_FORMAT = Format("summary", SUMMARY_VERSION, unversioned=1)
#: What the builder computes from the records: a header's or an old summary's value of
#: these is replaced, never carried over.
COMPUTED = ("version", "plugin_version", "items", "model_calls", "cache_hits",
            "cache_misses", "cost_usd", "uncached_cost_usd", "served_models", "tables",
            "by_doctor")


class RunSummary(BaseModel):
    """The run's summary: the counts every builder computes from the records, and the
    run's settings (the header: protocol, roles, budgets, command, gate ...) as extra
    fields, which each protocol and command extends."""

    model_config = ConfigDict(extra="allow")

    version: int = SUMMARY_VERSION
    #: The pytest-agentclinic that built this summary.
    plugin_version: str = __version__
    litellm_version: str | None = None
    run: str | None = None
    roles: dict[str, str] = Field(default_factory=dict)
    #: Case file -> its SHA-256.
    case_files: dict[str, str] = Field(default_factory=dict)
    items: int = 0
    bad_case_records: int = 0
    #: Model calls made by the items (cache hits included), counted once each.
    model_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    #: What the run's calls cost (a cache hit costs nothing), and what they would have
    #: cost with no cache.
    cost_usd: float = 0.0
    uncached_cost_usd: float = 0.0
    #: Model -> every served identity its records name.
    served_models: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        return SUMMARY_FORMAT.check(value)


def check_version(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``data`` as a summary of the current format (migrated when older), or
    :class:`~..core.versioned.UnknownVersion` (a ValueError) naming ``where`` when it is of
    a format this version cannot read (a newer one, or no number)."""
    return SUMMARY_FORMAT.upgrade(data, where)


def litellm_version() -> str | None:
    """litellm's installed version, read from its metadata: importing it costs seconds."""
    try:
        return metadata.version("litellm")
    except metadata.PackageNotFoundError:
        return None


def run_summary(header: Mapping[str, Any], records: Sequence[ResultRecord],
                bad_records: int) -> dict[str, Any]:
    """``summary.json``'s fields for a run made here (:func:`build_summary` with the
    installed litellm's version)."""
    return build_summary(header, records, bad_records, litellm_version=litellm_version())


def build_summary(header: Mapping[str, Any], records: Sequence[ResultRecord],
                  bad_records: int, case_files: Mapping[str, str] | None = None,
                  litellm_version: str | None = None) -> dict[str, Any]:
    """``summary.json``'s fields: the run's settings (``header``; an old summary's fields
    may be given, what is computed is computed anew) and the records' counts."""
    usage = [u for r in records for u in r.usage.values()]
    calls = sum(u.calls for u in usage)
    hits = sum(u.cache_hits for u in usage)
    cost = sum(u.cost_usd for u in usage)
    files = case_files if case_files is not None else {
        f: sha256_of(f) for f in sorted({r.case_file for r in records if r.case_file})}
    settings = {k: v for k, v in header.items() if k not in COMPUTED}
    summary = RunSummary.model_validate({
        **settings,
        "litellm_version": litellm_version,
        "run": records[0].run if records else header.get("run"),
        "roles": record_roles(header.get("roles") or {}, records),
        "case_files": dict(files),
        "items": len(records),
        "bad_case_records": bad_records,
        "model_calls": calls,
        "cache_hits": hits,
        "cache_misses": calls - hits,
        "cost_usd": round(cost, 10),
        "uncached_cost_usd": round(cost + sum(u.saved_usd for u in usage), 10),
        "served_models": served_models(records),
    })
    return summary.model_dump(mode="json")


def sha256_of(path: str) -> str:
    """The file's sha256, or "unreadable"."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def record_roles(configured: Mapping[str, str],
                 records: Sequence[ResultRecord]) -> dict[str, str]:
    """Each role's model as the records name it (a conftest's agent names itself), else as
    configured."""
    roles = {}
    for role, model in configured.items():
        seen = sorted({r.models[role] for r in records if role in r.models})
        roles[role] = ", ".join(seen) if seen else model
    return roles


def served_models(records: Sequence[ResultRecord]) -> dict[str, list[str]]:
    """model -> every served identity its records name (one, unless the server changed)."""
    seen: dict[str, dict[str, None]] = {}
    for record in records:
        for model, identity in record.served.items():
            seen.setdefault(model, {})[identity] = None
    return {model: sorted(ids) for model, ids in sorted(seen.items())}
