"""Runs encounters concurrently on an asyncio loop in a background thread.

pytest runs items one after another; the runner lets a process keep up to ``concurrency``
encounters in flight while items wait for their own result in order. :func:`settled` is how
every protocol's encounter ends when a model call fails (``api.settled``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import gc
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.errors import AgentClinicError
from ..core.threads import start_thread
from ..core.transcript import Transcript
from ..llm.encounter_limits import EncounterLimitReached
from ..llm.errors import FatalLLMError, LLMError
from ..llm.limiter import CALL_PRIORITY

T = TypeVar("T")

#: Decides whether one more encounter may start: None, or why not (e.g. the cost limit).
Admission = Callable[[], "str | None"]


class NotPlayed(AgentClinicError):
    """The encounter was never started (the run stopped starting new ones)."""


@contextlib.contextmanager
def settled(t: Transcript) -> Iterator[None]:
    """Time an encounter; a model failure ends it as outcome *error* (never a wrong
    diagnosis), and a :class:`FatalLLMError` is recorded, then re-raised to stop the session."""
    started = time.perf_counter()
    try:
        yield
    except FatalLLMError as exc:
        t.outcome, t.error = "error", str(exc)
        raise
    except LLMError as exc:
        t.outcome, t.error = "error", f"{type(exc).__name__}: {exc}"
    except EncounterLimitReached as exc:
        # A budget, not a failure: the partial transcript stays, and no verdict is given.
        t.outcome, t.error = "limit", str(exc)
    finally:
        t.duration_s = time.perf_counter() - started


@dataclass
class Progress:
    """How far an encounter got: the transcript it is writing and the stage it is in.

    An encounter cut off by ``--agent-encounter-timeout`` once lost everything it had (0
    turns, no usage, though its calls were answered and billed): the session keeps this
    partial transcript instead, with the stage that did not finish.
    """

    transcript: Transcript | None = None
    stage: str = "start"


_PROGRESS: contextvars.ContextVar[Progress | None] = contextvars.ContextVar(
    "agentclinic_progress", default=None)


def watch() -> Progress:
    """A fresh :class:`Progress` for the encounters started from this context from now on
    (a task copies the context it is created in)."""
    progress = Progress()
    _PROGRESS.set(progress)
    return progress


def track(transcript: Transcript) -> None:
    """A protocol names the transcript it writes (nothing happens when no one watches)."""
    progress = _PROGRESS.get()
    if progress is not None:
        progress.transcript = transcript


def stage(name: str) -> None:
    """A protocol names the stage it enters (``turn 3: doctor``, ``grading``...)."""
    progress = _PROGRESS.get()
    if progress is not None:
        progress.stage = name


class EncounterRunner:
    """A FIFO of coroutine factories, at most ``concurrency`` running at once."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._futures: dict[str, concurrent.futures.Future[object]] = {}
        self._lock = threading.Lock()
        #: Asked before each encounter starts; the first refusal stops all later starts.
        self.admit: Admission = lambda: None
        self.refused: str | None = None
        self.in_flight = 0
        self.done = 0
        self.unplayed = 0
        self._order = itertools.count()
        #: Keys whose result was taken and released: never scheduled again.
        self._forgotten: set[str] = set()

    @property
    def thread(self) -> threading.Thread | None:
        """The thread running the encounters' loop (None before the first one)."""
        return self._thread

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            # The first encounter starts: what exists now (modules, configuration, the
            # collected items) lives to the end of the run. Out of the cyclic collector's
            # reach, its passes during the encounters stop re-walking it (2-5% of a 640-call
            # run's CPU, the same peak RSS). Runs that play no encounter are left alone;
            # :meth:`close` hands it back: a process running several sessions (pytester)
            # must still collect their garbage.
            gc.freeze()
            loop = asyncio.new_event_loop()
            self._thread = start_thread(loop.run_forever, name="agentclinic-runner")
            self._loop = loop
        return self._loop

    async def _limited(self, factory: Callable[[], Awaitable[T]], order: int) -> T:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)
        async with self._semaphore:
            CALL_PRIORITY.set(order)  # this task's context: its calls queue by item order
            self.refused = self.refused or self.admit()
            if self.refused is not None:
                self.unplayed += 1
                raise NotPlayed(self.refused)
            self.in_flight += 1
            try:
                return await factory()
            finally:
                self.in_flight -= 1
                self.done += 1

    def submit(self, key: str, factory: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Schedule ``factory()`` once per ``key``; later calls return the same future."""
        with self._lock:
            if key not in self._futures:
                loop = self._ensure_loop()
                future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(
                    self._limited(factory, next(self._order)), loop)
                self._futures[key] = future  # type: ignore[assignment]
            return self._futures[key]  # type: ignore[return-value]

    def submit_many(self, jobs: Sequence[tuple[str, Callable[[], Awaitable[object]]]]) -> None:
        """Schedule every job not scheduled yet, with one wake-up of the loop.

        One thread-safe call per job (8,000 of them) costs ~0.5 s of the main thread, and
        more while the loop's thread already plays the first encounters; here the loop
        starts them all in one callback.
        """
        with self._lock:
            new = [(key, factory) for key, factory in jobs if key not in self._futures]
            if not new:
                return
            loop = self._ensure_loop()
            started: list[tuple[concurrent.futures.Future[object], Callable[[], Any], int]] = []
            for key, factory in new:
                future: concurrent.futures.Future[object] = concurrent.futures.Future()
                self._futures[key] = future
                started.append((future, factory, next(self._order)))
        loop.call_soon_threadsafe(self._start_all, loop, started)

    def _start_all(self, loop: asyncio.AbstractEventLoop,
                   jobs: list[tuple[concurrent.futures.Future[object], Callable[[], Any], int]],
                   ) -> None:
        for future, factory, order in jobs:
            if future.cancelled():
                continue  # cancelled (a fatal error) before the loop got to it
            task = loop.create_task(self._limited(factory, order))
            task.add_done_callback(functools.partial(_settle, future))
            future.add_done_callback(functools.partial(_cancel_task, loop, task))

    def submitted(self, key: str) -> bool:
        """Whether ``key`` was scheduled already."""
        return key in self._futures or key in self._forgotten

    def forget(self, key: str) -> None:
        """Drop ``key``'s finished future, and the result it holds."""
        with self._lock:
            if self._futures.pop(key, None) is not None:
                self._forgotten.add(key)

    def cancel_pending(self) -> None:
        """Cancel every encounter that has not finished (e.g. after a fatal error)."""
        with self._lock:
            for future in self._futures.values():
                future.cancel()

    def run(self, factory: Callable[[], Awaitable[object]], timeout: float = 10.0) -> None:
        """Run ``factory()`` on the loop and wait for it (nothing when the loop never started),
        e.g. to close connection pools the loop's tasks opened."""
        if self._loop is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_await(factory), self._loop).result(timeout)

    def close(self) -> None:
        """Cancel what is left, wait for every task on the loop to end, stop the loop."""
        self.cancel_pending()
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = None
        gc.unfreeze()
        # litellm starts background tasks of its own (a logging worker) on our loop;
        # ending them here keeps "Task was destroyed but it is pending" out of the output.
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(_end_tasks(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        if not thread.is_alive():  # a loop blocked by an agent cannot be closed: leave it
            loop.close()


async def _await(factory: Callable[[], Awaitable[object]]) -> None:
    await factory()


def _settle(future: concurrent.futures.Future[object], task: asyncio.Task[object]) -> None:
    """Hand a finished task's outcome to the future the item waits on."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile
        if task.cancelled():
            future.cancel()
        elif task.exception() is not None:
            future.set_exception(task.exception())
        else:
            future.set_result(task.result())


def _cancel_task(loop: asyncio.AbstractEventLoop, task: asyncio.Task[object],
                 future: concurrent.futures.Future[object]) -> None:
    """Cancelling the item's future (``cancel_pending``) cancels its task on the loop."""
    if future.cancelled():
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to stop
            loop.call_soon_threadsafe(task.cancel)


async def _end_tasks() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()
