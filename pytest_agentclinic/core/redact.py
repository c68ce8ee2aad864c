"""Secrets out of everything the harness writes or prints.

Providers echo keys in error bodies ("Incorrect API key provided: sk-..."), URLs carry
user-info, and exception texts quote request headers; any of them could reach a record, a
transcript, a JUnit property, the HTML page or the terminal. Every such text passes through
:func:`redact` (strings), :func:`redact_data` (JSON-like values) or
:func:`.redact_model.redact_model` (pydantic models) before it leaves the process.

Known secrets (credential variables of the environment, the credentials in the proxy
variables' URLs, and what :func:`register_params` finds in a deployment: keys inline, values
behind litellm's ``os.environ/NAME`` references whatever the variable is called, header
values, a key in the query of ``--agent-api-base``) are masked in every form a writer may
have turned them into: as is, JSON-escaped (a quote or a backslash in a key), HTML-escaped,
URL-encoded and base64-encoded, and combinations of these. A bare ``Basic <base64>`` that
decodes to ``user:password`` (a proxy echoing ``Proxy-Authorization``) is masked too.

Every pattern is linear in the text's length (a 10 MB id is redacted in well under a
second): none can start a match at many places and scan far from each.

This module sits at the bottom of the package: it imports nothing of the project.
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import json
import os
import re
import urllib.parse
from collections.abc import Callable
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
#: A bare ``Basic <base64>`` (a proxy echoing ``Proxy-Authorization``): masked only when it
#: decodes to ``user:password`` (so "basic metabolic panel" stays).
_BASIC = re.compile(r"(?P<lead>\bbasic\s+)(?P<token>[A-Za-z0-9+/]{8,}={0,2})", re.I)
#: litellm's reference to a variable in a models file: ``api_key: os.environ/NAME``.
_ENV_REFERENCE = "os.environ/"
#: Proxy variables (litellm's HTTP clients and the fast path honour them): the credentials
#: in their URLs are secrets, whatever their names.
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
#: Header names whose values are not credentials (every other header value is masked).
_PLAIN_HEADERS = frozenset({"content-type", "accept", "accept-encoding", "accept-language",
                            "user-agent", "cache-control", "connection", "openai-beta",
                            "anthropic-version", "anthropic-beta", "x-title",
                            "http-referer", "referer"})
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
#: Variables whose values are secrets because a models file names them (``os.environ/NAME``),
#: read live like the credential variables (a variable set later is masked too).
_named: set[str] = set()


def register(*values: object) -> None:
    """Mask these values (credentials from files or command lines) from now on in this
    process; values that are not strings or are shorter than 8 characters are ignored."""
    for value in values:
        if isinstance(value, str) and len(value.strip()) >= _MIN_SECRET:
            _registered.add(value)


def register_url(url: str | None) -> None:
    """Register the credentials a URL carries: its password (also as ``user:password`` and
    that in base64, the ``Basic`` header a server may echo) and the values of its query
    parameters that are credentials (by name, or by length)."""
    register(*url_credentials(url))


def url_credentials(url: str | None) -> set[str]:
    """The credentials in ``url`` (see :func:`register_url`); none when it is no URL."""
    if not url or "://" not in url:
        return set()
    found: set[str] = set()
    try:
        parts = urllib.parse.urlsplit(url.strip())
        user, password = parts.username, parts.password
    except ValueError:  # a port that is not a number: nothing more to read
        return found
    if user is not None:
        found |= _userinfo_forms(user, password)
    for raw in parts.query.split("&"):
        name, _, value = raw.partition("=")
        if value and (_SECRET_QUERY.search(name) or len(value) >= _LONG_QUERY_VALUE):
            found |= {value, urllib.parse.unquote_plus(value)}
    return found


def _userinfo_forms(user: str, password: str | None) -> set[str]:
    if password is None:
        return {user, urllib.parse.unquote(user)}
    plain = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
    return {password, urllib.parse.unquote(password), plain,
            base64.b64encode(plain.encode()).decode()}


def register_variable(name: str) -> None:
    """Mask the value of the environment variable ``name`` from now on, whatever it is
    called and even when it is set later (a models file's ``os.environ/NAME``)."""
    if name and name not in _named:
        _named.add(name)
        # Look at every variable's name again.
        _environment.names, _environment.secret_names = frozenset(), ()


def register_params(params: Any) -> None:
    """Register the credentials in a mapping of call parameters (e.g. a deployment's
    ``litellm_params``): values under credential names, header values, the URLs' credentials,
    and the variables named by ``os.environ/NAME`` references (anywhere, nested too)."""
    if isinstance(params, dict):
        for name, value in params.items():
            key = str(name).replace("-", "_")
            if key.lower() in ("extra_headers", "headers") and isinstance(value, dict):
                _register_headers(value)
            elif _SECRET_NAME.search(key):
                _register_value(value)
            else:
                register_params(value)
    elif isinstance(params, (list, tuple)):
        for value in params:
            register_params(value)
    elif isinstance(params, str):
        if params.startswith(_ENV_REFERENCE):
            _register_value(params)
        elif "://" in params:
            register_url(params)


def _register_headers(headers: dict[Any, Any]) -> None:
    for name, value in headers.items():
        if str(name).lower() not in _PLAIN_HEADERS:
            _register_value(value)
        else:
            register_params(value)


def _register_value(value: Any) -> None:
    """A credential's value: itself, or the variable a reference names (and its value)."""
    if isinstance(value, str) and value.startswith(_ENV_REFERENCE):
        name = value.removeprefix(_ENV_REFERENCE).strip()
        register_variable(name)
        referenced = os.environ.get(name)
        if referenced is not None:
            register(referenced)
            register_url(referenced)
        return
    if isinstance(value, str):
        register(value)
        if "://" in value:
            register_url(value)
        lead, _, token = value.partition(" ")
        if lead.lower() in ("bearer", "basic") and token:
            register(token.strip())  # the token alone, as a server may echo it
    else:
        register_params(value)


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
    text = os.fsdecode(name)
    upper = text.upper()
    return upper.endswith(_SECRET_SUFFIXES) or upper in _PROXY_VARIABLES or text in _named


def _secrets_of(name: Any, value: str) -> set[str]:
    """What a variable's value makes secret: a proxy's URL credentials, else the value."""
    if os.fsdecode(name).upper() in _PROXY_VARIABLES:
        return url_credentials(value if "://" in value else f"http://{value}")
    return {value}


def _environment_secrets() -> frozenset[str]:
    """The credential variables' values, read again only when one of them changed."""
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return frozenset(s for k, v in os.environ.items() if _is_secret_name(k)
                         for s in _secrets_of(k, v) if len(s.strip()) >= _MIN_SECRET)
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
        env.raw_values = values
        env.secrets = frozenset(
            s for name, value in zip(env.secret_names, values, strict=True)
            for s in _secrets_of(name, os.fsdecode(value)) if len(s.strip()) >= _MIN_SECRET)
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
        # A header or a data URL may carry a secret base64-encoded.
        forms.add(base64.b64encode(value.encode()).decode())
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
    if "basic" in lower:
        text = _BASIC.sub(_basic, text)
    if "key" in lower:
        text = _HEADER.sub(lambda m: m.group("lead") + MASK, text)
    return _SK.sub("sk-" + MASK, text) if "sk-" in text else text


def _basic(match: re.Match[str]) -> str:
    """A ``Basic`` token masked when it decodes to ``user:password``."""
    token = match.group("token")
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group("lead") + MASK if ":" in decoded else match.group(0)


def redactor() -> Callable[[str], str]:
    """:func:`redact` for many strings at once: the known secrets are read once, now (a
    conversation of 20 messages, read per string, took 3.3 ms: as much as a call through
    litellm)."""
    forms = _current_forms()
    return lambda text: _redact(text, forms) if text else text


def redact_data(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string redacted."""
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
