"""Which model a local server actually serves: its ``/v1/models`` listing and, on llama.cpp,
its ``/props``.

A name such as ``openai/qwen`` says nothing about the weights behind an ``--agent-api-base``:
the server may be restarted with another model under the same name. The identity read here
enters the cache key (a different model is a miss) and every record.

llama.cpp's listing names only the alias (``--alias``): the GGUF behind it is read from
``/props`` (``model_path``, ``build_info`` and the chat template), and the listing's ``meta``
(parameter count, size, vocabulary) is kept too, so swapping the file behind one alias
changes the identity. A single-slot server busy with a long reply answers the probe late or
with 503, so the probe is retried before it gives up; an identity still unknown is said so
(:data:`UNKNOWN`), and the cache key then holds the model name alone, the same every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ..core.threads import start_thread

#: Seconds to wait for one answer of the probe: a busy llama.cpp slot takes longer.
PROBE_TIMEOUT = 10.0
#: Tries of the probe, and the pause before the second (doubled for each later one): a
#: single-slot server busy with one long reply is free again within a minute or so.
PROBE_ATTEMPTS = 4
PROBE_BACKOFF = 2.0
#: What records and the summary say of a model whose server did not tell which it serves.
UNKNOWN = "unknown (the server did not say which model it serves)"


def endpoint(api_base: str, path: str) -> str:
    """``api_base`` with ``path`` appended to its path, before its query (an Azure-style
    gateway takes its key as ``?api-key=...``: appending after it asked for another key)."""
    parts = urllib.parse.urlsplit(api_base)
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


def server_root(api_base: str) -> str:
    """The server's own root (``/props`` lives there, beside ``/v1``), query kept."""
    parts = urllib.parse.urlsplit(api_base)
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _short_hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _entry_identity(entry: dict[str, Any]) -> str:
    # ``created`` is left out: vLLM and llama.cpp stamp the time of the request.
    text = str(entry["id"])
    if entry.get("root") not in (None, entry["id"]):
        text += f" (root {entry['root']})"
    if isinstance(entry.get("meta"), dict) and entry["meta"]:
        text += f" (meta {_short_hash(entry['meta'])})"
    return text


def identity_from_listing(listing: Any, model: str) -> str | None:
    """The served identity of ``model`` in an OpenAI ``/models`` listing.

    The entry whose id is the requested name (after the provider prefix), else every entry
    (a llama.cpp server answers any name with its one model). vLLM's ``root`` (the weights
    behind a served alias) and llama.cpp's ``meta`` (the GGUF's parameter count, size and
    vocabulary, as a hash) are kept; times are not (servers stamp the current time).
    """
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    ids = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    name = model.split("/", 1)[1] if "/" in model else model
    chosen = [e for e in ids if e["id"] == name] or ids
    return "; ".join(sorted(map(_entry_identity, chosen))) or None


def identity_from_props(props: Any) -> str | None:
    """What llama.cpp's ``/props`` says of the model: its file, the server's build and a
    hash of the chat template (each changes the answers)."""
    if not isinstance(props, dict):
        return None
    parts = []
    if isinstance(props.get("model_path"), str) and props["model_path"]:
        parts.append(f"model {props['model_path']}")
    if isinstance(props.get("build_info"), str) and props["build_info"]:
        parts.append(f"build {props['build_info']}")
    if isinstance(props.get("chat_template"), str) and props["chat_template"]:
        parts.append(f"template {_short_hash(props['chat_template'])}")
    return ", ".join(parts) or None


@dataclass
class _Answer:
    """One endpoint's reply: ``data`` when it answered 200, ``busy`` when asking again may
    help (a timeout or a 503 of a loading or busy server)."""

    data: Any = None
    busy: bool = False


def _fetch(url: str, timeout: float) -> _Answer:
    """GET ``url`` (blocking: run in a thread). http.client, not aiohttp nor urllib.request:
    a re-run that the cache answers whole asks the server this alone, and importing aiohttp
    for it cost that run 0.2 s of CPU; urllib.request (its handlers, cookies, auth, FTP)
    held ~0.4 MB more in every xdist worker than http.client, for one GET a process. No
    proxies from the environment and no redirects, as aiohttp (``trust_env`` off) did not."""
    import http.client

    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(parts.hostname or "", parts.port, timeout=timeout)
    except ValueError:  # a port that is not a number
        return _Answer()
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    try:
        connection.request("GET", target, headers={"Accept": "application/json"})
        with connection.getresponse() as response:
            if response.status == 200:
                return _Answer(json.loads(response.read().decode("utf-8")))
            return _Answer(busy=response.status in (408, 429, 503))
    except TimeoutError:
        return _Answer(busy=True)
    except (OSError, ValueError, http.client.HTTPException):
        return _Answer()
    finally:
        connection.close()


async def _get(url: str, timeout: float) -> _Answer:
    """:func:`_fetch` in a daemon thread (one the loop's executor would wait for at shutdown,
    however long the server keeps it)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_Answer] = loop.create_future()

    def settle(answer: _Answer | None, exc: BaseException | None) -> None:
        if future.done():
            return
        if exc is not None or answer is None:
            future.set_exception(exc or RuntimeError("no answer"))
        else:
            future.set_result(answer)

    def run() -> None:
        try:
            answer, exc = _fetch(url, timeout), None
        except BaseException as error:  # handed to the awaiting coroutine
            answer, exc = None, error
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, answer, exc)

    start_thread(run, name="agentclinic-served-probe")
    return await future


async def probe(api_base: str, model: str, timeout: float = PROBE_TIMEOUT,
                attempts: int = PROBE_ATTEMPTS, backoff: float = PROBE_BACKOFF) -> str | None:
    """The identity ``api_base`` serves for ``model``, or None when it does not say (no
    ``/models`` nor ``/props``, not reachable: the call itself reports that). A busy server
    (timeouts, 503) is asked again, up to ``attempts`` times."""
    urls = (endpoint(api_base, "models"), endpoint(server_root(api_base), "props"))
    answers = [_Answer(busy=True), _Answer(busy=True)]
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(backoff * 2 ** (attempt - 1))
        for i, url in enumerate(urls):
            if answers[i].busy:
                answers[i] = await _get(url, timeout)
        if not any(a.busy for a in answers):
            break
    parts = [identity_from_listing(answers[0].data, model), identity_from_props(answers[1].data)]
    return " | ".join(p for p in parts if p) or None


def redact_url(url: str | None) -> str | None:
    """``url`` without user-info and with every query value hidden (keys travel there)."""
    if not url:
        return url
    parts = urllib.parse.urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    query = urllib.parse.urlencode([(k, "REDACTED") for k, _ in
                                    urllib.parse.parse_qsl(parts.query, keep_blank_values=True)])
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))
