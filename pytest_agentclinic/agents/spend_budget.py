"""``--agent-test-budget``: the measurement agent refuses tests beyond the encounter's budget.

The wrapper prices each request with the project's price table before asking the wrapped
agent; a test that would take the spend over the budget is refused (the wrapped agent is not
asked, so no model call is spent on it) and the doctor is told what is left. Free tests
(the examination) are never refused.
"""

from __future__ import annotations

from ..core.roles import Agent, Reply, TurnView
from ..metrics.prices import REFUSED, PriceTable, default_prices
from .offline_measurement import requested_test


class BudgetedMeasurement:
    """A measurement agent with a test budget in USD; one instance per encounter."""

    def __init__(self, inner: Agent, budget_usd: float, prices: PriceTable | None = None) -> None:
        self.inner = inner
        self.model = inner.model
        self.prompt_version = inner.prompt_version
        self.budget = budget_usd
        self.prices = prices or default_prices()
        self.spent = 0.0

    async def respond(self, view: TurnView) -> Reply:
        """Refuse a test over budget, else ask the wrapped agent and count the spend."""
        usd, _ = self.prices.price(requested_test(view.incoming))
        if self.spent + usd > self.budget + 1e-9:
            left = max(self.budget - self.spent, 0.0)
            return Reply(f"{REFUSED}: this test costs ${usd:.0f} and the test budget has "
                         f"${left:.0f} of ${self.budget:.0f} left; decide with what you have.")
        self.spent += usd
        return await self.inner.respond(view)
