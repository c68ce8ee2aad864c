"""Prices of the fast path's calls, read from the price table litellm ships (without
importing litellm: the table is a JSON file in its package)."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

_TABLE = "model_prices_and_context_window_backup.json"
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")


def _table_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / _TABLE


@functools.lru_cache(maxsize=256)
def model_prices(model: str) -> tuple[float, float]:
    """``model``'s listed price of a prompt token and of a completion token; (0, 0) for a
    model the table does not list.

    Only ``model``'s own entry is decoded, not the table: the whole table is ~3 MB of JSON
    and 4.6 MB of objects, which every xdist worker held for the two prices of the one or
    two models it calls (~40 MB over a -n 8 run's processes)."""
    path = _table_path()
    try:
        text = "" if path is None else path.read_text(encoding="utf-8")
    except OSError:
        return 0.0, 0.0
    # As the table was read whole: the model's entry, else that of its name without the
    # provider's prefix ("openai/gpt-4o" is listed as "gpt-4o"); an empty entry is none.
    entry = _entry(text, model) or _entry(text, model.split("/", 1)[-1])
    try:
        return (float(entry.get("input_cost_per_token", 0.0)),
                float(entry.get("output_cost_per_token", 0.0)))
    except (TypeError, ValueError):
        return 0.0, 0.0


def _entry(text: str, name: str) -> dict[str, Any]:
    """The object the table lists under the key ``name``, or {}.

    The table's keys are its models and its entries' own keys are field names, so the
    quoted name followed by a colon opens the model's entry; the decoded object is checked
    to be one (an entry is a JSON object)."""
    key = json.dumps(name) + ":"
    at = text.find(key)
    if at < 0:
        return {}
    space = _SPACE.match(text, at + len(key))
    try:
        value, _end = _DECODER.raw_decode(text, space.end() if space else at + len(key))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """What ``model`` charges for the tokens, by its listed per-token prices; 0.0 for models
    the table does not list (a local server's model costs nothing known)."""
    prompt, completion = model_prices(model)
    return prompt_tokens * prompt + completion_tokens * completion
