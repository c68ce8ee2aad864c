"""Prompt templates: one file per prompt under ``templates/``, each with its own version.

A template file starts with ``version: <id>`` and a ``---`` line; the version enters every
cache key, so editing a prompt without bumping it would replay stale answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template as _StringTemplate


@dataclass(frozen=True)
class PromptTemplate:
    """A named, versioned prompt with ``$placeholders``."""

    name: str
    version: str
    text: str

    def render(self, **values: object) -> str:
        """Fill the placeholders; a missing value is an error, not a silent blank."""
        return _StringTemplate(self.text).substitute({k: str(v) for k, v in values.items()})


@cache
def load(name: str) -> PromptTemplate:
    """Load ``templates/<name>.txt``."""
    raw = resources.files(__package__).joinpath("templates", f"{name}.txt").read_text("utf-8")
    header, sep, body = raw.partition("\n---\n")
    if not sep or not header.startswith("version:"):
        raise ValueError(f"template {name!r} must start with 'version: ...' and a '---' line")
    return PromptTemplate(name, header.removeprefix("version:").strip(), body.strip("\n"))
