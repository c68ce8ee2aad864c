"""Model calls as the agents make them: cached, retried, and costed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.redact import redact
from ..core.roles import Reply
from ..core.transcript import Usage
from . import client, encounter_limits, openai_http, served
from .cache import CacheMode, ResponseCache, cache_key, key_parts
from .cache_entry import ReplyEntry, ServedEntry
from .call_options import CallSettings as CallSettings
from .errors import ReplayMissError, TransientError, timed_out
from .limiter import CALL_PRIORITY, Gates, PrioritySlots, estimate_tokens
from .retry import call_with_retries
from .stats import CallStats
from .transports import TRANSPORTS as TRANSPORTS
from .transports import Transports
from .types import Completion

if TYPE_CHECKING:
    from .shared_limits import SharedPacing

T = TypeVar("T")



class ModelCaller:
    """Looks a call up in the cache, else makes it under the retry policy and stores it."""

    def __init__(self, settings: CallSettings, cache: ResponseCache) -> None:
        self.settings = settings
        self.cache = cache
        #: Requests sent over HTTP (attempts included) by this process.
        self.http_attempts = 0
        self.pacing: SharedPacing | None = None
        if settings.limits_url:
            from .shared_limits import SharedPacing

            self.pacing = SharedPacing(settings.limits_url, settings.parts, settings.api_base,
                                       settings.model_list)
        self.gates = Gates(settings.budgets, settings.budget, settings.concurrency,
                           parts=settings.parts, shared=self.pacing)
        #: Each model's transport (litellm or the aiohttp fast path), chosen once.
        self.transports = Transports(settings.transport, settings.api_base,
                                     settings.concurrency)
        #: Seconds spent in calls, summed over calls (busy slot-seconds).
        self.busy_s = 0.0
        #: Calls in flight (what ``--agent-concurrency`` bounds), earliest items first.
        self.slots = PrioritySlots(settings.concurrency)
        if settings.model_list:
            client.use_deployments(list(settings.model_list))
        self.stats = CallStats()
        #: What the api base serves under each model name (None: it does not say).
        self._served: dict[str, asyncio.Future[str | None]] = {}
        #: ``system_fingerprint`` values seen per model (replies and cache hits).
        self.fingerprints: dict[str, set[str]] = {}
        #: Whether :meth:`warm` left the fast path's warm-up to the first cache miss.
        self._fast_path_cold = False

    async def served_model(self, model: str) -> str | None:
        """The served identity of ``model`` behind ``--agent-api-base`` (None without one).

        Asked once per model and process. A replay never asks (it may have no server): it
        uses the identity the recording run stored beside its replies.
        """
        if self.settings.api_base is None:
            return None
        if model not in self._served:
            self._served[model] = asyncio.ensure_future(self._identify(model))
        return await self._served[model]

    async def _identify(self, model: str) -> str | None:
        stored_key = f"served\x1f{model}"
        if self.cache.mode is CacheMode.REPLAY:
            stored = self.cache.served(stored_key)
            return None if stored is None else stored.served
        assert self.settings.api_base is not None
        identity = await served.probe(self.settings.api_base, model)
        if identity is not None:
            self.cache.put(stored_key, ServedEntry(identity).stored())
        return identity

    def served_identities(self, models: Any) -> dict[str, str]:
        """``model -> identity`` for the ``models`` whose identity this process learned."""
        out: dict[str, str] = {}
        for model in models:
            future = self._served.get(model)
            identity = None
            # A probe that failed (e.g. a damaged cache, already a fatal error) names nothing.
            probed = (future is not None and future.done() and not future.cancelled()
                      and future.exception() is None)
            if probed:
                assert future is not None
                identity = future.result()
            prints = sorted(self.fingerprints.get(model, ()))
            if identity is None and not prints and not probed:
                continue
            # Asked and not told: said so, never an empty ``served``.
            text = identity or served.UNKNOWN
            out[model] = text + (f" (fingerprint {', '.join(prints)})" if prints else "")
        return out

    def _note_fingerprint(self, model: str, fingerprint: str | None) -> None:
        if fingerprint:
            self.fingerprints.setdefault(model, set()).add(fingerprint)

    def uses_litellm(self, model: str) -> bool:
        """Whether calls to ``model`` go through litellm (else the aiohttp fast path)."""
        return self.transports.of(model) is self.transports.litellm

    def warm(self, models: list[str], filled: bool) -> None:
        """Start litellm's import now (in a thread) when any of ``models`` will need it
        (a replay never calls, so never imports it), and the fast path's.

        Over a cache a previous run filled, the fast path loads at the first miss instead: a
        re-run the cache answers whole then never imports aiohttp (with the price table, 0.15
        s of such a run's CPU). litellm is still started at once: its import takes seconds,
        which the first calls would wait for. ``filled``: whether the cache was filled
        before this run began (an xdist worker is told its controller's answer, since the
        controller creates the database first)."""
        if self.cache.mode is CacheMode.REPLAY:
            return
        if any(self.uses_litellm(m) for m in models):
            self.transports.litellm.warm(self.settings.concurrency)
        if not all(self.uses_litellm(m) for m in models):
            if self.cache.mode is CacheMode.READ_WRITE and filled:
                self._fast_path_cold = True
            else:
                _start_fast_path_warm_up()

    async def aclose(self) -> None:
        """Close the fast path's connection pool (and the limits server's link)."""
        await self.transports.aclose()
        if self.pacing is not None:
            await self.pacing.aclose()

    async def closing(self, work: Awaitable[T]) -> T:
        """Await ``work``, then close the pool (for one-loop commands: play, meld)."""
        try:
            return await work
        finally:
            await self.aclose()

    async def complete(self, *, role: str, model: str, messages: list[dict[str, Any]],
                       case_id: str, sample: int, prompt_version: str,
                       extra: dict[str, Any] | None = None,
                       readable: Callable[[str], bool] | None = None) -> Reply:
        """The model's reply to ``messages``, as role ``role`` in case ``case_id``.

        ``extra`` parameters (e.g. ``response_format``) are sent and keyed with the sampling
        ones. A reply that ``readable`` rejects is returned but never cached, and a cached
        one it rejects is asked again: an unreadable reply must not become a stored answer.
        """
        budget = encounter_limits.current()
        if budget is not None:
            budget.check()
        reply = await self._complete(role=role, model=model, messages=messages,
                                     case_id=case_id, sample=sample,
                                     prompt_version=prompt_version, extra=extra,
                                     readable=readable)
        _charge_budget(reply.usage, budget)
        return reply

    async def _complete(self, *, role: str, model: str, messages: list[dict[str, Any]],
                        case_id: str, sample: int, prompt_version: str,
                        extra: dict[str, Any] | None,
                        readable: Callable[[str], bool] | None) -> Reply:
        params = {**self.settings.sampling, **(extra or {})}
        parts = key_parts(model=model, messages=messages, params=params,
                          role=role, case_id=case_id, sample=sample,
                          prompt_version=prompt_version, served=await self.served_model(model))
        key = cache_key(parts)
        hit = self.cache.reply(key)
        stats = self.stats
        if hit is not None and readable is not None and not readable(hit.text):
            hit = None
        if hit is not None:
            stats.calls += 1
            stats.cache_hits += 1
            stats.prompt_tokens += hit.prompt_tokens
            stats.completion_tokens += hit.completion_tokens
            self._note_fingerprint(model, hit.fingerprint)
            # A hit costs nothing now; what it would have cost is kept apart.
            return Reply(hit.text, Usage(calls=1, cache_hits=1,
                                         prompt_tokens=hit.prompt_tokens,
                                         completion_tokens=hit.completion_tokens,
                                         saved_usd=hit.cost_usd))
        if self.cache.mode is CacheMode.REPLAY:
            raise ReplayMissError(parts)
        if self._fast_path_cold:
            self._fast_path_cold = False
            _start_fast_path_warm_up()
        started = time.perf_counter()
        tries = 0
        discarded = Usage()

        async def attempt() -> Completion:
            nonlocal tries, discarded
            tries += 1
            stats.retries += tries > 1
            try:
                return await self._send(model, messages, params)
            except TransientError as exc:
                stats.rate_limited += exc.status == 429
                if exc.billed is not None:
                    discarded += self._discarded(*exc.billed)
                raise

        stats.calls += 1
        try:
            done, _attempts = await call_with_retries(attempt, self.settings.policy)
        except BaseException:
            _charge_budget(discarded)  # the encounter spent it, though it got no reply
            raise
        stats.paid_calls += 1
        stats.spent_usd += done.cost_usd
        stats.prompt_tokens += done.prompt_tokens
        stats.completion_tokens += done.completion_tokens
        self._note_fingerprint(model, done.fingerprint)
        # A key the model repeats is masked before anything sees it: the conversation goes on
        # with the text the cache keeps, so a replay sends (and keys) the same messages.
        text = redact(done.text)
        if readable is None or readable(text):
            self.cache.put(key, ReplyEntry(text, done.prompt_tokens, done.completion_tokens,
                                           done.cost_usd, done.fingerprint).stored())
        # Replies billed and discarded on the way (a 200 with no content) count with it.
        return Reply(text, discarded + Usage(calls=1, prompt_tokens=done.prompt_tokens,
                                             completion_tokens=done.completion_tokens,
                                             cost_usd=done.cost_usd,
                                             latency_s=time.perf_counter() - started))

    def _discarded(self, prompt: int, completion: int, cost: float) -> Usage:
        """Count a reply the provider billed that the caller discards: in the run's
        counters (the cost limit counts real spend) and in the reply's usage."""
        self.stats.paid_calls += 1
        self.stats.discarded_replies += 1
        self.stats.spent_usd += cost
        self.stats.prompt_tokens += prompt
        self.stats.completion_tokens += completion
        return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost)

    async def _send(self, model: str, messages: list[dict[str, Any]],
                    params: dict[str, Any]) -> Completion:
        """One attempt: admitted by the model's gate, counted as a call in flight."""
        gate = self.gates[model]
        reserved = (estimate_tokens(messages, self.settings.max_tokens)
                    if gate.budget.tpm else 0)
        started = await gate.acquire(reserved)
        try:
            await self.slots.acquire(CALL_PRIORITY.get())
            try:
                # Calls that waited for a call slot would leave together as slots free up.
                await gate.resume(started)
            except BaseException:
                self.slots.release()
                raise
            self.http_attempts += 1
            self.stats.in_flight += 1
            sent = time.perf_counter()
            try:
                done = await self._transport(model, messages, params)
            finally:
                self.stats.in_flight -= 1
                self.slots.release()
                self.busy_s += time.perf_counter() - sent
        except TransientError as exc:
            wait = exc.retry_after
            # The model's shared pause honours Retry-After no further than a single retry does.
            policy = self.settings.policy
            wait = policy.backoff if wait is None else min(wait, policy.retry_after_cap)
            gate.release(started, reserved=reserved, rate_limited=exc.status == 429,
                         timed_out=exc.status == 408, retry_after=wait)
            raise
        except BaseException:
            gate.release(started, reserved=reserved)
            raise
        gate.release(started, reserved=reserved,
                     used=done.prompt_tokens + done.completion_tokens)
        return done

    async def _transport(self, model: str, messages: list[dict[str, Any]],
                         params: dict[str, Any]) -> Completion:
        s = self.settings
        call = self.transports.of(model).acomplete(model, messages, api_base=s.api_base,
                                                   timeout=s.timeout, params=params,
                                                   max_bytes=s.max_reply_bytes)
        # A wall-clock deadline whatever the transport does: a transport's own timeout may
        # bound each socket read only, and a server trickling a valid body byte by byte would
        # hold the call for as long as it likes. Past it the call is a retriable timeout.
        try:
            return await asyncio.wait_for(call, s.timeout)
        except asyncio.TimeoutError:
            raise timed_out(model, s.timeout) from None


def _start_fast_path_warm_up() -> None:
    # The price table and aiohttp: loaded on the loop they would stall the first replies.
    openai_http.warm_up()


def _charge_budget(usage: Usage, budget: encounter_limits.EncounterBudget | None = None) -> None:
    """Charge ``usage`` to the running encounter's budget, if it has one. A cached reply is
    charged what it cost when made, so a replay ends where the recorded run ended."""
    budget = budget or encounter_limits.current()
    if budget is not None:
        budget.charge(usage.prompt_tokens + usage.completion_tokens,
                      usage.cost_usd + usage.saved_usd)
