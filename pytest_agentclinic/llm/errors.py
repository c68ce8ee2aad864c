"""How a model call can fail, sorted by what the harness must do about it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class LLMError(Exception):
    """Base of every model-call failure. Never a wrong diagnosis; never cached."""


class TransientError(LLMError):
    """Worth retrying: timeout, 429, 5xx, a malformed response."""

    def __init__(self, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class InfrastructureError(LLMError):
    """A transient failure that outlived its retries: the item's outcome is *error*."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class RequestError(LLMError):
    """This request cannot succeed (e.g. context too long), but others may: an *error* outcome."""


class FatalLLMError(LLMError):
    """No retry and no other case can succeed (bad key, unknown model, unreachable api base):
    the session stops at the first one."""


class ReplayMissError(LLMError):
    """Replay mode met a call that is not in the cache."""

    def __init__(self, parts: Mapping[str, Any]) -> None:
        listed = "\n".join(f"  {k}: {_short(v)}" for k, v in parts.items())
        super().__init__(f"cache miss in replay mode; the key's parts:\n{listed}")
        self.parts = dict(parts)


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
