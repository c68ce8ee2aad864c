"""Prices of the fast path's calls, read from the price table litellm ships (without
importing litellm: the table is a JSON file in its package)."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

_TABLE = "model_prices_and_context_window_backup.json"


@functools.lru_cache(maxsize=1)
def _prices() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / _TABLE
    try:
        table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return table


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """What ``model`` charges for the tokens, by its listed per-token prices; 0.0 for models
    the table does not list (a local server's model costs nothing known)."""
    table = _prices()
    entry = table.get(model) or table.get(model.split("/", 1)[-1]) or {}
    try:
        return (prompt_tokens * float(entry.get("input_cost_per_token", 0.0))
                + completion_tokens * float(entry.get("output_cost_per_token", 0.0)))
    except (TypeError, ValueError):
        return 0.0
