"""``--agent-limits-url``: what a limits server's URL may be, and whether the server can
serve a run (asked once, before any event loop, by the process that starts the run).

The ``redis`` client is imported only here and in :mod:`.limits_server`, only when a run
names a server.
"""

from __future__ import annotations

import urllib.parse

from ..core.errors import InputError
from ..core.redact import redact

#: The environment variable a CI ``services:`` block may set instead of the option.
ENV = "AGENTCLINIC_LIMITS_URL"
SCHEMES = ("redis", "rediss", "valkey", "valkeys")
#: Seconds a server command may take before the process falls back to its share.
TIMEOUT_S = 2.0


class LimitsURLError(InputError):
    """A ``--agent-limits-url`` that is not a Redis URL."""


def check_url(url: str) -> str:
    """``url`` when it is a ``redis://`` (or ``rediss://``, ``valkey://``) URL with a host,
    else :class:`LimitsURLError` (its text never shows a password)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in SCHEMES or not parts.hostname:
        raise LimitsURLError(f"expected redis://[:PASSWORD@]HOST[:PORT][/DB], got "
                             f"{redact(url)!r}")
    del port
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise LimitsURLError(f"the database must be a number (redis://HOST:PORT/0), got "
                             f"{redact(url)!r}")
    return url


def client_url(url: str) -> str:
    """The URL as the ``redis`` client reads it (Valkey's schemes are Redis's)."""
    scheme, rest = url.split("://", 1)
    return {"valkey": "redis", "valkeys": "rediss"}.get(scheme, scheme) + "://" + rest


def unreachable(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """Why the server at ``url`` cannot serve as the run's limiter (None when it answers):
    the client missing, the server down, a wrong password. Synchronous: before any loop."""
    try:
        import redis
    except ImportError:
        return ("needs the redis client: pip install 'pytest-agentclinic[redis]'")
    try:
        client = redis.Redis.from_url(client_url(url), socket_timeout=timeout,
                                      socket_connect_timeout=timeout)
        try:
            client.ping()
            client.eval("return 1", 0)  # scripts allowed (not a proxy that refuses EVAL)
        finally:
            client.close()
    except (redis.RedisError, OSError) as exc:
        return f"cannot use {redact(url)}: {redact(str(exc)) or type(exc).__name__}"
    return None
