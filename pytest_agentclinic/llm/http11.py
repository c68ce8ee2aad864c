"""A small HTTP/1.1 client for the OpenAI-compatible fast path: h11's protocol over asyncio
streams, with a keep-alive pool, TLS and the environment's proxies.

The fast path needs one exchange, a JSON POST and its reply. aiohttp served it, but every
process that imported it held ~11 MB more (its client, websocket, multipart, cookie and
form code, attrs, yarl, multidict): under ``-n 8`` that was 90 MB of a 10,000-encounter
run's 775 MB. h11 (python-hyper; the HTTP/1.1 of httpcore and httpx, which litellm
already installs) does the protocol itself: framing, chunked bodies, whether a connection
may be kept. This module does the rest: sockets, TLS, proxies, the pool, the size caps.

What it keeps of aiohttp's behaviour on this path: at most ``limit`` connections at a time
(a call waits for one inside its timeout), idle connections kept 30 s, the system's CA
store (``SSL_CERT_FILE`` honoured), an HTTP proxy for ``http://`` URLs (the absolute URL
sent to it) and a ``CONNECT`` tunnel for ``https://`` ones, the proxy's credentials sent as
``Proxy-Authorization``. Replies are asked for uncompressed (``Accept-Encoding:
identity``); a gzip or deflate body sent anyway is decoded, within the same cap.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import ssl
import sys
import time
import urllib.parse
import zlib
from dataclasses import dataclass, field

import h11

from ..core.errors import AgentClinicError

#: Seconds an idle connection is kept for the next call (aiohttp's ``keepalive_timeout``).
KEEPALIVE = 30.0
_READ = 65_536
_AGENT = "pytest-agentclinic"


class HTTPError(AgentClinicError):
    """The exchange failed: the connection broke or the server broke the protocol (the
    transport turns it into an :mod:`.errors` error; never seen outside it)."""


class ConnectFailed(HTTPError):
    """No connection was made (refused, no such host, TLS handshake, proxy refused)."""


@dataclass
class Reply:
    """A reply's status, headers (names lower-case) and body: None when it was longer than
    the cap (the rest is not read). ``declared`` is its Content-Length, if it gave one."""

    status: int
    headers: dict[str, str]
    body: bytes | None
    declared: int | None


@dataclass(eq=False)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protocol: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    idle_since: float = 0.0

    def reusable(self, now: float) -> bool:
        return (self.protocol.our_state is h11.IDLE and not self.reader.at_eof()
                and not self.writer.is_closing() and now - self.idle_since < KEEPALIVE)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


@dataclass(frozen=True)
class _Origin:
    scheme: str
    host: str
    port: int
    proxy: str | None

    @property
    def authority(self) -> str:
        """``host:port`` as a request names it (an IPv6 address in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def host_header(self) -> str:
        """The ``Host`` header: the authority, its port left out when it is the scheme's."""
        default = 443 if self.scheme == "https" else 80
        return self.authority.removesuffix(f":{default}") if self.port == default \
            else self.authority


@dataclass(frozen=True)
class _Route:
    """Where a URL's requests go and the headers every one of them carries."""

    origin: _Origin
    #: The request target: the path and query, or the absolute URL for an HTTP proxy.
    target: str
    headers: tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=32)
def _route(url: str, proxy: str | None) -> _Route:
    # One transport calls one or two URLs: split, and its headers built, once per URL and
    # proxy, not once per call.
    parts = urllib.parse.urlsplit(url)
    https = parts.scheme == "https"
    origin = _Origin(parts.scheme, parts.hostname or "", parts.port or (443 if https else 80),
                     proxy)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [("Host", origin.host_header), ("User-Agent", _AGENT),
               ("Accept", "application/json"), ("Accept-Encoding", "identity"),
               ("Content-Type", "application/json")]
    if proxy is not None and not https:
        target = f"http://{origin.host_header}{target}"  # a proxy is sent the absolute URL
        headers += _proxy_auth(origin)
    return _Route(origin, target, tuple(headers))


class Pool:
    """Connections to the servers one transport calls, at most ``limit`` open at a time.
    Belongs to the event loop that first uses it."""

    def __init__(self, limit: int) -> None:
        #: Connections open at most, each serving one call at a time.
        self.limit = max(limit, 1)
        self._slots = asyncio.Semaphore(self.limit)
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None

    async def post(self, url: str, body: bytes, headers: dict[str, str], *,
                   proxy: str | None, cap: int, error_cap: int) -> Reply:
        """POST ``body`` (JSON) to ``url``; the reply's body up to ``cap`` bytes (a 200) or
        its first ``error_cap`` bytes (any other status). Raises :class:`ConnectFailed` or
        :class:`HTTPError`; the caller bounds the time (``asyncio.wait_for``)."""
        route = _route(url, proxy)
        origin = route.origin
        request = h11.Request(method="POST", target=route.target, headers=[
            *route.headers, ("Content-Length", str(len(body))), *headers.items()])
        async with self._slots:
            connection = self._take(origin) or await self._open(origin)
            try:
                reply = await _exchange(connection, request, body, cap, error_cap)
            except BaseException:
                connection.close()  # half a reply leaves the connection unusable
                raise
            self._give_back(origin, connection)
            return reply

    async def aclose(self) -> None:
        """Close every idle connection."""
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def _take(self, origin: _Origin) -> _Connection | None:
        idle, now = self._idle.get(origin), time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.reusable(now):
                return connection
            connection.close()
        return None

    def _give_back(self, origin: _Origin, connection: _Connection) -> None:
        protocol = connection.protocol
        if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()
            connection.idle_since = time.monotonic()
            self._idle.setdefault(origin, []).append(connection)
        else:
            connection.close()

    async def _open(self, origin: _Origin) -> _Connection:
        tls = self._context() if origin.scheme == "https" else None
        try:
            if origin.proxy is None:
                reader, writer = await asyncio.open_connection(
                    origin.host, origin.port, ssl=tls,
                    server_hostname=origin.host if tls else None)
            else:
                reader, writer = await self._via_proxy(origin, tls)
        except (OSError, ssl.SSLError, HTTPError) as exc:
            raise ConnectFailed(f"{type(exc).__name__}: {exc}") from exc
        return _Connection(reader, writer)

    async def _via_proxy(self, origin: _Origin, tls: ssl.SSLContext | None
                         ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        proxy = urllib.parse.urlsplit(origin.proxy or "")
        proxy_tls = self._context() if proxy.scheme == "https" else None
        reader, writer = await asyncio.open_connection(
            proxy.hostname, proxy.port or (443 if proxy_tls else 80), ssl=proxy_tls,
            server_hostname=proxy.hostname if proxy_tls else None)
        if tls is None:  # plain HTTP: the proxy is sent the absolute URL (see _request)
            return reader, writer
        if sys.version_info < (3, 11):  # StreamWriter.start_tls is 3.11's
            writer.close()
            raise HTTPError("an https:// server behind a proxy needs Python 3.11")
        target = origin.authority.encode()
        writer.write(b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n"
                     + b"".join(f"{k}: {v}\r\n".encode() for k, v in _proxy_auth(origin))
                     + b"\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        status = head.split(b" ", 2)[1:2]
        if status != [b"200"]:
            writer.close()
            raise HTTPError(f"the proxy refused the tunnel: {head.splitlines()[0]!r}")
        await writer.start_tls(tls, server_hostname=origin.host)  # type: ignore[attr-defined,unused-ignore]
        return reader, writer

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls


def _proxy_auth(origin: _Origin) -> list[tuple[str, str]]:
    proxy = urllib.parse.urlsplit(origin.proxy or "")
    if proxy.username is None:
        return []
    pair = (urllib.parse.unquote(proxy.username) + ":"
            + urllib.parse.unquote(proxy.password or "")).encode()
    return [("Proxy-Authorization", "Basic " + base64.b64encode(pair).decode())]


async def _exchange(connection: _Connection, request: h11.Request, body: bytes, cap: int,
                    error_cap: int) -> Reply:
    protocol = connection.protocol
    try:
        connection.writer.write(protocol.send(request) + protocol.send(h11.Data(data=body))
                                + protocol.send(h11.EndOfMessage()))
        await connection.writer.drain()
        response = await _next(connection)
        while isinstance(response, h11.InformationalResponse):  # a 100 Continue
            response = await _next(connection)
        if not isinstance(response, h11.Response):
            raise HTTPError(f"the server closed the connection ({type(response).__name__})")
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in response.headers}
        declared = _declared(headers)
        limit = cap if response.status_code == 200 else error_cap
        if response.status_code == 200 and declared is not None and declared > cap:
            return Reply(200, headers, None, declared)
        content = await _body(connection, headers, limit, response.status_code == 200)
    except (OSError, h11.ProtocolError, zlib.error) as exc:
        raise HTTPError(f"{type(exc).__name__}: {exc}") from exc
    return Reply(response.status_code, headers, content, declared)


async def _next(connection: _Connection) -> h11.Event:
    protocol = connection.protocol
    while True:
        event = protocol.next_event()
        if isinstance(event, h11.Event):
            return event
        if event is h11.PAUSED:  # more than one reply sent: not a server to trust
            raise HTTPError("the server sent data after its reply")
        protocol.receive_data(await connection.reader.read(_READ))


async def _body(connection: _Connection, headers: dict[str, str], limit: int,
                ok: bool) -> bytes | None:
    """The body up to ``limit`` bytes. Past it: None for a 200 (whose cap is an error), the
    first ``limit`` bytes otherwise (an error body's start holds its message). The rest is
    not read, so the connection is closed, not kept."""
    decoder = _decoder(headers.get("content-encoding", ""))
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await _next(connection)
        if isinstance(event, h11.EndOfMessage):
            if decoder is not None:
                chunks.append(decoder.flush())
            return b"".join(chunks)
        if not isinstance(event, h11.Data):
            raise HTTPError(f"the reply was cut short ({type(event).__name__})")
        data = decoder.decompress(event.data, limit - size + 1) if decoder else event.data
        size += len(data)
        chunks.append(data)
        if size > limit:
            return None if ok else b"".join(chunks)[:limit]


def _declared(headers: dict[str, str]) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


def _decoder(encoding: str) -> zlib._Decompress | None:  # type: ignore[name-defined,unused-ignore]
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None
