"""Holding many small objects cheaply: large cycle-free graphs built without the cyclic
collector's repeated passes, and equal parts of frozen models shared."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small containers.

    Records and terminology rows hold no reference cycles, but each is a few tracked
    containers: while hundreds of thousands accumulate, the collector's passes over the
    growing heap cost more than building them (measured: 40,000 records load 2-3x faster,
    the terminology table about 1.7x, with it paused).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: How deep :class:`FrozenParts` looks into nested containers (a case's metadata is any JSON
#: value; a hostile file nests 1,000 deep).
MAX_DEPTH = 32


class FrozenParts:
    """One object for each equal immutable part of many frozen models (the cases of a file):

    * their sets of given field names: pydantic keeps one per instance (0.2-0.7 KB apiece,
      ~1.1 KB for a case of 8,000 that all name the same fields), and adds to it only on
      assignment, which a frozen model refuses (``model_copy`` copies the set first);
    * their strings, dict keys included: each record of a file is parsed on its own, so the
      names every case repeats (a specialty, "Vital_Signs", an answer choice) were a string
      apiece per case: ~1 KB a case of AgentClinic-MedQA and of CRAFT-MD's vignettes.

    Unfrozen models are left as they are.
    """

    def __init__(self) -> None:
        self._sets: dict[tuple[type[BaseModel], frozenset[str]], set[str]] = {}
        self._strings: dict[str, str] = {}

    def share(self, model: BaseModel, depth: int = 0) -> None:
        """Let ``model`` and what it holds use the objects equal parts already use."""
        if not model.model_config.get("frozen") or depth > MAX_DEPTH:
            return
        given = model.__pydantic_fields_set__
        object.__setattr__(model, "__pydantic_fields_set__",
                           self._sets.setdefault((type(model), frozenset(given)), given))
        values = model.__dict__
        for name, value in values.items():
            values[name] = self._part(value, depth + 1)

    def _part(self, value: Any, depth: int) -> Any:
        if type(value) is str:  # not a subclass (an enum's member equals its plain value)
            return self._strings.setdefault(value, value)
        if depth > MAX_DEPTH:
            return value
        if isinstance(value, BaseModel):
            self.share(value, depth)
        elif isinstance(value, dict):
            # Rebuilt: an equal key stored again keeps the dict's own key object.
            return {self._part(k, depth): self._part(v, depth + 1) for k, v in value.items()}
        elif isinstance(value, list):
            value[:] = [self._part(v, depth + 1) for v in value]
        elif isinstance(value, tuple):
            return tuple(self._part(v, depth + 1) for v in value)
        return value
