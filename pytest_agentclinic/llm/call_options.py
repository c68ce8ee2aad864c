"""Where and how to call models (:class:`CallSettings`) and their one builder: a pytest
run, every ``agentclinic`` command and the Python API build their model calls' settings
here, from the same values. Apart from the caller: a run that only collects cases resolves
its settings without importing the caller and its cache.

Each value goes through the converter its option uses (:mod:`..core.converters`), so a
value the run refuses is refused here too, whoever passes it (a ValueError naming what is
allowed), and what a value means (``retries`` are the attempts after the first) is said once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..core import converters as c
from ..core.redact import register_params, register_url
from .limiter import Budget
from .modes import TRANSPORTS
from .retry import RetryPolicy

T = TypeVar("T")


@dataclass(frozen=True)
class CallSettings:
    """Where and how to call models: none of it enters the cache key but the sampling."""

    api_base: str | None = None
    timeout: float = 60.0
    temperature: float = 0.7
    max_tokens: int = 512
    #: ``--agent-max-reply-bytes``: a longer reply (or error body) is an error, never cached.
    max_reply_bytes: int = 4_194_304
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    #: Model calls in flight per process (``--agent-concurrency``).
    concurrency: int = 16
    transport: str = "auto"
    #: ``--agent-rpm`` / ``--agent-tpm``, this process's share under xdist.
    budget: Budget = field(default_factory=Budget)
    #: Per-model limits from ``--agent-models`` (this process's share).
    budgets: dict[str, Budget] = field(default_factory=dict)
    #: ``--agent-models`` deployments, in litellm's ``model_list`` format.
    model_list: tuple[dict[str, Any], ...] = ()
    #: ``--agent-limits-url``: the budgets are then the whole run's, paced on that server,
    #: and ``parts`` (processes of the run) divides them when the server is lost.
    limits_url: str | None = None
    parts: int = 1

    def __post_init__(self) -> None:
        # Every process that calls models builds these settings (each xdist worker, every
        # command): from here on the keys they carry are masked in all it writes and prints.
        register_url(self.api_base)
        register_url(self.limits_url)
        for entry in self.model_list:
            register_params(entry.get("litellm_params"))

    @property
    def sampling(self) -> dict[str, Any]:
        """The sampling parameters sent with (and keyed into) every call."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


def call_settings(*, api_base: str | None = None, timeout: float = 60.0, retries: int = 3,
                  backoff: float = 1.0, retry_after_cap: float = 30.0,
                  temperature: float = 0.7, max_tokens: int = 512,
                  max_reply_bytes: int = 4_194_304, concurrency: int = 16,
                  transport: str = "auto", budget: Budget | None = None,
                  budgets: Mapping[str, Budget] | None = None,
                  model_list: Sequence[dict[str, Any]] = (), limits_url: str | None = None,
                  parts: int = 1) -> CallSettings:
    """Where and how to call models; a value out of its range is a ValueError (an
    :class:`~..core.converters.OptionValueError` naming the parameter and what it allows).

    ``retries`` are the retries of a failed call (``retries + 1`` attempts); ``budget`` and
    ``budgets`` are this process's share of the provider's limits.
    """
    policy = RetryPolicy(attempts=_checked("retries", c.count(0), retries) + 1,
                         backoff=_checked("backoff", c.delay, backoff),
                         retry_after_cap=_checked("retry_after_cap", c.delay, retry_after_cap))
    return CallSettings(
        api_base=_checked("api_base", c.optional(c.api_base), api_base),
        timeout=_checked("timeout", c.duration, timeout),
        temperature=_checked("temperature", c.number(0.0), temperature),
        max_tokens=_checked("max_tokens", c.count(1), max_tokens),
        max_reply_bytes=_checked("max_reply_bytes", c.count(1), max_reply_bytes),
        policy=policy, concurrency=_checked("concurrency", c.count(1), concurrency),
        transport=_checked("transport", c.choice(TRANSPORTS), transport),
        budget=budget or Budget(), budgets=dict(budgets or {}), model_list=tuple(model_list),
        limits_url=limits_url, parts=parts)


def _checked(name: str, convert: c.Convert[T], value: object) -> T:
    try:
        return convert(value)
    except ValueError as exc:
        raise c.OptionValueError(f"{name}: {exc}") from None
