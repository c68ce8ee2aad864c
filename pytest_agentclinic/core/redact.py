"""Secrets out of everything the harness writes or prints.

Providers echo keys in error bodies ("Incorrect API key provided: sk-..."), URLs carry
user-info, and exception texts quote request headers; any of them could reach a record, a
transcript, a JUnit property, the HTML page or the terminal. Every such text passes through
:func:`redact` (strings) or :func:`redact_data` (JSON-like values) before it leaves the process.

This module sits at the bottom of the package: it imports nothing of the project.
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "***"

#: ``scheme://user:password@host`` and ``scheme://token@host``: the user-info goes.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")
#: ``Bearer <token>``, ``Authorization: Basic <b64>`` and ``x-api-key: <key>`` shapes. A bare
#: "basic" is not enough: "basic metabolic panel" is clinical text.
_AUTH = re.compile(r"(?P<lead>\bbearer\s+|\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+)"
                   r"[A-Za-z0-9._~+/=-]{6,}", re.I)
_HEADER = re.compile(r"(?P<lead>\b(?:x-api-key|api[_-]key|api-key)[\"']?\s*[:=]\s*[\"']?)"
                     r"[A-Za-z0-9._~+/=-]{6,}", re.I)
#: OpenAI / Anthropic / OpenRouter-style keys (``sk-...``, ``sk-proj-...``, ``sk-ant-...``).
_SK = re.compile(r"\bsk-[A-Za-z0-9_*-]{6,}")
#: Environment variables whose values are credentials.
_SECRET_NAME = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.I)
#: Shorter values are too likely to occur in ordinary text to be masked safely.
_MIN_SECRET = 8


_secrets: tuple[object, list[str]] = (None, [])


def secret_values() -> list[str]:
    """The values of the credential variables in the environment, longest first."""
    global _secrets
    # Every record, transcript and error text is redacted: walking os.environ in Python each
    # time took ~0.4 ms of CPU per model call. A C-level snapshot of the environment's raw
    # mapping tells whether any name or value changed since the last walk.
    raw = getattr(os.environ, "_data", None)
    snapshot = tuple(raw.items()) if isinstance(raw, dict) else None
    if snapshot is None or snapshot != _secrets[0]:
        values = {v for k, v in os.environ.items()
                  if _SECRET_NAME.search(k) and len(v.strip()) >= _MIN_SECRET}
        _secrets = (snapshot, sorted(values, key=len, reverse=True))
    return _secrets[1]


def redact(text: str) -> str:
    """``text`` with URL user-info, bearer/basic tokens, ``sk-`` keys and the values of
    credential environment variables replaced by ``***``."""
    if not text:
        return text
    for value in secret_values():
        text = text.replace(value, MASK)
    # Each pattern runs only on a text holding its literal part: records and transcripts are
    # long and rarely hold any, and four regex passes over each took ~1 ms a model call.
    lowered = text.lower()
    if "://" in text:
        text = _USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", text)
    if "bearer" in lowered or "authorization" in lowered:
        text = _AUTH.sub(lambda m: m.group("lead") + MASK, text)
    if "key" in lowered:
        text = _HEADER.sub(lambda m: m.group("lead") + MASK, text)
    return _SK.sub("sk-" + MASK, text) if "sk-" in text else text


def redact_data(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


def has_userinfo(url: str) -> bool:
    """Whether ``url`` carries ``user[:password]@`` before its host."""
    return bool(_USERINFO.match(url.strip()))
