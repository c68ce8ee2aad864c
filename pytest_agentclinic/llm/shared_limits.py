"""One provider limit for many processes: the request and token schedules kept on a
Valkey/Redis server (``--agent-limits-url redis://host:port/db``).

Without a server each process paces at its even share of the limit (xdist workers x
``--agent-shard`` machines), which wastes the shares of processes that have nothing to send.
With one, every process of the run takes its slots from one schedule per provider limit,
kept on the server: the same fixed-interval schedule as :class:`.limiter.Schedule` (the
next slot is the previous one plus the interval, a bucket of :data:`.limiter.RPM_BURST_S`
seconds' worth after an idle spell), advanced atomically by a short Lua script on the
server's own clock (``TIME``), so N processes together pace exactly like one. The link to
the server (client, scripts, clock, outages) is :mod:`.limits_server`'s.

* **Keys.** One per provider deployment and limit (:func:`schedule_key`: the model, where it
  is served, the kind of limit and its value): unrelated runs share a schedule only when
  they name the same provider limit, which is then truly shared. Keys expire
  :data:`KEY_TTL_S` after their schedule's end.
* **Faults.** A process that loses the server falls back to its even share (one warning,
  :attr:`.limits_server.LimitsServer.notify`), starting after the end of the shared
  schedule as it last saw it; it probes the server every :data:`.limits_server.PROBE_S` and
  rejoins when it answers. A rejoining process holds the shared schedule for
  :data:`REJOIN_GUARD_S` (long enough for every other process's probe to find the server
  too), so no process takes shared slots while others still pace on their shares. A restart
  loses nothing that matters: slots are times, and each process hands the server the end of
  the schedule as it last saw it.
* The ``redis`` client (an optional extra) is imported only in :mod:`.limits_server` (its
  asyncio client, in a thread) and :mod:`.limits_url` (the check at the start), when a run
  names a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..core.threads import start_thread
from .limits_server import PROBE_S, LimitsServer, ServerLost, import_client
from .limits_url import ENV as ENV

KEY_PREFIX = "agentclinic:pace:v1"
#: A schedule's key outlives the schedule's end by this much, then the server drops it.
KEY_TTL_S = 120.0
#: After a rejoin no shared slot starts for this long: the other processes find the server
#: within one probe period and stop pacing on their shares meanwhile.
REJOIN_GUARD_S = 1.5 * PROBE_S
#: A request slot found gone (its waiter woke, or read the server's reply, past the catch-up
#: bound) is taken anew at most this many times in a row: a process that is always that
#: slow still makes progress.
MAX_RETAKES = 5
#: A "none" for the script's floors (Lua's tonumber does not read "-inf").
_NONE = -1.0e18

def schedule_key(kind: str, rate_per_minute: float, model: str, where: Iterable[str]) -> str:
    """The key of one provider limit: ``kind`` (``rpm``/``tpm``) at ``rate_per_minute`` for
    ``model`` served at ``where`` (api bases, a deployment group's models). The readable part
    names the model and limit; the digest keeps apart the same model served elsewhere."""
    identity = json.dumps([kind, f"{rate_per_minute:.6g}", model, sorted(set(where))])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    readable = "".join(c if c.isalnum() or c in "-_./" else "_" for c in model)[:60]
    return f"{KEY_PREFIX}:{readable}:{kind}={rate_per_minute:.6g}:{digest}"


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
        start_thread(import_client, name="agentclinic-limits-import")

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
