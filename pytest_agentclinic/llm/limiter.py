"""Per-model admission control: requests and tokens per minute, a shared pause on 429, and
adaptive concurrency.

Every model call passes through its model's :class:`ModelGate` before it is sent:

* **calls in flight** are bounded by ``limit``; when no RPM/TPM limit is known for the model the
  limit adapts like TCP congestion control: it halves when the provider answers 429 or times
  out, and grows by one after ``limit`` calls in a row went through;
* **requests per minute** follow a fixed :class:`Schedule` at :data:`RPM_MARGIN` of the given
  rate: each call reserves the slot after the previous one's (never "now + interval", which
  added every late wake-up to the schedule), a late wake-up is caught up, and neither an idle
  spell nor a stall ever lets more than :data:`RPM_BURST_S` seconds' worth start together;
* **tokens per minute** follow a schedule of the same kind, holding a minute's tokens; a call
  reserves its estimate (prompt characters / 4 + ``max_tokens``) and is charged its real
  usage afterwards;
* a 429 **pauses every call of the model** until the provider's Retry-After (or
  ``x-ratelimit-reset-*``) has passed, instead of letting each call find out on its own.

A process's gates pace on its even share of the run's limits, or (``--agent-limits-url``)
on schedules kept on a server for every process of the run
(:mod:`.shared_limits`; :class:`Pacing` is what both offer the gate).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import heapq
import itertools
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass

#: Fraction of a given RPM/TPM the gate aims at: a provider counting in its own window sees
#: requests a little bunched by the network, and 2% headroom kept refusals at 0 in the
#: benchmark where 100% refused ~1 request in 50.
RPM_MARGIN = 0.98

#: A provider may enforce a per-minute limit per second (OpenAI: "60,000 requests/minute may
#: be enforced as 1,000 requests/second"): requests may start together after an idle spell
#: up to this many seconds' worth, well within one second's.
RPM_BURST_S = 0.75

#: How far behind its schedule a late-woken gate catches up; a longer stall (an import, a
#: GC pass) moves the rest of the schedule back instead of flooding the provider with the
#: calls whose slots passed meanwhile.
CATCH_UP_S = 0.1


#: The order of the item a call serves (set by whoever starts the item's task; tasks it
#: starts inherit it): earlier items get free call slots first.
CALL_PRIORITY: contextvars.ContextVar[int] = contextvars.ContextVar("call_priority", default=0)


class PrioritySlots:
    """At most ``size`` holders at once; waiters are served lowest priority number first.

    The calls in flight of a process: items started ahead of time (a CRAFT-MD item waiting
    on its case's conversation, an encounter between two calls) hold none, and when slots
    are scarce the earliest items' calls go first, so items still finish in order.
    """

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.held = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: int) -> None:
        """Wait for a slot."""
        if self.held < self.size and not self._waiters:
            self.held += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), waiter))
        try:
            await waiter  # the releaser handed its slot over (``held`` unchanged)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # a slot was handed over just before the cancel
            raise

    def release(self) -> None:
        """Hand the slot to the first live waiter, or free it."""
        while self._waiters:
            _p, _n, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)
                return
        self.held -= 1


@dataclass(frozen=True)
class Budget:
    """One model's limits; ``None`` means unlimited (and concurrency adapts)."""

    rpm: float | None = None
    tpm: float | None = None

    def share(self, parts: int) -> Budget:
        """This budget split evenly over ``parts`` processes (xdist workers)."""
        if parts <= 1:
            return self
        return Budget(None if self.rpm is None else self.rpm / parts,
                      None if self.tpm is None else self.tpm / parts)


class Schedule:
    """A fixed timeline of starts at ``rate`` units a second (a GCRA token bucket holding
    ``capacity`` units): pure bookkeeping on ``clock``, asyncio only in :meth:`wait`.

    :meth:`reserve` hands out the slot after the previous reservation's (or now, once the
    bucket has refilled): slots never depend on when their waiters actually woke, so late
    wake-ups are caught up. :meth:`late` bounds the catch-up: a waiter more than
    ``catch_up`` seconds late moves the whole timeline back by the excess.
    """

    def __init__(self, rate: float, capacity: float = 1.0, catch_up: float = CATCH_UP_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.capacity = max(1.0, capacity)
        self.catch_up = catch_up
        self._clock = clock
        #: When the bucket would be full again (in the timeline's own time).
        self._tat = float("-inf")
        #: Seconds the timeline was moved back after stalls (slot + offset = clock time).
        self.offset = 0.0

    def reserve(self, cost: float = 1.0) -> float:
        """The slot (pass it to :meth:`due` / :meth:`wait`) of a start costing ``cost``."""
        now = self._clock() - self.offset
        # A cost above the bucket still runs, once the bucket is full: never forever.
        slack = (self.capacity - min(cost, self.capacity)) / self.rate
        slot = max(now, self._tat - slack)
        self._tat = max(self._tat, slot) + cost / self.rate
        return slot

    def due(self, slot: float) -> float:
        """The clock time of ``slot``."""
        return slot + self.offset

    def late(self, slot: float) -> None:
        """``slot``'s waiter woke now: past the catch-up bound, move the timeline back."""
        lateness = self._clock() - self.due(slot)
        if lateness > self.catch_up:
            self.offset += lateness - self.catch_up

    def refund(self, cost: float) -> None:
        """Give back ``cost`` units (a reservation not used, or an estimate above the real
        usage; a negative ``cost`` charges more)."""
        self._tat -= cost / self.rate

    def hold(self, until: float) -> None:
        """No start before clock time ``until``, and none in a burst then (after a 429)."""
        self._tat = max(self._tat, until - self.offset + (self.capacity - 1.0) / self.rate)

    async def wait(self, slot: float) -> None:
        """Sleep until ``slot`` is due."""
        while (delay := self.due(slot) - self._clock()) > 0:
            await asyncio.sleep(delay)
        self.late(slot)

    async def take(self, cost: float = 1.0) -> None:
        """Reserve a start of ``cost`` and wait for it (what a shared schedule also does)."""
        await self.wait(self.reserve(cost))


@dataclass
class GateStats:
    """What a gate saw, for the summary and the benchmarks."""

    calls: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    paused_s: float = 0.0
    lowest_limit: int = 0


class Pacing(typing.Protocol):
    """A schedule's face to the gate: :class:`Schedule`, or one kept on a server
    (:class:`.shared_limits.SharedSchedule`)."""

    catch_up: float

    async def take(self, cost: float = 1.0) -> None:
        """Wait for a start of ``cost`` units."""

    def refund(self, cost: float) -> None:
        """Give back ``cost`` units."""

    def hold(self, until: float) -> None:
        """No start before clock time ``until``."""


#: Makes a shared schedule: (model, kind ``rpm``/``tpm``, the whole run's limit per minute,
#: units a second, bucket capacity, this process's share as the fallback).
SharedFactory = Callable[[str, str, float, float, float, Schedule], Pacing]


class ModelGate:
    """Admission for one model's calls (one per model per process, on the runner's loop).

    ``budget`` is this process's share of the limits; with ``shared`` it is the whole run's,
    paced on a server, and ``parts`` divides it for the share a lost server falls back to.
    """

    def __init__(self, model: str, budget: Budget, max_in_flight: int,
                 clock: Callable[[], float] = time.monotonic, *, parts: int = 1,
                 shared: SharedFactory | None = None) -> None:
        self.model = model
        self.budget = budget
        self.max_in_flight = max(1, max_in_flight)
        self.adaptive = budget.rpm is None and budget.tpm is None
        self.limit = self.max_in_flight
        self.in_flight = 0
        self.stats = GateStats(lowest_limit=self.limit)
        self._clock = clock
        self._paused_until = 0.0
        self._requests: Pacing | None = None
        self._tokens: Pacing | None = None
        if budget.rpm:
            self._requests = _pacing(model, "rpm", budget.rpm, RPM_BURST_S, clock, parts,
                                     shared)
        if budget.tpm:
            # Providers hold a minute's tokens in their bucket.
            self._tokens = _pacing(model, "tpm", budget.tpm, 60.0, clock, parts, shared)
        self._successes = 0
        self._decreased_at = float("-inf")
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    # ------------------------------------------------------------ admission

    async def acquire(self, tokens: int = 0) -> float:
        """Wait for a slot, the pause, the RPM spacing and the TPM budget; returns the start
        time (pass it back to :meth:`release`)."""
        await self._wait_unpaused()
        while self.in_flight >= self.limit:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                self._wake()  # pass on a wake-up this cancelled waiter may have taken
                raise
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.in_flight += 1
        try:
            await self._wait_schedules(tokens)
        except BaseException:
            self._leave()
            raise
        self.stats.calls += 1
        return self._clock()

    async def resume(self, admitted: float) -> None:
        """For a call admitted at ``admitted`` that then waited (for a call slot): past the
        catch-up bound, its request slot has gone and it takes a new one, so calls held
        back together do not leave together."""
        requests = self._requests
        if requests is not None and self._clock() - admitted > requests.catch_up:
            await requests.take()

    def release(self, started: float, *, reserved: int = 0, used: int | None = None,
                rate_limited: bool = False, timed_out: bool = False,
                retry_after: float | None = None) -> None:
        """Free the slot and learn from the outcome of the call started at ``started``."""
        self._leave()
        if used is not None and self._tokens is not None:
            self._tokens.refund(reserved - used)  # charge the real usage, not the estimate
        if rate_limited:
            self.stats.rate_limited += 1
            self.pause(retry_after if retry_after is not None else 1.0)
        if timed_out:
            self.stats.timeouts += 1
        if rate_limited or timed_out:
            self._decrease(started)
        elif used is not None:
            self._increase()

    def pause(self, seconds: float) -> None:
        """Hold every call of this model for ``seconds`` from now."""
        until = self._clock() + max(0.0, seconds)
        if until > self._paused_until:
            self.stats.paused_s += until - max(self._paused_until, self._clock())
            self._paused_until = until
            if self._requests is not None:
                self._requests.hold(until)

    # -------------------------------------------------------------- helpers

    def _leave(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.in_flight
        for waiter in list(self._waiters)[:max(free, 0)]:
            if not waiter.done():
                waiter.set_result(None)

    def _decrease(self, started: float) -> None:
        # Only calls sent after the last decrease may lower the limit again: one wave of 429s
        # answers one overload, not many.
        if not self.adaptive or started < self._decreased_at:
            return
        self.limit = max(1, self.limit // 2)
        self.stats.lowest_limit = min(self.stats.lowest_limit, self.limit)
        self._decreased_at = self._clock()
        self._successes = 0

    def _increase(self) -> None:
        if not self.adaptive or self.limit >= self.max_in_flight:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self._wake()

    async def _wait_unpaused(self) -> None:
        while (delay := self._paused_until - self._clock()) > 0:
            await asyncio.sleep(delay)

    async def _wait_schedules(self, tokens: int) -> None:
        """Wait for this call's request slot and its tokens; a 429 pause that began
        meanwhile sends it back for new ones after the pause."""
        while True:
            await self._wait_unpaused()
            requests, budget = self._requests, self._tokens
            if requests is not None:
                await requests.take()
            if budget is not None:
                try:
                    await budget.take(tokens)
                except BaseException:
                    budget.refund(tokens)  # a cancelled call spends none
                    raise
            if self._paused_until <= self._clock():
                return
            if budget is not None:
                budget.refund(tokens)  # not spent: the call waits the pause out first


def _pacing(model: str, kind: str, per_minute: float, capacity_s: float,
            clock: Callable[[], float], parts: int, shared: SharedFactory | None) -> Pacing:
    """A schedule at :data:`RPM_MARGIN` of ``per_minute`` holding ``capacity_s`` seconds'
    worth: this process's own, or a shared one falling back to its 1/``parts`` share."""
    rate = per_minute * RPM_MARGIN / 60
    if shared is None:
        return Schedule(rate, rate * capacity_s, clock=clock)
    # The share a lost server falls back to starts no request burst: the processes fall
    # back together, and their bursts would add up.
    share = rate / parts
    fallback = Schedule(share, share * capacity_s if kind == "tpm" else 1.0, clock=clock)
    return shared(model, kind, per_minute, rate, rate * capacity_s, fallback)


class Gates:
    """The gates of one process, one per model, created on first use.

    With ``shared`` (``--agent-limits-url``) the budgets are the whole run's, paced on the
    server, and ``parts`` is the number of processes whose even share a gate falls back to.
    """

    def __init__(self, budgets: dict[str, Budget], default: Budget, max_in_flight: int,
                 *, parts: int = 1, shared: SharedFactory | None = None) -> None:
        self.budgets = budgets
        self.default = default
        self.max_in_flight = max_in_flight
        self.parts = parts
        self.shared = shared
        self._gates: dict[str, ModelGate] = {}

    def __getitem__(self, model: str) -> ModelGate:
        gate = self._gates.get(model)
        if gate is None:
            budget = self.budgets.get(model, self.default)
            gate = self._gates[model] = ModelGate(model, budget, self.max_in_flight,
                                                  parts=self.parts, shared=self.shared)
        return gate

    def stats(self) -> dict[str, GateStats]:
        """Each model's counters."""
        return {model: gate.stats for model, gate in self._gates.items()}


def estimate_tokens(messages: list[dict[str, object]], max_tokens: int) -> int:
    """A cheap upper-bound guess of a call's tokens, before the provider counts them."""
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return chars // 4 + max_tokens
