"""The one module that imports litellm, lazily: importing it costs seconds and memory.

Everything about litellm's own behaviour that the harness must not inherit is switched off
here: its remote cost-map fetch, its retries (``max_retries=0``), its 6000 s default timeout,
its debug banners and hub tokenizer downloads.
"""

from __future__ import annotations

import asyncio
import os
import re
import traceback
from dataclasses import dataclass
from typing import Any

from ..core.redact import redact
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


async def acomplete(model: str, messages: list[dict[str, Any]], *, api_base: str | None,
                    timeout: float, params: dict[str, Any]) -> Completion:
    """One chat completion through litellm, failures translated into :mod:`.errors`.

    ``timeout`` is a wall-clock deadline for the whole call: litellm's own timeout bounds
    each socket read, so a server trickling a valid body byte by byte would hold the call for
    as long as it likes. Past the deadline the call is cancelled and is a retriable timeout.
    """
    litellm = _load()
    where = api_base or model.split("/", 1)[0]
    try:
        response = await asyncio.wait_for(
            litellm.acompletion(model=model, messages=messages, api_base=api_base,
                                timeout=timeout, max_retries=0, **params), timeout)
    except asyncio.TimeoutError:
        raise TransientError(f"timeout calling {model}: no complete reply within the "
                             f"{timeout:g} s deadline (--agent-timeout)", status=408) from None
    except Exception as exc:  # litellm raises many types; all are sorted below
        raise _classify(litellm, exc, where, model) from exc
    _reached.add(where)
    try:
        choice = response.choices[0]
        text = choice.message.content
    except (AttributeError, IndexError) as exc:
        raise TransientError(f"bad response from {model}: no message") from exc
    if not isinstance(text, str) or not text.strip():
        raise TransientError(f"bad response from {model}: empty message")
    if getattr(choice, "finish_reason", None) == "length":
        # A reply cut by the token limit ("DIAGNOSIS READY: R") is not an answer; the same
        # request would be cut the same way, so it is not retried either.
        raise RequestError(f"{model}: reply cut by the token limit (finish_reason=length, "
                           f"{params.get('max_tokens')} tokens); raise --agent-max-tokens")
    usage = getattr(response, "usage", None)
    return Completion(text, getattr(usage, "prompt_tokens", 0) or 0,
                      getattr(usage, "completion_tokens", 0) or 0, _cost(litellm, response))


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


#: Exceptions (by class name, anywhere in the cause chain) of a connection never made:
#: refused, DNS failure, unreachable host. Every provider's transport has its own.
_CONNECT = {"ConnectError", "ClientConnectorError", "ClientConnectorDNSError",
            "ConnectionRefusedError", "gaierror", "ConnectTimeout", "ServerTimeoutError"}
_CONNECT_TEXT = re.compile(r"cannot connect to host|connection refused|name or service not "
                           r"known|temporary failure in name resolution|nodename nor servname|"
                           r"getaddrinfo failed|all connection attempts failed", re.I)
#: A connection made, then lost mid-reply: the server is there, the call may succeed again.
_DROPPED = {"ReadError", "ClientPayloadError", "ContentLengthError", "ServerDisconnectedError",
            "RemoteProtocolError", "ClientOSError", "ReadTimeout", "TransferEncodingError"}
#: Errors raised by our own side before a request leaves (bad headers, a bad URL): the
#: configuration is wrong, and no retry or other case can fix it.
_CLIENT_SIDE = {"ValueError", "TypeError", "LocalProtocolError", "InvalidURL",
                "UnsupportedProtocol", "InvalidURLError"}
#: ... when raised inside the HTTP stack (a ValueError from litellm reading a malformed
#: reply is the server's fault, and transient).
_TRANSPORT = ("/aiohttp/", "/httpx/", "/h11/", "/yarl/", "/urllib3/", "/http/client.py")


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _client_side(exc: BaseException) -> bool:
    if type(exc).__name__ not in _CLIENT_SIDE or exc.__traceback__ is None:
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and any(t in frames[-1].filename for t in _TRANSPORT)


def _classify(litellm: Any, exc: Exception, where: str, model: str) -> Exception:
    """The :mod:`.errors` type of a litellm failure, its message redacted."""
    status = getattr(exc, "status_code", None)
    text = redact(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    causes = {type(c).__name__ for c in _causes(exc)}
    if isinstance(exc, litellm.Timeout):
        return TransientError(f"timeout calling {model}", status=408)
    if causes & _DROPPED:
        _reached.add(where)
        return TransientError(f"{model}: connection lost mid-reply: {text}", status=status)
    if causes & _CONNECT or _CONNECT_TEXT.search(str(exc)):
        if where not in _reached:
            endpoint = redact(where) if "://" in where else "the provider's default endpoint"
            return FatalLLMError(f"cannot reach {endpoint} for {model}; check the network and "
                                 f"--agent-api-base. {text}")
        return TransientError(f"{model}: cannot connect: {text}", status=status)
    if any(_client_side(c) for c in _causes(exc)):
        return FatalLLMError(f"{model}: the request could not be built (a client-side "
                             f"configuration error: check headers, api base and keys). {text}")
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
        endpoint = redact(where) if "://" in where else "the provider's default endpoint"
        return FatalLLMError(f"cannot reach {endpoint} for {model}; check the network and "
                             f"--agent-api-base. {text}")
    if isinstance(exc, litellm.RateLimitError) or (status or 0) >= 500 or status is None:
        return TransientError(f"{model}: {text}", status=status, retry_after=_retry_after(exc))
    return RequestError(f"{model}: {text}")
