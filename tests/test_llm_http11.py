"""llm/http11.py, the fast path's HTTP/1.1 client, against raw asyncio servers on 127.0.0.1
that answer as real and broken servers do: keep-alive, chunked and gzip bodies, replies cut
short, a proxy, a pool limit."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from pytest_agentclinic.llm import http11

Handler = Callable[[bytes, asyncio.StreamWriter], Awaitable[bool]]
T = TypeVar("T")


class RawServer:
    """Reads each request head and body; ``handler`` writes the reply and says whether the
    connection stays open. Counts connections and requests."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.open_now = 0
        self.most_open = 0
        self.requests: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError,
                        asyncio.CancelledError):
                    return
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                if not await self.handler(request, writer):
                    return
        finally:
            self.open_now -= 1
            writer.close()


def _reply(body: bytes, *, status: str = "200 OK", extra: str = "") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


async def _ok(request: bytes, writer: asyncio.StreamWriter) -> bool:
    writer.write(_reply(b'{"ok": true}'))
    await writer.drain()
    return True


async def _post(pool: http11.Pool, port: int, *, cap: int = 1 << 20,
                proxy: str | None = None) -> http11.Reply:
    return await pool.post(f"http://127.0.0.1:{port}/v1/chat/completions", b'{"a": 1}',
                           {"Authorization": "Bearer k"}, proxy=proxy, cap=cap,
                           error_cap=16)


def _run(handler: Handler, calls: Callable[[http11.Pool, int], Awaitable[T]],
         limit: int = 4) -> tuple[T, RawServer]:
    raw = RawServer(handler)

    async def main() -> T:
        server = await asyncio.start_server(raw.serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = http11.Pool(limit)
        try:
            return await calls(pool, port)
        finally:
            await pool.aclose()
            server.close()

    return asyncio.run(main()), raw


def test_a_connection_is_kept_for_the_next_call() -> None:
    async def calls(pool: http11.Pool, port: int) -> list[int]:
        return [(await _post(pool, port)).status for _ in range(3)]

    statuses, raw = _run(_ok, calls)
    assert statuses == [200, 200, 200]
    assert raw.connections == 1 and len(raw.requests) == 3
    head = raw.requests[0].split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"post /v1/chat/completions http/1.1")
    assert b"host: 127.0.0.1:" in head and b"authorization: bearer k" in head
    assert b"accept-encoding: identity" in head and b"content-length: 8" in head


def test_the_pool_opens_no_more_connections_than_its_limit() -> None:
    async def slow(request: bytes, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(0.05)
        return await _ok(request, writer)

    async def calls(pool: http11.Pool, port: int) -> list[http11.Reply]:
        return list(await asyncio.gather(*(_post(pool, port) for _ in range(6))))

    replies, raw = _run(slow, calls, limit=2)
    assert [r.status for r in replies] == [200] * 6
    assert raw.most_open == 2


def test_a_chunked_and_a_gzip_body_are_read_whole() -> None:
    body = json.dumps({"text": "x" * 5000}).encode()

    async def chunked(request: bytes, writer: asyncio.StreamWriter) -> bool:
        packed = gzip.compress(body)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                     b"Content-Encoding: gzip\r\n\r\n")
        for start in range(0, len(packed), 100):
            part = packed[start:start + 100]
            writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def calls(pool: http11.Pool, port: int) -> list[http11.Reply]:
        return [await _post(pool, port), await _post(pool, port, cap=1000),
                await _post(pool, port)]

    (whole, capped, again), raw = _run(chunked, calls)
    assert whole.body == body == again.body and whole.declared is None
    assert capped.body is None  # past the cap, decoded: not read further
    # The first connection served two calls; the capped reply's was not kept.
    assert raw.connections == 2 and len(raw.requests) == 3


def test_a_reply_cut_short_is_an_http_error_and_its_connection_is_dropped() -> None:
    async def cut(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial")
        await writer.drain()
        return False

    async def calls(pool: http11.Pool, port: int) -> str:
        with pytest.raises(http11.HTTPError) as caught:
            await _post(pool, port)
        return str(caught.value)

    message, _raw = _run(cut, calls)
    assert "RemoteProtocolError" in str(message) or "cut short" in str(message)


def test_an_error_body_keeps_only_its_start() -> None:
    async def error(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(_reply(b'{"error": {"message": "slow down"}}' + b" " * 10_000,
                            status="429 Too Many Requests", extra="Retry-After: 3\r\n"))
        await writer.drain()
        return True

    async def calls(pool: http11.Pool, port: int) -> http11.Reply:
        return await _post(pool, port)

    reply, _raw = _run(error, calls)
    assert reply.status == 429
    assert reply.body == b'{"error": {"mess'
    assert reply.headers["retry-after"] == "3"


def test_a_refused_connection_fails_to_connect() -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        with pytest.raises(http11.ConnectFailed):
            await _post(http11.Pool(1), port)

    asyncio.run(main())


def test_a_proxy_is_sent_the_absolute_url_and_its_credentials() -> None:
    async def calls(pool: http11.Pool, port: int) -> int:
        # The "proxy" is the raw server itself: what it receives is what a proxy would.
        reply = await pool.post("http://model.example:8000/v1/chat/completions", b"{}", {},
                                proxy=f"http://us%40er:pw@127.0.0.1:{port}", cap=100,
                                error_cap=16)
        return reply.status

    status, raw = _run(_ok, calls)
    assert status == 200
    head = raw.requests[0].split(b"\r\n\r\n")[0]
    assert head.startswith(b"POST http://model.example:8000/v1/chat/completions HTTP/1.1")
    assert b"Host: model.example:8000" in head
    assert b"Proxy-Authorization: Basic " + base64.b64encode(b"us@er:pw") in head


def test_an_ipv6_server_is_named_in_brackets() -> None:
    raw = RawServer(_ok)

    async def main() -> int:
        try:
            server = await asyncio.start_server(raw.serve, "::1", 0)
        except OSError:
            pytest.skip("no IPv6 loopback here")
        port = server.sockets[0].getsockname()[1]
        pool = http11.Pool(1)
        try:
            reply = await pool.post(f"http://[::1]:{port}/v1/x", b"{}", {}, proxy=None,
                                    cap=100, error_cap=16)
            return reply.status
        finally:
            await pool.aclose()
            server.close()

    assert asyncio.run(main()) == 200
    assert b"Host: [::1]:" in raw.requests[0]
