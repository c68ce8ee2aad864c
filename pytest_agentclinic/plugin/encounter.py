"""One encounter, played on the runner's loop within its limits.

The executor hands the runner the coroutine functions of :meth:`Encounters.of`; each plays
its item's encounter under the encounter's token and cost budget
(``--agent-encounter-tokens``, ``--agent-encounter-cost``) and its deadline
(``--agent-encounter-timeout``: past it, an *error* transcript naming the stage that did not
finish), and a fatal model error stops the other encounters in flight. The executor reads
:attr:`Encounters.fatal` when the item's wait is over; nothing here calls back into it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.redact import redact
from ..core.transcript import Transcript
from ..llm.encounter_limits import encounter_budget
from ..llm.errors import FatalLLMError
from ..protocols.base import ItemSpec, PlayContext, Protocol
from ..protocols.runner import EncounterRunner, Progress, watch
from .settings import Settings


class Encounters:
    """The encounters of one process: how each is played, and the fatal error that stopped
    them (once one was met)."""

    def __init__(self, settings: Settings, protocol: Protocol, context: PlayContext,
                 runner: EncounterRunner) -> None:
        self.settings = settings
        self.protocol = protocol
        self.context = context
        self.runner = runner
        #: The fatal model error that stopped the run (redacted), once one was met.
        self.fatal: str | None = None

    def of(self, spec_of: Callable[[], ItemSpec]) -> Callable[[], Awaitable[Transcript]]:
        """The encounter of the spec ``spec_of`` returns when the encounter starts (an
        upcoming item's spec is read then, on the runner's thread)."""
        async def play() -> Transcript:
            # Not waiting for the grader's warm-up (warm_grader): the encounter's
            # model calls do not need it, and grading waits for it without blocking the loop
            # (grading.terms.concepts.terminology_loaded); on a machine with no index yet, the
            # first request would wait ~2 s for it.
            settings = self.settings
            played = spec_of()
            try:
                with encounter_budget(settings.encounter_tokens, settings.encounter_cost):
                    return await self._deadline(played, self.protocol.play(played,
                                                                           self.context))
            except FatalLLMError as exc:
                # Stop the other encounters in flight now: they would only fail the same way.
                self.fatal = self.fatal or redact(str(exc))
                self.runner.cancel_pending()
                raise

        return play

    async def _deadline(self, spec: ItemSpec,
                        encounter: Awaitable[Transcript]) -> Transcript:
        """The encounter, or an *error* transcript once ``--agent-encounter-timeout`` passes
        (e.g. a custom agent that never returns)."""
        limit = self.settings.encounter_timeout
        # The task wait_for would make, made here to read its error: a fatal error cancels
        # every encounter, this one's waiter too, and wait_for then leaves the error (the
        # session's fatal error, reported already) unread. asyncio logged it, traceback and
        # all, whenever the task was collected: once inside pytest's own traceback
        # formatting, which CPython 3.11 cannot re-enter (an internal error).
        progress = watch()  # the task below copies this context: the protocol reports to it
        task = asyncio.ensure_future(encounter)
        task.add_done_callback(_read_error)
        try:
            return await asyncio.wait_for(task, limit)
        except asyncio.TimeoutError:
            return self._timed_out(spec, progress, limit)

    def _timed_out(self, spec: ItemSpec, progress: Progress, limit: float) -> Transcript:
        """The encounter's transcript as far as it got (its answered calls, their usage and
        cost), an *error* naming the stage that did not finish."""
        error = (f"encounter timeout: not finished within {limit:g} s "
                 f"(--agent-encounter-timeout), in {progress.stage}")
        partial = progress.transcript
        if partial is None:  # a protocol that does not report its progress
            header = self.protocol.header(spec).header()
            return Transcript(**{**header, "outcome": "error", "error": error,
                                 "timed_out_in": progress.stage})
        return partial.model_copy(update={
            "outcome": "error", "error": error, "timed_out_in": progress.stage,
            "utterances": list(partial.utterances),
            "duration_s": time.time() - partial.started_at})


def _read_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
