"""One provider limit for many processes: the request and token schedules kept on a
Valkey/Redis server (``--agent-limits-url redis://host:port/db``).

Without a server each process paces at its even share of the limit (xdist workers x
``--agent-shard`` machines), which wastes the shares of processes that have nothing to send.
With one, every process of the run takes its slots from one schedule per provider limit,
kept on the server: the same fixed-interval schedule as :class:`.limiter.Schedule` (the
next slot is the previous one plus the interval, a bucket of :data:`.limiter.RPM_BURST_S`
seconds' worth after an idle spell), advanced atomically by a short Lua script on the
server's own clock (``TIME``), so N processes together pace exactly like one.

* **Keys.** One per provider deployment and limit (:func:`schedule_key`: the model, where it
  is served, the kind of limit and its value): unrelated runs share a schedule only when
  they name the same provider limit, which is then truly shared. Keys expire
  :data:`KEY_TTL_S` after their schedule's end.
* **Faults.** A process that loses the server falls back to its even share (one warning,
  :attr:`LimitsServer.notify`),
  starting after the end of the shared schedule as it last saw it; it probes the server every
  :data:`PROBE_S` and rejoins when it answers. A rejoining process holds the shared schedule
  for :data:`REJOIN_GUARD_S` (long enough for every other process's probe to find the server
  too), so no process takes shared slots while others still pace on their shares. A restart
  loses nothing that matters: slots are times, and each process hands the server the end of
  the schedule as it last saw it.
* The ``redis`` client (an optional extra) is imported only here (its asyncio client, in a
  thread) and in :mod:`.limits_url` (the check at the start), when a run names a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ..core.errors import AgentClinicError
from ..core.redact import redact
from ..core.threads import start_thread
from .limits_url import ENV as ENV
from .limits_url import TIMEOUT_S, client_url

KEY_PREFIX = "agentclinic:pace:v1"
#: A schedule's key outlives the schedule's end by this much, then the server drops it.
KEY_TTL_S = 120.0
#: Seconds between a fallen-back process's probes of the server.
PROBE_S = 0.5
#: After a rejoin no shared slot starts for this long: the other processes find the server
#: within one probe period and stop pacing on their shares meanwhile.
REJOIN_GUARD_S = 1.5 * PROBE_S
#: A round trip this short gives the server's clock offset to within half of it.
CLOCK_RTT_S = 0.005
#: A request slot found gone (its waiter woke, or read the server's reply, past the catch-up
#: bound) is taken anew at most this many times in a row: a process that is always that
#: slow still makes progress.
MAX_RETAKES = 5
#: A "none" for the script's floors (Lua's tonumber does not read "-inf").
_NONE = -1.0e18

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


def schedule_key(kind: str, rate_per_minute: float, model: str, where: Iterable[str]) -> str:
    """The key of one provider limit: ``kind`` (``rpm``/``tpm``) at ``rate_per_minute`` for
    ``model`` served at ``where`` (api bases, a deployment group's models). The readable part
    names the model and limit; the digest keeps apart the same model served elsewhere."""
    identity = json.dumps([kind, f"{rate_per_minute:.6g}", model, sorted(set(where))])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    readable = "".join(c if c.isalnum() or c in "-_./" else "_" for c in model)[:60]
    return f"{KEY_PREFIX}:{readable}:{kind}={rate_per_minute:.6g}:{digest}"


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
        self.schedules: list[SharedSchedule] = []
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


def _import_client() -> None:
    with contextlib.suppress(ImportError):
        importlib.import_module("redis.asyncio")


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class SharedSchedule:
    """A schedule of ``rate`` units a second whose timeline is kept on the server (see
    :class:`.limiter.Schedule`, whose ``take``/``refund``/``hold`` it shares), with a
    ``fallback`` schedule at this process's share for when the server is lost.

    ``retake_late``: a waiter that woke more than ``catch_up`` past its slot takes a new one
    (requests: calls woken together late must not leave together); a token reservation is
    kept (the tokens were counted in the schedule).
    """

    def __init__(self, server: LimitsServer, key: str, rate: float, capacity: float,
                 fallback: Any, *, retake_late: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        self.key = key
        self.rate = rate
        self.capacity = max(1.0, capacity)
        self.fallback = fallback
        self.catch_up = float(fallback.catch_up)
        self.retake_late = retake_late
        self._clock = clock
        #: The schedule's end as this process last saw it (server time), and how far
        #: ahead of the server's now it was then (the queue of slots handed out).
        self._end: float | None = None
        self._queue = 0.0
        server.schedules.append(self)

    def _args(self, cost: float, floor: float, rejoin: bool) -> list[float]:
        slack = (self.capacity - min(cost, self.capacity)) / self.rate
        return [cost / self.rate, slack, self._end if self._end is not None else _NONE, floor,
                KEY_TTL_S * 1000, int(rejoin)]

    async def _reserve(self, cost: float, floor: float = _NONE,
                       rejoin: bool = False) -> float:
        """A shared slot for ``cost`` units as a local clock time.

        Through the server's clock offset (learned from fast round trips), not from when the
        reply was read: a process slow to read it (a busy CPU, another thread holding the GIL)
        then knows its slot went by, and does not start late into the next processes' slots.
        """
        server = self.server
        (slot, now, end), sent = await server.run("reserve", self.key,
                                                  self._args(cost, floor, rejoin))
        self._end, self._queue = end, end - now
        server.learn_clock(sent, now)
        if server.offset is None:
            return slot - now + self._clock()
        return slot + server.offset

    async def take(self, cost: float = 1.0) -> None:
        """Wait for a slot of ``cost`` units: the shared schedule's, or the share's while
        the server is lost."""
        retakes = 0
        while True:
            if not self.server.up:
                if await self._take_fallback(cost):
                    return
                continue
            try:
                due = await self._reserve(cost)
            except ServerLost:
                continue
            while (delay := due - self._clock()) > 0:
                await asyncio.sleep(delay)
            late = self._clock() - due > self.catch_up
            if not (self.retake_late and late) or retakes >= MAX_RETAKES:
                return
            retakes += 1

    async def _take_fallback(self, cost: float) -> bool:
        """Wait for a slot of the share; False when the server came back meanwhile (the
        slot is given back and a shared one is to be taken)."""
        local = self.fallback
        slot = local.reserve(cost)
        while (delay := local.due(slot) - self._clock()) > 0:
            if self.server.up:
                local.refund(cost)
                return False
            await asyncio.sleep(min(delay, PROBE_S))
        local.late(slot)
        return True

    def refund(self, cost: float) -> None:
        """Give back ``cost`` units (a negative ``cost`` charges more), in the background."""
        if not cost:
            return
        if not self.server.up:
            self.fallback.refund(cost)
            return
        self.server.spawn(self._refund(cost))

    async def _refund(self, cost: float) -> None:
        with contextlib.suppress(ServerLost):
            await self.server.run("refund", self.key, [cost / self.rate])

    def hold(self, until: float) -> None:
        """No start before local clock time ``until``, none in a burst then (a 429's pause):
        for every process of the run."""
        self.fallback.hold(until)
        if self.server.up:
            floor = until - self._clock() + (self.capacity - 1.0) / self.rate
            self.server.spawn(self._hold(floor))

    async def _hold(self, floor: float) -> None:
        with contextlib.suppress(ServerLost):
            await self._reserve(0.0, floor)

    def fall_back(self) -> None:
        """The server is lost: the share's schedule starts once the queue of shared slots
        already handed out (this process's and the others') has passed, as long as it was
        when last seen: the other processes kept adding to it meanwhile, about as fast as
        its slots passed."""
        self.fallback.hold(self._clock() + max(self._queue, 0.0))

    async def rejoin(self) -> None:
        """The server answers again: hold the shared schedule for the guard (the other
        processes stop pacing on their shares meanwhile), with no burst after it."""
        await self._reserve(0.0, REJOIN_GUARD_S + (self.capacity - 1.0) / self.rate,
                            rejoin=True)


class SharedPacing:
    """Makes the gates' shared schedules (a :data:`.limiter.SharedFactory`): one server
    link per process, keys by deployment (``api_base``, an ``--agent-models`` group's
    deployments) and limit."""

    def __init__(self, url: str, parts: int, api_base: str | None = None,
                 model_list: Iterable[dict[str, Any]] = ()) -> None:
        self.server = LimitsServer(url, parts)
        self.api_base = api_base
        self.model_list = tuple(model_list)
        # The client's import (~0.25 s) starts now, in a thread: the first calls find it done.
        start_thread(_import_client, name="agentclinic-limits-import")

    def where(self, model: str) -> list[str]:
        """Where ``model`` is served: the api base and its group's deployments (never their
        keys)."""
        deployments = [f"{p.get('model', '')}@{p.get('api_base', '')}"
                       for entry in self.model_list if entry.get("model_name") == model
                       for p in [entry.get("litellm_params") or {}]]
        return [self.api_base or "", *deployments]

    def __call__(self, model: str, kind: str, per_minute: float, rate: float,
                 capacity: float, fallback: Any) -> SharedSchedule:
        key = schedule_key(kind, per_minute, model, self.where(model))
        return SharedSchedule(self.server, key, rate, capacity, fallback,
                              retake_late=kind == "rpm")

    async def aclose(self) -> None:
        """Close the server link."""
        await self.server.aclose()
