"""Which model a local server actually serves: its ``/v1/models`` listing.

A name such as ``openai/qwen`` says nothing about the weights behind an ``--agent-api-base``:
the server may be restarted with another model under the same name. The identity read here
enters the cache key (a different model is a miss) and every record.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

#: Seconds to wait for the listing: it is one small local request.
PROBE_TIMEOUT = 10.0


def identity_from_listing(listing: Any, model: str) -> str | None:
    """The served identity of ``model`` in an OpenAI ``/models`` listing.

    The entry whose id is the requested name (after the provider prefix), else every entry
    (a llama.cpp server answers any name with its one model). vLLM's ``root`` (the weights
    behind a served alias) is kept; times and owners are not (vLLM stamps the current time).
    """
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    ids = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    name = model.split("/", 1)[1] if "/" in model else model
    chosen = [e for e in ids if e["id"] == name] or ids
    parts = sorted(e["id"] + (f" (root {e['root']})" if e.get("root") not in (None, e["id"])
                              else "") for e in chosen)
    return "; ".join(parts) or None


async def probe(api_base: str, model: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """The identity ``api_base`` serves for ``model``, or None when it does not say
    (no ``/models`` endpoint, not reachable: the call itself reports that)."""
    import aiohttp

    url = api_base.rstrip("/") + "/models"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http, \
                http.get(url) as response:
            if response.status != 200:
                return None
            listing = json.loads(await response.text())
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    return identity_from_listing(listing, model)


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
