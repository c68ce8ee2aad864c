"""How long a provider's refusal (429) asks the caller to wait, read from its headers.

Both transports (the direct HTTP client and the litellm path) read the same headers, so one
reader serves them, and the gates pause every call of the model for that long.
"""

from __future__ import annotations

import contextlib
import re


def wait_from_headers(headers: dict[str, str]) -> float | None:
    """Seconds a 429's headers ask us to wait: ``Retry-After`` (seconds), ``retry-after-ms``,
    else the longest ``x-ratelimit-reset-*`` whose ``x-ratelimit-remaining-*`` is 0 (OpenAI
    writes them as ``1s``, ``6m0s`` or ``20ms``); None when they say nothing usable."""
    low = {k.lower().removeprefix("llm_provider-"): str(v) for k, v in headers.items()}
    if "retry-after-ms" in low:
        with contextlib.suppress(ValueError):
            return float(low["retry-after-ms"]) / 1000
    if "retry-after" in low:
        with contextlib.suppress(ValueError):
            return float(low["retry-after"])  # an HTTP date falls through to our backoff
    waits = [_duration(low.get(f"x-ratelimit-reset-{kind}", ""))
             for kind in ("requests", "tokens")
             if low.get(f"x-ratelimit-remaining-{kind}", "").strip() == "0"]
    known = [w for w in waits if w is not None]
    return max(known) if known else None


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float | None:
    """``1m30.5s`` / ``20ms`` / ``2`` as seconds."""
    text = text.strip()
    if not text:
        return None
    with contextlib.suppress(ValueError):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)

