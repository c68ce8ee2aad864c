"""Aggregates over result records (accuracy excludes errors from the denominator)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .records import ResultRecord


def group_rows(records: Sequence[ResultRecord],
               key: Callable[[ResultRecord], str]) -> dict[str, dict[str, Any]]:
    """Per group: n, correct, accuracy, errors, no-diagnosis, mean turns, tests, usage."""
    groups: dict[str, list[ResultRecord]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return {name: _row(rows) for name, rows in sorted(groups.items())}


def _row(rows: Sequence[ResultRecord]) -> dict[str, Any]:
    judged = [r for r in rows if r.outcome != "error"]
    correct = sum(r.outcome == "correct" for r in judged)
    usage = [u for r in rows for u in r.usage.values()]
    return {
        "n": len(judged),
        "correct": correct,
        "accuracy": correct / len(judged) if judged else None,
        "errors": len(rows) - len(judged),
        "no_diagnosis": sum(r.outcome == "no_diagnosis" for r in judged),
        "mean_turns": sum(r.turns_used for r in judged) / len(judged) if judged else None,
        "mean_tests": sum(len(r.tests_requested) for r in judged) / len(judged) if judged else None,
        "tokens": sum(u.prompt_tokens + u.completion_tokens for u in usage),
        "cost_usd": sum(u.cost_usd for u in usage),
        "calls": sum(u.calls for u in usage),
        "cache_hits": sum(u.cache_hits for u in usage),
    }
