"""What playing one item came to: the value the executor returns to the item."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.records import ResultRecord
from ..core.transcript import Transcript, Verdict

#: How an item's failure names a fatal model error (the executor writes it, the session's
#: owner shows it once): here, in a module collection imports, not the executor's.
FATAL_PREFIX = "fatal model error"


@dataclass(frozen=True)
class Outcome:
    """One item's encounter as played and recorded, returned by
    :meth:`.executor.EncounterExecutor.play`; the item reports from this alone."""

    #: The encounter, secrets redacted; None when it was not played.
    transcript: Transcript | None = None
    #: Where the transcript was written; None when it was not.
    transcript_path: str | None = None
    #: The result record appended to the run's results; None when not played or not written.
    record: ResultRecord | None = None
    #: The record as redacted JSON text, for the item's JUnit property.
    record_json: str | None = None
    #: Why the harness ended the item (a fatal model error, a write that failed): an *error*.
    failure: str | None = None
    #: Why the item was not played (e.g. the cost limit): a skip, not a verdict.
    unplayed: str | None = None

    @property
    def verdict(self) -> Verdict | None:
        """The moderator's decision, when the encounter reached one."""
        return self.transcript.verdict if self.transcript is not None else None

    @property
    def error(self) -> str | None:
        """Why the item is an *error*: the harness's reason, else the encounter's own."""
        if self.failure is not None:
            return self.failure
        t = self.transcript
        return str(t.error) if t is not None and t.outcome == "error" else None
