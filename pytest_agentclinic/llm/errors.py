"""How a model call can fail, sorted by what the harness must do about it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import AgentClinicError
from ..core.redact import redact


class LLMError(AgentClinicError):
    """Base of every model-call failure. Never a wrong diagnosis; never cached."""


class TransientError(LLMError):
    """Worth retrying: timeout, 429, 5xx, a malformed response."""

    def __init__(self, message: str, *, status: int | None = None,
                 retry_after: float | None = None,
                 billed: tuple[int, int, float] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        #: A reply the provider billed but the caller discards (a 200 with no content):
        #: its prompt tokens, completion tokens and cost, counted and charged all the same.
        self.billed = billed


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


def from_status(status: int | None, model: str, text: str,
                retry_after: float | None = None) -> LLMError:
    """The error an HTTP status means, the same for every transport: 401/403 and 404 stop the
    session, 429, 408 and 5xx (or no status at all) are retried, any other 4xx fails the call."""
    if status in (401, 403):
        return FatalLLMError(f"{model}: not authorised ({status}). Check the API key. {text}")
    if status == 404:
        return FatalLLMError(f"{model}: unknown model or endpoint (404). {text}")
    if status is None or status in (408, 429) or status >= 500:
        return TransientError(f"{model}: {text}", status=status, retry_after=retry_after)
    return RequestError(f"{model}: {text}")


def cannot_reach(where: str, model: str, text: str) -> FatalLLMError:
    """The first call to an endpoint could not connect: no other call will."""
    endpoint = redact(where) if "://" in where else "the provider's default endpoint"
    return FatalLLMError(f"cannot reach {endpoint} for {model}; check the network and "
                         f"--agent-api-base. {text}")


def timed_out(model: str, deadline: float | None = None) -> TransientError:
    """A call that outlived its timeout (status 408, so the limiter backs off)."""
    if deadline is None:
        return TransientError(f"timeout calling {model}", status=408)
    return TransientError(f"timeout calling {model}: no complete reply within the {deadline:g} s "
                          "deadline (--agent-timeout)", status=408)


#: The characters of a provider's error message kept (its first line): a 50 MB body must
#: not reach the record, the transcript, the page and the terminal.
MESSAGE_CHARS = 300


def first_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    """The first line of ``text``, at most ``limit`` characters (looked at only so far)."""
    head = text[: limit + 1].split("\n", 1)[0].rstrip("\r")
    return head if len(head) <= limit else head[:limit] + "..."


def too_large(model: str, what: str, size: int | None, cap: int) -> RequestError:
    """A reply (or error body) past ``--agent-max-reply-bytes``: this item's error, never
    cached and not retried (the same request would be answered the same way)."""
    told = f"{size:,} bytes" if size is not None else f"more than {cap:,} bytes"
    return RequestError(f"{model}: {what} of {told}, over --agent-max-reply-bytes ({cap:,})")


def cut_by_token_limit(model: str, max_tokens: object) -> RequestError:
    """A reply cut by the token limit ("DIAGNOSIS READY: R") is not an answer; the same
    request would be cut the same way, so it is not retried either."""
    return RequestError(f"{model}: reply cut by the token limit (finish_reason=length, "
                        f"{max_tokens} tokens); raise --agent-max-tokens")


def reply_text(model: str, text: object, finish_reason: object, *, max_tokens: object,
               billed: Callable[[], tuple[int, int, float] | None],
               max_bytes: int | None = None) -> str:
    """A reply's text, checked the same way on every transport. No text (or a blank one) is
    retried, counted as billed all the same (``billed()`` tells what the provider billed);
    one past ``max_bytes`` (``None``: the transport capped its read already) or cut by the
    token limit fails the call."""
    if not isinstance(text, str) or not text.strip():
        raise TransientError(f"bad response from {model}: empty message", billed=billed())
    if (max_bytes is not None and len(text) * 4 > max_bytes
            and len(text.encode("utf-8", "replace")) > max_bytes):
        # Read whole already; it goes no further (nor into the cache).
        raise too_large(model, "a reply", len(text.encode("utf-8", "replace")), max_bytes)
    if finish_reason == "length":
        raise cut_by_token_limit(model, max_tokens)
    return text
