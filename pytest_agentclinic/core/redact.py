"""Secrets out of everything the harness writes or prints.

Providers echo keys in error bodies ("Incorrect API key provided: sk-..."), URLs carry
user-info, and exception texts quote request headers; any of them could reach a record, a
transcript, a JUnit property, the HTML page or the terminal. Every such text passes through
:func:`redact` (strings) or :func:`redact_data` (JSON-like values) before it leaves the process.

Known secrets (credential variables of the environment, and the keys :func:`register` is
given: a key inline in ``--agent-models``, one in the query of ``--agent-api-base``) are
masked in every form a writer may have turned them into: as is, JSON-escaped (a quote or a
backslash in a key), HTML-escaped and URL-encoded, and combinations of these.

Every pattern is linear in the text's length (a 10 MB id is redacted in well under a
second): none can start a match at many places and scan far from each.

This module sits at the bottom of the package: it imports nothing of the project.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

MASK = "***"

#: ``scheme://user:password@host`` and ``scheme://token@host``: the user-info goes. Anchored on
#: ``://`` (one scheme character before it), not on the scheme: a pattern starting with
#: ``[A-Za-z][A-Za-z0-9+.-]*`` tried at every letter of a long word scanned to its end each
#: time (quadratic: 40k letters took 2.5 s). From ``://`` the scan stops at the next ``/``.
_USERINFO = re.compile(r"(?<=[A-Za-z0-9+.-])://[^/\s@]+@")
#: The same, anchored at the start of a URL (for :func:`has_userinfo`: one start only).
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s@]+@")
#: ``Bearer <token>``, ``Authorization: Basic <b64>`` and ``x-api-key: <key>`` shapes. A bare
#: "basic" is not enough: "basic metabolic panel" is clinical text.
_AUTH = re.compile(r"(?P<lead>\bbearer\s+|\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+)"
                   r"[A-Za-z0-9._~+/=-]{6,}", re.I)
_HEADER = re.compile(r"(?P<lead>\b(?:x-api-key|api[_-]key|api-key)[\"']?\s*[:=]\s*[\"']?)"
                     r"[A-Za-z0-9._~+/=-]{6,}", re.I)
#: OpenAI / Anthropic / OpenRouter-style keys (``sk-...``, ``sk-proj-...``, ``sk-ant-...``).
_SK = re.compile(r"\bsk-[A-Za-z0-9_*-]{6,}")
#: Names (of environment variables, deployment parameters, query parameters) whose values
#: are credentials.
_SECRET_NAME = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.I)
_SECRET_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS")
#: Query parameters that carry credentials (``api-key``, ``key``, ``sig``, ``token`` ...).
_SECRET_QUERY = re.compile(r"key|token|secret|sig|signature|password|passwd|auth|credential|"
                           r"code", re.I)
#: Shorter values are too likely to occur in ordinary text to be masked safely.
_MIN_SECRET = 8
#: Query values this long are masked whatever their name (a random token is long).
_LONG_QUERY_VALUE = 20

#: Secrets this process was told about (:func:`register`); the environment's are read live.
_registered: set[str] = set()


def register(*values: object) -> None:
    """Mask these values (credentials from files or command lines) from now on in this
    process; values that are not strings or are shorter than 8 characters are ignored."""
    for value in values:
        if isinstance(value, str) and len(value.strip()) >= _MIN_SECRET:
            _registered.add(value)


def register_url(url: str | None) -> None:
    """Register the credentials a URL carries: its password and the values of its query
    parameters that are credentials (by name, or by length)."""
    if not url or "://" not in url:
        return
    try:
        parts = urllib.parse.urlsplit(url)
        register(parts.password, parts.username if parts.password is None else None)
    except ValueError:  # a port that is not a number: nothing more to read
        return
    for raw in parts.query.split("&"):
        name, _, value = raw.partition("=")
        if value and (_SECRET_QUERY.search(name) or len(value) >= _LONG_QUERY_VALUE):
            register(value, urllib.parse.unquote_plus(value))


def register_params(params: Any) -> None:
    """Register the credentials in a mapping of call parameters (e.g. a deployment's
    ``litellm_params``): values under credential names, and those in its URLs."""
    if not isinstance(params, dict):
        return
    for name, value in params.items():
        if isinstance(name, str) and _SECRET_NAME.search(name.replace("-", "_")):
            register(value)
        elif isinstance(value, str) and "://" in value:
            register_url(value)


def secret_values() -> list[str]:
    """The known secrets: credential variables of the environment and registered values,
    longest first."""
    return sorted(_environment_secrets() | _registered, key=len, reverse=True)


@dataclass
class _Environment:
    """What :func:`_environment_secrets` last read: every variable name, the credential
    names among them, their raw values, and the secrets those are."""

    names: frozenset[Any] = frozenset()
    secret_names: tuple[Any, ...] = ()
    raw_values: tuple[Any, ...] | None = None
    secrets: frozenset[str] = frozenset()


_environment = _Environment()


def _is_secret_name(name: Any) -> bool:
    # endswith, not the regex (~4x faster).
    return os.fsdecode(name).upper().endswith(_SECRET_SUFFIXES)


def _environment_secrets() -> frozenset[str]:
    """The credential variables' values, read again only when one of them changed."""
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return frozenset(v for k, v in os.environ.items()
                         if _is_secret_name(k) and len(v.strip()) >= _MIN_SECRET)
    # This runs for every text redacted (several per model call). pytest sets and removes
    # PYTEST_CURRENT_TEST around every phase of every item, so a snapshot of the whole
    # environment changed all the time and each change walked it again in Python (0.15 ms
    # of CPU per model call): only new names are looked at, and only credentials' values.
    env = _environment
    keys = raw.keys()
    if keys != env.names:
        kept = [name for name in env.secret_names if name in raw]
        added = sorted(name for name in keys - env.names if _is_secret_name(name))
        env.names, env.secret_names = frozenset(keys), (*kept, *added)
    values = tuple(raw[name] for name in env.secret_names)
    if values != env.raw_values:
        decoded = (os.fsdecode(value) for value in values)
        env.raw_values = values
        env.secrets = frozenset(v for v in decoded if len(v.strip()) >= _MIN_SECRET)
    return env.secrets


def _escapes(value: str) -> set[str]:
    """``value`` as the writers may have written it (JSON, HTML, XML, URL encodings)."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
            html.escape(value), html.escape(value, quote=False),
            urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}


@functools.lru_cache(maxsize=64)
def _forms(values: tuple[str, ...]) -> tuple[str, ...]:
    """Every form of every secret, two encodings deep (HTML of JSON, JSON of JSON ...),
    longest first so that no shorter form cuts a longer one."""
    forms: set[str] = set()
    for value in values:
        for once in _escapes(value):
            forms |= _escapes(once)
    return tuple(sorted((f for f in forms if len(f.strip()) >= _MIN_SECRET), key=len,
                        reverse=True))


def _current_forms() -> tuple[str, ...]:
    return _forms(tuple(secret_values()))


def redact(text: str) -> str:
    """``text`` with URL user-info, bearer/basic tokens, ``sk-`` keys and every known secret
    (in every escaped form) replaced by ``***``."""
    return _redact(text, _current_forms()) if text else text


def _redact(text: str, forms: tuple[str, ...]) -> str:
    for form in forms:
        if form in text:
            text = text.replace(form, MASK)
    # Each pattern runs only where its literal occurs (a substring test is ~10x a scan).
    if "://" in text:
        text = _USERINFO.sub("://" + MASK + "@", text)
    lower = text.lower()
    if "bearer" in lower or "authorization" in lower:
        text = _AUTH.sub(lambda m: m.group("lead") + MASK, text)
    if "key" in lower:
        text = _HEADER.sub(lambda m: m.group("lead") + MASK, text)
    return _SK.sub("sk-" + MASK, text) if "sk-" in text else text


def redact_data(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string redacted."""
    # The environment is read once per value, not once per string (a conversation of 20
    # messages took 3.3 ms, as much as a call through litellm).
    return _redact_tree(value, _current_forms())


def _redact_tree(value: Any, forms: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _redact(value, forms) if value else value
    if isinstance(value, dict):
        return {k: _redact_tree(v, forms) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_tree(v, forms) for v in value]
    return value


def has_userinfo(url: str) -> bool:
    """Whether ``url`` carries ``user[:password]@`` before its host."""
    return bool(_URL_USERINFO.match(url.strip()))
