"""``--agent-max-cost USD``: no new encounter starts once the spent cost, plus the running
encounters at the running mean cost per encounter (at least their calls in flight at the
mean cost per call), plus one more encounter, would pass the limit.

Finished encounters are kept; unplayed items are skipped, not judged, and the summary says
the run stopped on cost. Under xdist each worker applies the limit to the whole run's
counters (:mod:`.counters`).
"""

from __future__ import annotations

from typing import Any

import pytest

from .counters import SharedCounters
from .item import UNPLAYED_PROPERTY


class CostLimit:
    """Admits encounters under the limit (the runner asks before each one starts) and tells
    of the items left unplayed."""

    def __init__(self, limit: float | None, counters: SharedCounters,
                 summary_extra: dict[str, Any]) -> None:
        self.limit = limit
        self.counters = counters
        #: Where the run's summary.json takes fields from other features.
        self.summary_extra = summary_extra
        self.unplayed_reports = 0
        #: Why the last unplayed item was not played.
        self.reason = ""

    def admit(self) -> str | None:
        """Why one more encounter may not start; None when it may (runs on the runner's
        loop)."""
        if self.limit is None:
            return None
        status = self.counters.status()
        projected = status.projected_usd()
        if projected <= self.limit:
            # Counted at once: the publishing timer alone let every worker start what fits
            # the limit by itself before the others' spending showed, when encounters take
            # less than its period.
            self.counters.publish(started=1)
            return None
        self.counters.publish()
        return (f"not played: --agent-max-cost ${self.limit:g} reached (spent "
                f"${status.llm.spent_usd:.4f}, ${projected:.4f} with the encounters in flight)")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count the items left unplayed, for the summary and the last line."""
        if not (report.when == "setup" and report.skipped):
            return
        reason = next((str(v) for n, v in report.user_properties if n == UNPLAYED_PROPERTY),
                      None)
        if reason is None:
            return
        self.unplayed_reports += 1
        self.reason = reason
        if self.limit is not None:
            self.summary_extra["stopped_on_cost"] = {
                "max_cost_usd": self.limit, "unplayed_items": self.unplayed_reports,
                "reason": reason}

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say when the run stopped on cost (or, with no limit, why items were not played:
        a full disk)."""
        if not self.unplayed_reports:
            return
        if self.limit is None:
            terminalreporter.write_line(
                f"agentclinic: {self.unplayed_reports} item(s) not played, not judged "
                f"({self.reason})")
            return
        terminalreporter.write_line(
            f"agentclinic: the run stopped on cost: {self.unplayed_reports} item(s) not "
            f"played, not judged (--agent-max-cost ${self.limit:g})")
