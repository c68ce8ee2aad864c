"""Running counters of one process's model calls, for the status line and the cost limit."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.summable import Summable


@dataclass
class CallStats(Summable):
    """Updated by the caller on the runner's event loop; read (racily, ints and floats only)
    by the status line's thread, which needs no more than a recent view."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    #: Attempts refused with HTTP 429.
    rate_limited: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Calls that reached a provider and their cost (cache hits cost nothing now).
    paid_calls: int = 0
    spent_usd: float = 0.0
    #: Replies billed but discarded (a 200 with no content, asked again): counted in
    #: ``paid_calls``, ``spent_usd`` and the tokens too.
    discarded_replies: int = 0
    #: HTTP requests awaiting their reply right now.
    in_flight: int = 0

    @property
    def mean_call_usd(self) -> float:
        """The running mean cost of a paid call (0 before the first)."""
        return self.spent_usd / self.paid_calls if self.paid_calls else 0.0
