"""What the response cache stores under a key, typed and versioned, and the check of an entry
read back.

Two kinds of entry: a model's reply (:class:`ReplyEntry`) and what an api base said it serves
under a model name (:class:`ServedEntry`). Each is written with ``"version": 1``; an entry
written before entries had a version is version 1 too (the same fields). An entry of another
version (a newer release's cache) or without its fields (damage, a hand-edited cache) is
refused with one line naming the cache, never read as a miss: a miss would call the model
again and overwrite the entry, silently. dataclasses, not pydantic: a cache hit is on the hot
path of a re-run, and two isinstance checks per field are all a reply needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import InputError

#: The version of the entries this release writes and reads.
ENTRY_VERSION = 1


class CacheEntryError(InputError):
    """An entry this version does not read: another version, or a field missing or of the
    wrong type."""


def check_version(value: dict[str, Any], where: str) -> dict[str, Any]:
    """``value`` when its version is one this release reads (none: the first); else a
    :class:`CacheEntryError` naming the cache."""
    version = value.get("version", ENTRY_VERSION)
    if version != ENTRY_VERSION or isinstance(version, bool):
        raise CacheEntryError(
            f"the response cache {where} holds an entry of version {version!r}; this release "
            f"reads version {ENTRY_VERSION} (a cache written by another release?): refused. "
            "Move it away to start a new one, or run with --agent-cache=off")
    return value


def _field(value: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str,
           optional: bool = False) -> Any:
    got = value.get(name)
    if (got is None and optional) or (isinstance(got, kind) and not isinstance(got, bool)):
        return got
    raise CacheEntryError(f"the response cache {where} holds a damaged entry (its {name!r} "
                          f"is {type(got).__name__}): refused. Move the cache away to start "
                          "a new one, or run with --agent-cache=off")


@dataclass(frozen=True)
class ReplyEntry:
    """A model's reply as cached: its text, usage and cost when made, and the server's
    fingerprint."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    fingerprint: str | None = None

    def stored(self) -> dict[str, Any]:
        """The entry as written (a JSON object)."""
        return {"version": ENTRY_VERSION, "text": self.text,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost_usd": self.cost_usd,
                "fingerprint": self.fingerprint}

    @classmethod
    def read(cls, value: dict[str, Any], where: str) -> ReplyEntry:
        """The entry ``value`` holds; :class:`CacheEntryError` when it holds none."""
        check_version(value, where)
        return cls(_field(value, "text", str, where),
                   _field(value, "prompt_tokens", int, where),
                   _field(value, "completion_tokens", int, where),
                   float(_field(value, "cost_usd", (int, float), where)),
                   _field(value, "fingerprint", str, where, optional=True))


@dataclass(frozen=True)
class ServedEntry:
    """What an api base says it serves under a model name (see :mod:`.served`)."""

    served: str

    def stored(self) -> dict[str, Any]:
        """The entry as written (a JSON object)."""
        return {"version": ENTRY_VERSION, "served": self.served}

    @classmethod
    def read(cls, value: dict[str, Any], where: str) -> ServedEntry:
        """The entry ``value`` holds; :class:`CacheEntryError` when it holds none."""
        check_version(value, where)
        return cls(_field(value, "served", str, where))
