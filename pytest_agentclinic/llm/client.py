"""The one module that imports litellm, lazily: importing it costs seconds and memory.

Everything about litellm's own behaviour that the harness must not inherit is switched off
here: its remote cost-map fetch, its retries (``max_retries=0``), its 6000 s default timeout,
its debug banners and hub tokenizer downloads.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from .errors import FatalLLMError, RequestError, TransientError

_litellm: Any = None
#: API bases (or providers) that answered at least once in this process.
_reached: set[str] = set()


def _load() -> Any:
    global _litellm
    if _litellm is None:
        # Must be set before the import, or litellm fetches its cost map from the network.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.disable_hf_tokenizer_download = True
        litellm.telemetry = False
        _litellm = litellm
    return _litellm


@dataclass(frozen=True)
class Completion:
    """A model's reply and its cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    #: The server's ``system_fingerprint`` (its build and configuration), when it sends one.
    fingerprint: str | None = None


async def acomplete(model: str, messages: list[dict[str, Any]], *, api_base: str | None,
                    timeout: float, params: dict[str, Any]) -> Completion:
    """One chat completion through litellm, failures translated into :mod:`.errors`."""
    litellm = _load()
    where = api_base or model.split("/", 1)[0]
    try:
        response = await litellm.acompletion(model=model, messages=messages, api_base=api_base,
                                             timeout=timeout, max_retries=0, **params)
    except Exception as exc:  # litellm raises many types; all are sorted below
        raise _classify(litellm, exc, where, model) from exc
    _reached.add(where)
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError) as exc:
        raise TransientError(f"bad response from {model}: no message") from exc
    if not isinstance(text, str) or not text.strip():
        raise TransientError(f"bad response from {model}: empty message")
    usage = getattr(response, "usage", None)
    fingerprint = getattr(response, "system_fingerprint", None)
    return Completion(text, getattr(usage, "prompt_tokens", 0) or 0,
                      getattr(usage, "completion_tokens", 0) or 0, _cost(litellm, response),
                      fingerprint if isinstance(fingerprint, str) and fingerprint else None)


def _cost(litellm: Any, response: Any) -> float:
    # litellm prices every response while logging it; reuse that rather than pay twice.
    hidden = getattr(response, "_hidden_params", None) or {}
    if hidden.get("response_cost") is not None:
        return float(hidden["response_cost"])
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # models missing from the cost map (local servers) cost nothing known
        return 0.0


def _retry_after(exc: Exception) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None)
    response = getattr(exc, "response", None)
    if not headers and response is not None:
        headers = getattr(response, "headers", None)
    value = dict(headers or {}).get("retry-after") or dict(headers or {}).get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


#: Messages of credential problems that litellm reports under other types (a missing key
#: surfaces as a 500): no retry fixes them.
_NO_CREDENTIALS = re.compile(r"missing credentials|api[_ ]key (?:must be set|is missing|not "
                             r"(?:set|found|provided))|no api key", re.I)


def _classify(litellm: Any, exc: Exception, where: str, model: str) -> Exception:
    status = getattr(exc, "status_code", None)
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if isinstance(exc, litellm.Timeout):
        return TransientError(f"timeout calling {model}", status=408)
    if _NO_CREDENTIALS.search(str(exc)):
        return FatalLLMError(f"{model}: no API key. Set the provider's key variable (e.g. "
                             f"OPENAI_API_KEY). {text}")
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
        return FatalLLMError(f"{model}: not authorised ({status}). Check the API key. {text}")
    if isinstance(exc, litellm.NotFoundError):
        return FatalLLMError(f"{model}: unknown model or endpoint (404). {text}")
    if isinstance(exc, litellm.ContextWindowExceededError):
        return RequestError(f"{model}: {text}")
    if isinstance(exc, litellm.BadRequestError):
        if "provider" in str(exc).lower():
            return FatalLLMError(f"{model!r} is not a model litellm knows. {text}")
        return RequestError(f"{model}: {text}")
    if "connection error" in str(exc).lower() and where not in _reached:
        endpoint = where if "://" in where else "the provider's default endpoint"
        return FatalLLMError(f"cannot reach {endpoint} for {model}; check the network and "
                             f"--agent-api-base. {text}")
    if isinstance(exc, litellm.RateLimitError) or (status or 0) >= 500 or status is None:
        return TransientError(f"{model}: {text}", status=status, retry_after=_retry_after(exc))
    return RequestError(f"{model}: {text}")
