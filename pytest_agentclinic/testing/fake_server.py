"""A scriptable OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` with whatever the script returns for each request,
so litellm's real HTTP path can be exercised with no model and no network::

    with FakeOpenAIServer(lambda req: FakeReply("DIAGNOSIS READY: Asthma")) as server:
        ...  # --agent-api-base=server.url --agent-doctor=openai/fake
        assert server.calls == 1
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class FakeReply:
    """What the server sends back for one request."""

    content: str = "OK"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering (a slow model, or a timeout to provoke).
    delay: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5
    finish_reason: str = "stop"
    #: A transport fault instead of a clean reply: one of :data:`FAULTS`.
    fault: str | None = None
    #: Seconds between the bytes of a ``trickle`` fault's (valid) body.
    trickle: float = 0.25


#: The transport faults the server can play: ``reset`` closes the connection unanswered,
#: ``hang`` never answers, ``trickle`` sends a valid body one byte at a time, ``truncated``
#: stops half-way through the body, ``malformed`` / ``html`` / ``no_choices`` /
#: ``null_content`` / ``bad_usage`` answer 200 with a body that is not a usable completion.
FAULTS = ("reset", "hang", "trickle", "truncated", "malformed", "html", "no_choices",
          "null_content", "bad_usage")


@dataclass(frozen=True)
class FakeRequest:
    """One request the server received."""

    index: int
    body: dict[str, Any]
    headers: dict[str, str]
    #: ``time.monotonic()`` when the request arrived.
    received_at: float = 0.0
    #: The request's query string (an Azure-style gateway takes its key there).
    query: str = ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the request."""
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        """The system prompt, or an empty string."""
        return next((str(m["content"]) for m in self.messages if m["role"] == "system"), "")

    @property
    def role(self) -> str:
        """Which agentclinic role sent this request, read from its built-in prompt."""
        text = self.system or (str(self.messages[0]["content"]) if self.messages else "")
        for marker, role in (("You are a physician", "doctor"), ("playing a patient", "patient"),
                             ("report medical test", "measurement"),
                             ("compare two diagnoses", "moderator")):
            if marker in text:
                return role
        return "unknown"

    @property
    def doctor_turn(self) -> int:
        """For a doctor request: how many times the doctor has spoken before (0-based turn)."""
        return sum(m["role"] == "assistant" for m in self.messages)

    @property
    def last_user(self) -> str:
        """The last user message's text."""
        users = [m for m in self.messages if m["role"] == "user"]
        content = users[-1]["content"] if users else ""
        return content if isinstance(content, str) else json.dumps(content)


Script = Callable[[FakeRequest], FakeReply]


class RateLimit:
    """A provider's requests-per-minute limit, as a token bucket holding one second's worth:
    a request that finds it empty is refused with 429 and a Retry-After saying when the next
    token comes (fractional seconds, as some providers send)."""

    def __init__(self, rpm: float, burst: float | None = None) -> None:
        self.rate = rpm / 60.0
        self.capacity = burst if burst is not None else max(1.0, self.rate)
        self._tokens = self.capacity
        self._at = time.monotonic()
        self.refused = 0

    def admit(self) -> float | None:
        """None when the request may pass, else the seconds until it could."""
        now = time.monotonic()
        self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        self.refused += 1
        return (1.0 - self._tokens) / self.rate


class FakeOpenAIServer:
    """Runs in a background thread with its own event loop; use as a context manager."""

    def __init__(self, script: Script | None = None, rate_limit: RateLimit | None = None) -> None:
        self.script: Script = script or (lambda _req: FakeReply())
        self.rate_limit = rate_limit
        self.requests: list[FakeRequest] = []
        #: ``(arrived, answered)`` monotonic times of every request answered 200.
        self.served: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self.port = 0
        #: What ``GET /v1/models`` lists (None: the endpoint answers 404, as some servers do).
        self.models: list[str] | None = ["fake"]
        #: ``system_fingerprint`` of every reply, when set.
        self.fingerprint: str | None = None
        #: The ``meta`` of every ``/v1/models`` entry (llama.cpp's: the GGUF's size ...).
        self.meta: dict[str, Any] | None = None
        #: What ``GET /props`` answers, as llama.cpp's (None: 404, as vLLM's).
        self.props: dict[str, Any] | None = None
        #: A busy single-slot server: this many more identity requests (``/v1/models``,
        #: ``/props``) are answered 503, each after :attr:`busy_delay` seconds.
        self.busy = 0
        self.busy_delay = 0.0
        #: Identity requests received (``/v1/models`` and ``/props``).
        self.probes = 0

    @property
    def url(self) -> str:
        """The api base to give litellm."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        """How many requests arrived so far."""
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        # Stopping twice is allowed (a test may kill the server mid-run, its fixture again).
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._loop.call_soon_threadsafe(self._closing.set)
        asyncio.run_coroutine_threadsafe(runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_get("/v1/_stats", self._stats)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=1024)
        self._loop.run_until_complete(site.start())
        server: Any = site._server  # aiohttp keeps the bound asyncio server here
        self.port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        self._loop.run_forever()

    @property
    def refused(self) -> int:
        """Requests refused by the rate limit."""
        return self.rate_limit.refused if self.rate_limit else 0

    async def _stats(self, _request: web.Request) -> web.Response:
        with self._lock:
            served = list(self.served)
        return web.json_response({"calls": self.calls, "refused": self.refused,
                                  "served": served})

    async def _busy(self) -> web.Response | None:
        with self._lock:
            self.probes += 1
            busy = self.busy > 0
            self.busy -= busy
        if not busy:
            return None
        with contextlib.suppress(asyncio.TimeoutError):  # a stopping server answers now
            await asyncio.wait_for(self._closing.wait(), self.busy_delay)
        return _error(503, "server busy", {})

    async def _models(self, _request: web.Request) -> web.Response:
        busy = await self._busy()
        if busy is not None:
            return busy
        if self.models is None:
            return web.json_response({"error": "not found"}, status=404)
        extra = {"meta": self.meta} if self.meta is not None else {}
        return web.json_response({"object": "list", "data": [
            {"id": m, "object": "model", "created": int(time.time()), "owned_by": "fake",
             **extra} for m in self.models]})

    async def _props(self, _request: web.Request) -> web.Response:
        busy = await self._busy()
        if busy is not None:
            return busy
        if self.props is None:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response(self.props)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        arrived = time.monotonic()
        with self._lock:
            req = FakeRequest(len(self.requests), body, dict(request.headers), arrived,
                              request.query_string)
            self.requests.append(req)
            wait = self.rate_limit.admit() if self.rate_limit else None
        if wait is not None:
            return _error(429, "rate limit reached", {"Retry-After": f"{wait:.3f}"})
        reply = self.script(req)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.fault == "hang":
            await self._closing.wait()  # until the server stops
        if reply.fault is not None:
            return await _fault(request, body, reply)
        if reply.status != 200:
            return _error(reply.status, reply.content, reply.headers)
        with self._lock:
            self.served.append((arrived, time.monotonic()))
        completion = _completion(body, reply)
        if self.fingerprint is not None:
            completion["system_fingerprint"] = self.fingerprint
        return web.json_response(completion, headers=reply.headers)


def _error(status: int, message: str, headers: dict[str, str]) -> web.Response:
    error = {"error": {"message": message, "type": "fake_error", "code": status}}
    return web.json_response(error, status=status, headers=headers)


async def _fault(request: web.Request, body: dict[str, Any],
                 reply: FakeReply) -> web.StreamResponse:
    completion = _completion(body, reply)
    if reply.fault == "no_choices":
        return web.json_response({**completion, "choices": []})
    if reply.fault == "bad_usage":
        return web.json_response({**completion, "usage": "lots"})
    if reply.fault == "null_content":
        completion["choices"][0]["message"]["content"] = None
        return web.json_response(completion)
    if reply.fault == "html":
        return web.Response(text="<html><body>502 Bad Gateway</body></html>",
                            content_type="text/html")
    if reply.fault == "malformed":
        return web.Response(text='{"id": "chatcmpl-fake", "choices": [{"mess',
                            content_type="application/json")
    data = json.dumps(completion).encode()
    if reply.fault == "reset":
        if request.transport is not None:
            request.transport.abort()
        # aiohttp takes a cancelled handler for a client that went away: no error logged.
        raise asyncio.CancelledError
    response = web.StreamResponse(headers={"Content-Type": "application/json",
                                           "Content-Length": str(len(data))})
    await response.prepare(request)
    if reply.fault == "trickle":
        try:
            for i in range(len(data)):
                await response.write(data[i:i + 1])
                await asyncio.sleep(reply.trickle)
        except ConnectionError:
            pass  # the client gave up, as it should
        return response
    if reply.fault == "truncated":
        await response.write(data[: len(data) // 2])
    # ``truncated`` (and ``reset``, if still open): drop the connection mid-reply.
    if request.transport is not None:
        request.transport.abort()
    return response


def _completion(body: dict[str, Any], reply: FakeReply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }
