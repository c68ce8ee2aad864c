"""Secrets out of a pydantic model, string by string (see :mod:`.redact`).

A transcript was once redacted by dumping it to JSON, redacting the text and parsing it back.
A pattern then ran across the JSON between two fields: an utterance ending in a URL (``see
http://example.org``) and a later field holding an ``@`` read as one URL with user-info, and
the fields between were cut out of the text, so the transcript no longer parsed (the item
ended in a traceback) or parsed without them. Walking the model redacts each string on its
own, and costs less (see ``benchmarks/bench_redact.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .redact import redactor

M = TypeVar("M", bound=BaseModel)
Clean = Callable[[str], str]


def redact_model(model: M) -> M:
    """``model`` with every string in it redacted: its fields', nested models', lists' and
    dicts' (keys too). ``model`` itself when nothing changed; otherwise a copy, changed
    where a secret was, and not validated again (a masked string is still a string)."""
    result: M = _walk(model, redactor())
    return result


def _walk(value: Any, clean: Clean) -> Any:
    """``value`` redacted; the very object when nothing in it changed (no copy to make)."""
    if isinstance(value, str):
        cleaned = clean(value)
        return value if cleaned == value else cleaned
    if isinstance(value, BaseModel):
        return _model(value, clean)
    if isinstance(value, (list, tuple)):
        items = [_walk(v, clean) for v in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        pairs = [(_walk(k, clean), _walk(v, clean)) for k, v in value.items()]
        if all(k is old_k and v is old_v
               for (k, v), (old_k, old_v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    return value  # numbers, booleans, None: no text to hold a secret


def _model(model: BaseModel, clean: Clean) -> BaseModel:
    # A model's field values are in its __dict__ (what model_dump reads); a model that
    # allows extra fields keeps those apart.
    changed = {name: new for name, old in model.__dict__.items()
               if (new := _walk(old, clean)) is not old}
    extra = model.__pydantic_extra__
    if extra:
        changed |= {name: new for name, old in extra.items()
                    if (new := _walk(old, clean)) is not old}
    return model.model_copy(update=changed) if changed else model
