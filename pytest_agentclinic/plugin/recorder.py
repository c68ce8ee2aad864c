"""Writes what an item's encounter came to: its transcript file and its result record.

Each process that plays items streams its own records to disk (an xdist worker too: its
controller, killed with -9, once kept none of them); the controller merges them at the end
(:mod:`.reports`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..core.case import Case
from ..core.errors import RunDirectoryError
from ..core.records import ResultRecord
from ..core.transcript import Transcript
from ..protocols.base import Protocol
from ..runs.results import RESULTS, ResultsStream, worker_results_name
from ..runs.safe_write import is_disk_full
from ..runs.transcripts import write_transcript
from .outcome import Outcome

#: ``model -> identity`` of the models a record names (see ``ModelCaller.served_identities``).
Served = Callable[[Iterable[str]], dict[str, str]]


class WriteFailed(RunDirectoryError):
    """A transcript or record could not be written to the run directory."""

    def __init__(self, reason: str, *, disk_full: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        #: A full disk: every later write would fail too.
        self.disk_full = disk_full


class Recorder:
    """The run directory's writer for one process's items."""

    def __init__(self, run_dir: Path, run_name: str, worker: str | None,
                 protocol: Protocol, served: Served) -> None:
        self.run_dir = run_dir
        self.run_name = run_name
        self.protocol = protocol
        self.served = served
        # The run store's writers, not the reports' module: a worker imports no report.
        self.results = ResultsStream(run_dir, worker_results_name(worker) if worker else RESULTS)

    def save(self, nodeid: str, case_file: Path, case: Case,
             transcript: Transcript) -> Outcome:
        """Write the item's transcript (already redacted) and append its result record; the
        outcome holding both. Raises :class:`WriteFailed`."""
        try:
            path = write_transcript(self.run_dir, case_file, nodeid, transcript,
                                           redacted=True)
            record = self._record(nodeid, case_file, case, transcript, path)
            # Dumped and redacted once: the line written is the JUnit property and the copy
            # a worker sends its controller.
            text = self.results.append(record)
        except OSError as exc:
            raise WriteFailed(exc.strerror or type(exc).__name__,
                              disk_full=is_disk_full(exc)) from None
        return Outcome(transcript=transcript, transcript_path=path, record=record,
                       record_json=text)

    def _record(self, nodeid: str, case_file: Path, case: Case, transcript: Transcript,
                transcript_path: str) -> ResultRecord:
        # What is graded and what is measured are the protocol's: the core assumes neither.
        record = ResultRecord.from_transcript(
            transcript, run=self.run_name, nodeid=nodeid,
            expected=self.protocol.expected(case), transcript_path=transcript_path,
            case_file=str(case_file), difficulty=case.difficulty,
            measures=self.protocol.measures(case, transcript))
        record.served = self.served(dict.fromkeys(record.models.values()))
        return record

    def close(self) -> None:
        """Flush and close this process's results file."""
        self.results.close()

