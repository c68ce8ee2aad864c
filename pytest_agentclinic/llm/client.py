"""The one module that imports litellm, lazily: importing it costs seconds and memory.

Everything about litellm's own behaviour that the harness must not inherit is switched off
here: its remote cost-map fetch, its retries (``max_retries=0``), its 6000 s default timeout,
its debug banners and hub tokenizer downloads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import os
import re
import threading
import traceback
import urllib.parse
from typing import Any

from ..core.redact import redact
from ..core.threads import start_thread
from .errors import (
    FatalLLMError,
    RequestError,
    TransientError,
    cannot_reach,
    first_line,
    from_status,
    reply_text,
    timed_out,
)
from .keys import PLACEHOLDER_KEY as PLACEHOLDER_KEY
from .keys import key_variable as key_variable
from .keys import needs_placeholder_key as needs_placeholder_key
from .rate_headers import wait_from_headers
from .types import Completion as Completion
from .types import Messages

_litellm: Any = None
#: API bases (or providers) that answered at least once in this process.
_reached: set[str] = set()
_loading: concurrent.futures.Future[Any] | None = None
_lock = threading.Lock()
#: litellm's Router over the ``--agent-models`` deployments, built once litellm is loaded.
_router: Any = None
_model_list: list[dict[str, Any]] = []


def _load(pool: int = 0) -> Any:
    global _litellm
    with _lock:
        if _litellm is None:
            # Must be set before the import, or litellm fetches its cost map from the network.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            # litellm scrubs every error text with one large regex in Python (0.36 s of CPU
            # per MB of a provider's error body per pass, at least two passes, on the loop):
            # a 50 MB body held every encounter for minutes. The first line of the message is
            # kept and redacted by us instead.
            os.environ.setdefault("LITELLM_DISABLE_REDACT_SECRETS", "True")
            # litellm reads its aiohttp pool size at import and caps a host at 500
            # connections: `--agent-concurrency 1024` would silently run 500 at once.
            for name, least in (("AIOHTTP_CONNECTOR_LIMIT_PER_HOST", max(pool, 500)),
                                ("AIOHTTP_CONNECTOR_LIMIT", max(2 * pool, 1000))):
                if int(os.environ.get(name, "0") or 0) < least:
                    os.environ[name] = str(least)
            import litellm

            litellm.suppress_debug_info = True
            litellm.disable_hf_tokenizer_download = True
            litellm.telemetry = False
            # litellm's ~170 MB of module objects never die: keeping them out of every later
            # collection took wall and CPU x0.84 on 512 x 5 calls.
            gc.freeze()
            _litellm = litellm
        return _litellm


def preload(pool: int = 0) -> None:
    """Start importing litellm in a thread now, so the first wave of calls does not wait
    on a 3-5 s import holding the event loop (a no-op once started)."""
    global _loading
    with _lock:
        if _loading is None:
            _loading = concurrent.futures.Future()
            start_thread(_import_into, _loading, pool, name="agentclinic-litellm-import")


def _import_into(future: concurrent.futures.Future[Any], pool: int) -> None:
    try:
        future.set_result(_load(pool))
    except BaseException as exc:  # handed to whoever awaits the import
        future.set_exception(exc)


async def aload() -> Any:
    """litellm, imported off the event loop."""
    if _litellm is not None:
        return _litellm
    preload()
    assert _loading is not None
    return await asyncio.wrap_future(_loading)


def use_deployments(model_list: list[dict[str, Any]]) -> None:
    """Serve the models named in ``model_list`` (litellm's format) through a Router."""
    global _router, _model_list
    _model_list, _router = list(model_list), None


def routed(model: str) -> bool:
    """Whether ``model`` is a deployment group of ``--agent-models``."""
    return any(entry.get("model_name") == model for entry in _model_list)


def _get_router(litellm: Any) -> Any:
    global _router
    if _router is None:
        # No Router retries (ours count attempts); a deployment that fails once is cooled
        # down so the retry goes to another one.
        _router = litellm.Router(model_list=_model_list, num_retries=0, allowed_fails=0,
                                 cooldown_time=30, routing_strategy="simple-shuffle")
    return _router


async def acomplete(model: str, messages: list[dict[str, Any]], *, api_base: str | None,
                    timeout: float, params: dict[str, Any],
                    max_bytes: int = 4_194_304) -> Completion:
    """One chat completion through litellm (through the Router for ``--agent-models``
    groups), failures translated into :mod:`.errors`. The caller holds the call to its
    wall-clock deadline (litellm's own timeout bounds each socket read, not the call)."""
    router = routed(model)
    if not router and api_base is not None and urllib.parse.urlsplit(api_base).query:
        # litellm appends /chat/completions after the query: every call would be a 404.
        raise FatalLLMError(
            f"{model}: an --agent-api-base with a query string (e.g. ?api-key=) needs the "
            "direct HTTP path: an openai/ or hosted_vllm/ model with --agent-transport auto")
    litellm = await aload()
    where = model if router else api_base or model.split("/", 1)[0]
    if not router and needs_placeholder_key(model, api_base) and "api_key" not in params:
        params = {**params, "api_key": PLACEHOLDER_KEY}
    try:
        if router:
            response = await _get_router(litellm).acompletion(
                model=model, messages=messages, timeout=timeout, **params)
        else:
            response = await litellm.acompletion(model=model, messages=messages,
                                                 api_base=api_base, timeout=timeout,
                                                 max_retries=0, **params)
    except Exception as exc:  # litellm raises many types; all are sorted below
        raise _classify(litellm, exc, where, model, router) from exc
    _reached.add(where)
    try:
        choice = response.choices[0]
        text = choice.message.content
    except (AttributeError, IndexError) as exc:
        raise TransientError(f"bad response from {model}: no message") from exc
    text = reply_text(model, text, getattr(choice, "finish_reason", None),
                      max_tokens=params.get("max_tokens"), max_bytes=max_bytes,
                      billed=lambda: _billed(litellm, response))
    usage = getattr(response, "usage", None)
    fingerprint = getattr(response, "system_fingerprint", None)
    return Completion(text, getattr(usage, "prompt_tokens", 0) or 0,
                      getattr(usage, "completion_tokens", 0) or 0, _cost(litellm, response),
                      fingerprint if isinstance(fingerprint, str) and fingerprint else None)


def _billed(litellm: Any, response: Any) -> tuple[int, int, float] | None:
    """The usage of a reply that is discarded (billed all the same: the caller counts it
    and charges the encounter's budget)."""
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    completion = getattr(usage, "completion_tokens", 0) or 0
    return (prompt, completion, _cost(litellm, response)) if prompt or completion else None


class LiteLLM:
    """The litellm transport (:class:`~.transports.Transport`): every provider litellm
    knows, ``--agent-models`` deployment groups through its Router."""

    name = "litellm"

    def warm(self, pool: int) -> None:
        """Start litellm's import in a thread (it takes seconds, which the first calls would
        otherwise wait for on the event loop)."""
        preload(pool)

    async def acomplete(self, model: str, messages: Messages, *, api_base: str | None,
                        timeout: float, params: dict[str, Any],
                        max_bytes: int = 4_194_304) -> Completion:
        """One chat completion: :func:`acomplete`."""
        return await acomplete(model, messages, api_base=api_base, timeout=timeout,
                               params=params, max_bytes=max_bytes)

    async def aclose(self) -> None:
        """Nothing to close: litellm keeps its own clients for the process."""


async def supports_json_schema(model: str) -> bool:
    """Whether litellm knows ``model``'s provider to honour a JSON-schema ``response_format``
    (litellm imported off the event loop)."""
    litellm = await aload()
    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:  # unknown models and providers: ask for a plain one-word reply instead
        return False


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
    return wait_from_headers(dict(headers or {}))


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


#: The characters of a litellm error's text that are searched (its message comes first).
_LOOKED_AT = 65_536


def _classify(litellm: Any, exc: Exception, where: str, model: str,
              router: bool = False) -> Exception:
    """The :mod:`.errors` type of a litellm failure, its message redacted."""
    status = getattr(exc, "status_code", None)
    # A provider's error body may be megabytes: only its start is looked at, and its first
    # line (bounded) is kept.
    message = str(exc)[:_LOOKED_AT]
    text = redact(f"{type(exc).__name__}: {first_line(message)}")
    causes = {type(c).__name__ for c in _causes(exc)}
    if isinstance(exc, litellm.Timeout):
        return timed_out(model)
    if causes & _DROPPED:
        _reached.add(where)
        return TransientError(f"{model}: connection lost mid-reply: {text}", status=status)
    if causes & _CONNECT or _CONNECT_TEXT.search(message):
        if where not in _reached and not router:
            # Behind a Router another deployment may still answer: retried, never fatal.
            return cannot_reach(where, model, text)
        return TransientError(f"{model}: cannot connect: {text}", status=status)
    if any(_client_side(c) for c in _causes(exc)):
        return FatalLLMError(f"{model}: the request could not be built (a client-side "
                             f"configuration error: check headers, api base and keys). {text}")
    if _NO_CREDENTIALS.search(message):
        return FatalLLMError(f"{model}: no API key. Set the provider's key variable (e.g. "
                             f"OPENAI_API_KEY). {text}")
    if isinstance(exc, litellm.ContextWindowExceededError):
        return RequestError(f"{model}: {text}")
    if isinstance(exc, litellm.BadRequestError) and "provider" in message.lower():
        return FatalLLMError(f"{model!r} is not a model litellm knows. {text}")
    if "connection error" in message.lower() and where not in _reached and not router:
        # Behind a Router another deployment may still answer: retried, never fatal.
        return cannot_reach(where, model, text)
    if isinstance(exc, litellm.RateLimitError):
        status = 429
    return from_status(status, model, text, _retry_after(exc))
