"""Run-level events: what befalls a process of the run outside any item (the limits server
lost), told once, at the run's end, by the process that owns the run.

A ``warnings.warn`` made while no item's phase runs reaches no warnings summary: pytest
records a process's warnings only inside an item's phases (and collection, and the session's
end), and an xdist worker's stray ones go to its stderr. The encounters run on their own
thread, between items too (a worker waits for more items while the encounters it queued
play), so whether such a warning was seen depended on timing. Each process keeps its events
here instead; a worker hands them to the controller as JSON (xdist's ``workeroutput``, sent
after its last item), and the run's owner turns each into one warning of pytest's warnings
summary and an entry of summary.json's ``events``.
"""

from __future__ import annotations

import json
import sys
import threading
import warnings
from typing import Any

#: The key of a worker's events in xdist's ``workeroutput``.
WORKER_KEY = "agentclinic_events"


class RunEvents:
    """One process's run-level events (``process``: ``main``, or the xdist worker's id);
    the controller's also holds its workers'."""

    def __init__(self, process: str) -> None:
        self.process = process
        self.events: list[dict[str, Any]] = []
        # Told from the encounters' thread, read by the main thread at the end.
        self._lock = threading.Lock()

    def warn(self, warning: Warning) -> None:
        """Keep ``warning`` (any thread) for the run's end, in place of ``warnings.warn``."""
        category = type(warning)
        self.add({"process": self.process,
                  "category": f"{category.__module__}:{category.__qualname__}",
                  "message": str(warning)})

    def add(self, event: dict[str, Any]) -> None:
        """Keep one event (its ``process``, ``category`` and ``message``), counting repeats."""
        with self._lock:
            for kept in self.events:
                if all(kept.get(k) == event.get(k) for k in ("process", "category", "message")):
                    kept["count"] = kept.get("count", 1) + event.get("count", 1)
                    return
            self.events.append({**event, "count": event.get("count", 1)})

    def to_json(self) -> str:
        """This process's events, for its controller."""
        with self._lock:
            return json.dumps(self.events)

    def add_json(self, text: object) -> None:
        """A worker's events (:meth:`to_json`); anything else is ignored."""
        try:
            events = json.loads(text) if isinstance(text, str) else []
        except ValueError:
            return
        for event in events if isinstance(events, list) else []:
            if isinstance(event, dict) and isinstance(event.get("message"), str):
                self.add(event)

    def emit(self, summary_extra: dict[str, Any]) -> None:
        """On the run's owner, at its end: each event as one warning (pytest's warnings
        summary; printed when warnings are errors) and in summary.json's ``events``."""
        with self._lock:
            events = [dict(e) for e in self.events]
        if not events:
            return
        summary_extra["events"] = events
        for event in events:
            warning = _category(str(event.get("category", "")))(_text(event))
            try:
                warnings.warn(warning, stacklevel=2)
            except Warning:  # a run with -W error: say it, never fail the run's end for it
                print(str(warning), file=sys.stderr)


def _text(event: dict[str, Any]) -> str:
    """The event's message, naming the xdist worker it befell and how often."""
    where = [] if event.get("process") == "main" else [f"xdist worker {event.get('process')}"]
    count = int(event.get("count", 1))
    where += [f"{count} times"] if count > 1 else []
    return f"{event['message']} ({', '.join(where)})" if where else str(event["message"])


def _category(name: str) -> type[Warning]:
    """The warning class ``module:qualname`` names, among the modules this process has
    imported (a UserWarning when it is not one)."""
    module, _, qualname = name.partition(":")
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) and issubclass(found, Warning) else UserWarning
