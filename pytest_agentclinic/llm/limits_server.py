"""The link of one process to the limits server (``--agent-limits-url``): the ``redis``
client, made on first use on the running loop; the two Lua scripts the schedules run; the
server's clock, learned from the fastest round trips; and outages: a lost server makes every
schedule fall back to its share, a probe finds it again and the schedules rejoin.

The schedules themselves (:class:`.shared_limits.SharedSchedule`) are the link's members;
it knows them only as :class:`Member`. The ``redis`` client (an optional extra) is imported
only here and in :mod:`.limits_url` (the check at the start), when a run names a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol

from ..core.errors import AgentClinicError
from ..core.redact import redact
from .limits_url import TIMEOUT_S, client_url

__all__ = ["CLOCK_RTT_S", "PROBE_S", "REFUND", "RESERVE", "LimitsServer", "Member",
           "ServerLost", "SharedLimitsWarning", "import_client", "warn"]

#: Seconds between a fallen-back process's probes of the server.
PROBE_S = 0.5
#: A round trip this short gives the server's clock offset to within half of it.
CLOCK_RTT_S = 0.005

#: Reserve ``ARGV[1]`` seconds of the schedule ``KEYS[1]`` (its theoretical arrival time, on
#: the server's clock): the slot after the previous reservation's, or now once the bucket of
#: ``ARGV[2]`` seconds has refilled. ``ARGV[3]``: the end of the schedule this process last
#: saw, used when the key is gone (a restart) and, when ``ARGV[6]`` is 1 (a rejoin), also when
#: it is later than the key's (a restarted server was refilled by a process that had seen
#: less of it); ``ARGV[4]``: no slot before now plus this (a rejoin, a 429's pause);
#: ``ARGV[5]``: the key's lifetime past the schedule's end (ms).
#: Returns the slot, the server's now and the schedule's new end, as text (Lua numbers
#: would be cut to integers).
RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[3])
if ARGV[6] == '1' then tat = math.max(tat, tonumber(ARGV[3])) end
tat = math.max(tat, now + tonumber(ARGV[4]))
local slot = math.max(now, tat - tonumber(ARGV[2]))
local after = math.max(tat, slot) + tonumber(ARGV[1])
local ttl = math.ceil((after - now) * 1000 + tonumber(ARGV[5]))
redis.call('SET', KEYS[1], string.format('%.6f', after), 'PX', math.max(ttl, 1))
return {string.format('%.6f', slot), string.format('%.6f', now), string.format('%.6f', after)}
"""

#: Give back ``ARGV[1]`` seconds of the schedule (an estimate above the real usage), when
#: the key still exists; its expiry is kept.
REFUND = """
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat then
  redis.call('SET', KEYS[1], string.format('%.6f', tat - tonumber(ARGV[1])), 'KEEPTTL')
end
return 0
"""


class Member(Protocol):
    """A schedule kept on the server, as the link tells it of outages."""

    def fall_back(self) -> None:
        """The server is lost: pace on this process's share."""

    async def rejoin(self) -> None:
        """The server answers again: take shared slots again."""


class ServerLost(AgentClinicError):
    """The limits server did not answer: pace on this process's share."""


class SharedLimitsWarning(UserWarning):
    """The limits server was lost (the run paces on even shares) or found again."""


class LimitsServer:
    """This process's link to the limits server: the client, made on first use on the
    running loop, and whether the server is up. ``parts``: the processes of the run (the
    share's divisor) for the messages."""

    def __init__(self, url: str, parts: int = 1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.parts = max(1, parts)
        self.clock = clock
        self.up = True
        #: Outages this process met, and the seconds it paced on its share.
        self.outages = 0
        self.fallback_s = 0.0
        self._lost_at = 0.0
        self._client: Any = None
        # Until the client is imported (a process without it falls back like a lost server).
        self._errors: tuple[type[BaseException], ...] = (OSError, asyncio.TimeoutError,
                                                         ImportError)
        self._scripts: dict[str, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connecting: asyncio.Future[None] | None = None
        #: Local clock minus the server's, from the fastest round trip seen (its time).
        self.offset: float | None = None
        self._offset_rtt = 0.0
        self._probe: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.schedules: list[Member] = []
        #: Told of an outage (from the loop's thread): a warning by default; the pytest
        #: plugin keeps it for the run's end instead (``plugin.events``), as a warning
        #: made between items, or by an xdist worker, reached no warnings summary.
        self.notify: Callable[[Warning], None] = warn

    async def _connect(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            if self._connecting is None or self._loop is not loop:
                self._loop = loop
                self._connecting = asyncio.ensure_future(self._open())
            try:
                await asyncio.shield(self._connecting)
            except BaseException:
                self._connecting = None  # the next call tries again
                raise
        return self._scripts

    async def _open(self) -> None:
        """Make the client, load the scripts and learn the server's clock: once, whatever
        the number of calls waiting for it."""
        # redis.asyncio takes ~0.25 s to import: not on the loop.
        module = await asyncio.to_thread(importlib.import_module, "redis.asyncio")
        retry = importlib.import_module("redis.asyncio.retry")
        backoff = importlib.import_module("redis.backoff")
        exceptions = importlib.import_module("redis.exceptions")
        self._errors = (exceptions.RedisError, OSError, asyncio.TimeoutError)
        # One immediate retry: a pooled connection a restarted server dropped.
        client = module.Redis.from_url(
            client_url(self.url), socket_timeout=TIMEOUT_S,
            socket_connect_timeout=TIMEOUT_S, retry=retry.Retry(backoff.NoBackoff(), 1))
        for _ in range(3):  # the first answer pays for the connection
            sent = self.clock()
            seconds, micros = await client.time()
            self.learn_clock(sent, seconds + micros / 1e6)
        await client.script_load(RESERVE)
        await client.script_load(REFUND)
        self._scripts = {"reserve": client.register_script(RESERVE),
                         "refund": client.register_script(REFUND)}
        self._client = client

    def learn_clock(self, sent: float, server_now: float) -> None:
        """A reply sent at local ``sent`` (and read now) saw the server's clock at
        ``server_now``: keep the offset of the fastest round trip (its error is half of it)."""
        rtt = self.clock() - sent
        if self.offset is None or rtt <= max(self._offset_rtt, CLOCK_RTT_S):
            self.offset = sent + rtt / 2 - server_now
            self._offset_rtt = rtt

    async def run(self, script: str, key: str, args: list[float]) -> tuple[list[float], float]:
        """Run one of the scripts on ``key``: its reply, and the clock time it was sent;
        :class:`ServerLost` when the server fails."""
        try:
            scripts = await self._connect()
            sent = self.clock()
            reply = await scripts[script](keys=[key], args=args)
        except asyncio.CancelledError:
            raise
        except self._errors as exc:
            self.lose(exc)
            raise ServerLost(str(exc)) from None
        return ([float(x) for x in reply] if isinstance(reply, list) else []), sent

    def spawn(self, work: Any) -> None:
        """Run ``work`` in the background (a refund, a pause), keeping a reference."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_consume)

    def lose(self, exc: BaseException) -> None:
        """The server failed: every schedule falls back to its share, once per outage."""
        if not self.up:
            return
        self.up = False
        self.outages += 1
        self._lost_at = self.clock()
        for schedule in self.schedules:
            schedule.fall_back()
        message = (f"agentclinic: the limits server {redact(self.url)} is unreachable "
                   f"({redact(str(exc)) or type(exc).__name__}): this process paces at its 1/"
                   f"{self.parts} share of the limits until the server answers again")
        self.notify(SharedLimitsWarning(message))
        if self._probe is None or self._probe.done():
            self._probe = asyncio.ensure_future(self._find_again())

    async def _find_again(self) -> None:
        """Probe every :data:`PROBE_S`; once the server answers, hold every schedule for
        :data:`REJOIN_GUARD_S` and take shared slots again."""
        while not self.up:
            await asyncio.sleep(PROBE_S)
            failures: tuple[type[BaseException], ...] = (ServerLost, *self._errors)
            try:
                await self._connect()
                for schedule in self.schedules:
                    await schedule.rejoin()
            except asyncio.CancelledError:
                raise
            except failures:
                self.up = False  # a rejoin's script failed: keep probing
                continue
            self.fallback_s += self.clock() - self._lost_at
            self.up = True

    async def aclose(self) -> None:
        """Stop probing and close the client."""
        if self._probe is not None:
            self._probe.cancel()
        for task in list(self._tasks):
            task.cancel()
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            with contextlib.suppress(*self._errors):
                await client.aclose()


def warn(warning: Warning) -> None:
    """``warnings.warn``; where warnings are errors (``-W error``), printed instead: an
    outage must never fail the call that met it."""
    try:
        warnings.warn(warning, stacklevel=3)
    except Warning:
        print(str(warning), file=sys.stderr)


def import_client() -> None:
    """Import the client (in a thread at a run's start: it takes ~0.25 s); absent, nothing."""
    with contextlib.suppress(ImportError):
        importlib.import_module("redis.asyncio")


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
