"""What every transport of a model call returns (:class:`Completion`) and takes: neither the
litellm client nor the HTTP fast path owns it, so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: A chat conversation as the OpenAI chat API takes it: ``{"role": ..., "content": ...}``.
Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class Completion:
    """A model's reply and its cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    #: The server's ``system_fingerprint`` (its build and configuration), when it sends one.
    fingerprint: str | None = None
