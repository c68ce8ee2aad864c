"""Secrets out of a pydantic model, string by string (see :mod:`.redact`).

A transcript was once redacted by dumping it to JSON, redacting the text and parsing it back.
A pattern then ran across the JSON between two fields: an utterance ending in a URL (``see
http://example.org``) and a later field holding an ``@`` read as one URL with user-info, and
the fields between were cut out of the text, so the transcript no longer parsed (the item
ended in a traceback) or parsed without them. Walking the model redacts each string on its
own; and a model without a secret, the usual case, costs less CPU than the round trip
(``benchmarks/bench_redact.py``).
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
    return _model(model, redactor())


def _strings(value: Any, out: list[str]) -> None:
    """Every string in ``value``, appended to ``out``."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, BaseModel):
        for field in value.__dict__.values():
            _strings(field, out)
        for field in (value.__pydantic_extra__ or {}).values():
            _strings(field, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(key, out)
            _strings(item, out)


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


def _model(model: M, clean: Clean) -> M:
    # Most models hold no secret: one pass over their strings joined, rather than one per
    # string (a transcript of 40 messages holds ~200). Joined by NULs (\b sees a boundary,
    # as at a string's end), what would change in one string changes the joined text too;
    # a match that runs over a NUL changes it as well, and then the fields are walked, each
    # string redacted on its own (a nested model, an utterance, is looked at the same way).
    strings: list[str] = []
    _strings(model, strings)
    joined = "\0".join(strings)
    if clean(joined) == joined:
        return model
    # A model's field values are in its __dict__ (what model_dump reads); a model that
    # allows extra fields keeps those apart.
    changed = {name: new for name, old in model.__dict__.items()
               if (new := _walk(old, clean)) is not old}
    extra = model.__pydantic_extra__
    if extra:
        changed |= {name: new for name, old in extra.items()
                    if (new := _walk(old, clean)) is not old}
    return model.model_copy(update=changed) if changed else model
