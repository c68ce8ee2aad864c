"""Plays an item's encounter and returns what it came to (:class:`~.outcome.Outcome`).

The item pytest runs asks :meth:`EncounterExecutor.play`; the executor submits it and the
items this process runs next to the runner (so they play concurrently; how one encounter
plays, within its limits, is :mod:`.encounter`'s), waits for the item's encounter, redacts
it, has the :class:`~.recorder.Recorder` write it, and returns the outcome. Nothing is
written into the item: it reports from the returned value.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import cast

import pytest

from ..core.case import Case
from ..core.redact import redact
from ..core.redact_model import redact_model
from ..core.transcript import Transcript
from ..llm.caller import ModelCaller
from ..llm.errors import FatalLLMError
from ..protocols.base import ItemSpec, PlayContext, Protocol
from ..protocols.runner import EncounterRunner, NotPlayed
from .blocked import blocked_in
from .encounter import Encounters
from .item import EncounterItem
from .outcome import FATAL_PREFIX, Outcome
from .recorder import Recorder, WriteFailed
from .scheduling import LEAD_WINDOWS, Ahead
from .scheduling import window as window_of
from .settings import Settings

#: Returns the items this process will run next (xdist workers only know their queue).
Lookahead = Callable[[pytest.Session, pytest.Item], Sequence[pytest.Item]]
#: Seconds between :attr:`EncounterExecutor.on_wait` calls.
WAIT_TICK = 0.25
#: The longest a waiting item sleeps at once when no one is called back while it waits.
QUIET_WAIT = 60.0


class EncounterExecutor:
    """Runs the encounters of one process and returns each item's :class:`Outcome`."""

    def __init__(self, config: pytest.Config, settings: Settings, protocol: Protocol,
                 caller: ModelCaller, recorder: Recorder) -> None:
        self.config = config
        self.settings = settings
        self.protocol = protocol
        self.caller = caller
        self.recorder = recorder
        # --agent-concurrency bounds model calls in flight (in the caller, earliest items
        # first); the runner keeps enough items started to fill those slots.
        started = window_of(settings, protocol.items_per_chain(settings.options))
        self.runner = EncounterRunner(started)
        self.lookahead: Lookahead = Ahead(LEAD_WINDOWS * started)
        self.encounters = Encounters(settings, protocol, PlayContext(
            caller, self._make_agent, settings.options, settings.grading_policy), self.runner)
        #: Why nothing more can be written (a full disk): no more calls are made.
        self.disk_full: str | None = None
        #: Called every :data:`WAIT_TICK` seconds while an item waits for its encounter
        #: (the status line's); None: the item sleeps until its encounter ends.
        self.on_wait: Callable[[], None] | None = None

    def play(self, item: pytest.Item, spec: ItemSpec) -> Outcome:
        """Wait for the encounter of ``item`` (which plays ``spec``), write its transcript
        and record, and return them.

        A fatal model error or a full disk also stops the session (``shouldstop``); the
        outcome's ``failure`` says why."""
        try:
            played = self._await(item, spec)
        except NotPlayed as exc:
            return Outcome(unplayed=str(exc))
        # Redacted once here, so the file, the record, the JUnit property and the terminal
        # message all carry the same clean text.
        transcript = redact_model(played)
        try:
            outcome = self.recorder.save(item.nodeid, item.path, spec.case, transcript)
        except WriteFailed as exc:
            failure = self._write_failed(exc)
            if self.disk_full is not None:
                item.session.shouldstop = failure
            return Outcome(transcript=transcript, failure=failure)
        fatal = self.encounters.fatal
        if fatal is None:
            return outcome
        # The first item to meet a fatal error reports it once and stops the session;
        # nothing else will run, so the runner's thread is ended now.
        self.runner.close()
        item.session.shouldstop = f"agentclinic: fatal model error: {fatal}"
        return replace(outcome, failure=f"{FATAL_PREFIX}, stopping the session: {fatal}")

    def start(self, items: Sequence[pytest.Item]) -> None:
        """Start the encounters of ``items`` now, before pytest runs them (an xdist worker's
        first items, known from its share before its controller sends them); each item
        takes its encounter's result when it runs, as from the lookahead."""
        self.runner.submit_many([(item.nodeid, self.encounters.of(_spec_reader(item)))
                                 for item in items if isinstance(item, EncounterItem)])

    def close(self) -> None:
        """Close the model clients and end the runner's thread (the session is over)."""
        self.runner.run(self.caller.aclose)
        self.runner.close()

    # ------------------------------------------------------------ scheduling

    def _schedule(self, item: pytest.Item) -> concurrent.futures.Future[Transcript]:
        """Submit ``item`` and the items this process runs next, so they run concurrently.
        Each encounter reads its item's spec when it starts (the item holds it once built)."""
        self.runner.submit_many([
            (upcoming.nodeid, self.encounters.of(_spec_reader(upcoming)))
            for upcoming in self.lookahead(item.session, item)
            if isinstance(upcoming, EncounterItem) and not self.runner.submitted(upcoming.nodeid)])
        return self.runner.submit(item.nodeid, self.encounters.of(_spec_reader(item)))

    def _make_agent(self, role: str, model: str, case: Case, bias: str) -> object | None:
        return self.config.hook.pytest_agentclinic_make_agent(  # type: ignore[no-any-return]
            role=role, model=model, case=case, bias=bias, config=self.config)

    # --------------------------------------------------------------- waiting

    def _await(self, item: pytest.Item, spec: ItemSpec) -> Transcript:
        """The item's transcript: played, or an *error* one. Raises ``NotPlayed``."""
        if self.disk_full is not None:
            return self._failed_transcript(spec, f"not run: {self.disk_full}")
        fatal = self.encounters.fatal
        if fatal is not None:
            return self._failed_transcript(spec, f"not run after a fatal error: {fatal}")
        try:
            return self._wait(spec, self._schedule(item))
        except (FatalLLMError, concurrent.futures.CancelledError):
            # The encounter recorded a fatal error; otherwise the session is ending.
            return self._failed_transcript(spec, self.encounters.fatal
                                           or "cancelled: the session ended")
        except NotPlayed:
            raise
        except Exception as exc:  # a bug in a custom agent must not lose the other results
            return self._failed_transcript(spec, redact(f"{type(exc).__name__}: {exc}"))
        finally:
            # The transcript is saved next; the runner need not keep it for the session.
            self.runner.forget(item.nodeid)

    def _wait(self, spec: ItemSpec,
              future: concurrent.futures.Future[Transcript]) -> Transcript:
        limit = self.settings.encounter_timeout
        # The encounter's own deadline fires on the runner's loop; this one guards against
        # an agent that blocks the loop itself (synchronous code that never returns).
        deadline = time.monotonic() + limit + min(60.0, limit)
        while True:
            on_wait = self.on_wait
            # With no one to call back (an xdist worker, a run without a status line) the
            # thread sleeps until the encounter ends or the deadline: woken every
            # WAIT_TICK for nothing, it took the interpreter's lock from the encounters'
            # thread a few times an item.
            tick = (WAIT_TICK if on_wait is not None else
                    min(max(deadline - time.monotonic(), WAIT_TICK), QUIET_WAIT))
            # Not concurrent.futures.wait(): it never sees a future cancelled before it
            # ran (the runner's futures are plain ones, cancelled on a fatal error).
            try:
                return future.result(timeout=tick)
            except concurrent.futures.TimeoutError:
                if future.done():
                    raise  # the encounter's own timeout error
                if time.monotonic() > deadline:
                    # Whose code holds the loop is read from its stack, not guessed.
                    self.encounters.fatal = (f"an encounter blocked the event loop past "
                                             f"--agent-encounter-timeout ({limit:g} s), "
                                             f"{blocked_in(self.runner.thread)}")
                    return self._failed_transcript(spec, self.encounters.fatal)
                if on_wait is not None:
                    on_wait()  # the status line, written from this (the main) thread

    def _failed_transcript(self, spec: ItemSpec, error: str) -> Transcript:
        # The protocol's own header: an item that could not be played still carries its
        # conditions (a CRAFT-MD error keeps its experiment, so tables and pairing see it).
        header = self.protocol.header(spec)
        return Transcript(**{**header.header(), "outcome": "error", "error": error})

    def _write_failed(self, exc: WriteFailed) -> str:
        """The failure of an item whose transcript or record could not be written. A full
        disk stops the session (the caller sets ``shouldstop`` to this text): every later
        write would fail too, and the replies paid for would be lost."""
        run_dir = self.recorder.run_dir
        if not exc.disk_full:
            return f"cannot write to the run directory {run_dir}: {exc.reason}"
        self.disk_full = (f"no space left to write the run ({exc.reason}): stopped calling "
                          f"the provider; the records written so far are kept in {run_dir}")
        self.runner.refused = self.disk_full  # start no other encounter
        self.runner.close()
        return f"agentclinic: {self.disk_full}"


def _spec_reader(item: pytest.Item) -> Callable[[], ItemSpec]:
    # An item's spec is read when its encounter starts, on the runner's thread.
    return lambda: cast(EncounterItem, item).spec
