"""Per-encounter budgets: tokens and cost one encounter may use before it is stopped.

``--agent-max-tokens-per-encounter`` and ``--agent-max-cost-per-encounter`` stop one
runaway dialogue (a doctor that never decides, a patient that writes essays) without
stopping the run. The budget lives in a context variable set by whoever plays the encounter,
so every call the encounter's agents make (on its task or the tasks it starts) is charged,
cached replies included: a replay must end where the recorded run ended.

A call is refused only once the encounter has already used more than its budget, so the
call that crossed the limit is kept in the transcript with its usage and cost; the next one
raises :class:`EncounterLimitReached`, which the protocols record as the outcome ``limit``:
neither a misdiagnosis nor an infrastructure error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from ..core.errors import AgentClinicError


class EncounterLimitReached(AgentClinicError):
    """The encounter used more than its budget (not an :class:`LLMError`: nothing failed)."""


@dataclass
class EncounterBudget:
    """What one encounter may use, and what it has used so far."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0

    def check(self) -> None:
        """Raise when the encounter has used more than its budget."""
        if self.max_tokens is not None and self.tokens > self.max_tokens:
            raise EncounterLimitReached(
                f"limit: the encounter used {self.tokens:,} tokens, more than "
                f"--agent-max-tokens-per-encounter {self.max_tokens:,}")
        if self.max_cost_usd is not None and self.cost_usd > self.max_cost_usd:
            raise EncounterLimitReached(
                f"limit: the encounter cost ${self.cost_usd:.4f}, more than "
                f"--agent-max-cost-per-encounter ${self.max_cost_usd:g}")

    def charge(self, tokens: int, cost_usd: float) -> None:
        """Count one reply's usage."""
        self.tokens += tokens
        self.cost_usd += cost_usd


_current: ContextVar[EncounterBudget | None] = ContextVar("agentclinic_encounter_budget",
                                                          default=None)


def current() -> EncounterBudget | None:
    """The budget of the encounter running in this context, if it has one."""
    return _current.get()


@contextlib.contextmanager
def encounter_budget(max_tokens: int | None, max_cost_usd: float | None
                     ) -> Iterator[EncounterBudget | None]:
    """Give the encounter played inside this block its budget (none when both are None)."""
    if max_tokens is None and max_cost_usd is None:
        yield None
        return
    budget = EncounterBudget(max_tokens, max_cost_usd)
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)
