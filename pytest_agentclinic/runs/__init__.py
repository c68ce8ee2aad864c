"""The run store: a run directory's files, read and written in one place, below the reports.

* :mod:`.directory` — where the files are, the manifest (``run.json``), ``summary.json`` and
  ``review.json`` read back, a gate's baseline;
* :mod:`.results` — ``results.jsonl``, read, written whole or streamed as items finish;
* :mod:`.merging` — the run owner's records, parsed as items finish, merged at the end;
* :mod:`.transcripts` — ``transcripts/``;
* :mod:`.summary` — the typed, versioned :class:`~.summary.RunSummary` and its one builder;
* :mod:`.lock` — one session per run directory;
* :mod:`.safe_write` — files replaced whole or not at all;
* :mod:`.errors` — :class:`~.errors.RunDirectoryError` and its kinds.

It imports only the core types: the reports (tables, HTML, gate) sit above it and call it.
"""
