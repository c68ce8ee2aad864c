"""A run's ``transcripts/``: one redacted JSON file per encounter, named after its item.

The one reader and writer of transcript files; a transcript's version is checked, and an
older one migrated, when it is read (:data:`~..core.transcript.TRANSCRIPT_FORMAT`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
from pathlib import Path

from pydantic import ValidationError

from ..core.records import ResultRecord
from ..core.redact_model import redact_model
from ..core.transcript import TRANSCRIPT_FORMAT, Transcript
from ..core.versioned import UnknownVersion, load_json
from .safe_write import write_text_atomic

TRANSCRIPTS = "transcripts"
#: Longest readable part of a transcript's file name: most file systems allow 255 bytes per
#: name, and a case id or specialty may be longer ("File name too long" lost the record).
NAME_PART = 60


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


@functools.lru_cache(maxsize=256)
def _source(case_file: str) -> tuple[str, str]:
    """A case file's resolved path and its name's part of a transcript's name, once per
    file: resolving walks every part of the path with a system call, per item it was
    ~0.2 ms of CPU."""
    source = Path(case_file)
    return str(source.resolve()), _safe(source.stem)[:NAME_PART]


def write_transcript(run_dir: Path, case_file: str | Path, item_id: str, t: Transcript,
                     *, redacted: bool = False) -> str:
    """Save one encounter's transcript (secrets redacted); return its path.

    The name is readable (file stem and item name, each cut to :data:`NAME_PART`
    characters) and unique: a hash of the case file's resolved path and the full item id
    tells ``a/derm.yaml`` from ``b/derm.yaml`` and two long ids that share their first
    characters. The full id stays in the record.

    ``redacted``: ``t`` is redacted already (:func:`~..core.redact_model.redact_model`, as
    the run's executor does for every item), so it is not redacted again. Otherwise it is
    redacted as a model, string by string, not as its JSON text: a pattern run over the
    text can reach from one field into the next.
    """
    source = os.fspath(case_file)
    # A relative path is resolved against the working directory of the moment.
    resolved, stem = (_source if os.path.isabs(source) else _source.__wrapped__)(source)
    digest = hashlib.sha256(f"{resolved}\0{item_id}".encode()).hexdigest()[:10]
    item = _safe(item_id.rsplit("::", 1)[-1])[:NAME_PART]
    # A string, not a Path: pathlib interns every part it parses, each item's name too.
    folder = os.path.join(run_dir, TRANSCRIPTS)
    path = os.path.join(folder, f"{stem}__{item}-{digest}.json")
    text = (t if redacted else redact_model(t)).model_dump_json(indent=1)
    try:
        write_text_atomic(path, text)
    except FileNotFoundError:  # the run's first transcript: made then, not tried per item
        os.makedirs(folder, exist_ok=True)
        write_text_atomic(path, text)
    return path


def read_transcript(run_dir: Path, record: ResultRecord) -> tuple[Transcript | None, str | None]:
    """The record's transcript, or ``None`` and a note saying why there is none (a
    transcript of a format this version cannot read is one such note, naming the file)."""
    if not record.transcript:
        return None, "No transcript was saved for this encounter (e.g. an imported run)."
    candidate = _transcript_file(run_dir, record.transcript)
    if candidate is None:
        return None, f"Transcript file not found: {record.transcript}"
    try:
        with open(candidate, "rb") as fh:
            return load_json(TRANSCRIPT_FORMAT, Transcript, fh.read(), candidate), None
    except UnknownVersion as exc:
        return None, f"Transcript {exc}."
    except (OSError, ValueError, ValidationError) as exc:
        return None, f"Transcript {candidate} could not be read: {type(exc).__name__}."


def _transcript_file(run_dir: Path, ref: str) -> str | None:
    """Where the transcript ``ref`` of a run in ``run_dir`` is now, if anywhere."""
    # Paths are written as the run saw them; a moved or copied run directory still holds the
    # file under transcripts/, so look there too. Strings, not Paths: see write_transcript.
    candidates = ([ref] if os.path.isabs(ref)
                  else [os.path.join(os.getcwd(), ref), os.path.join(run_dir, ref)])
    candidates.append(os.path.join(run_dir, TRANSCRIPTS, os.path.basename(ref)))
    return next((c for c in candidates if os.path.isfile(c)), None)


def copy_transcript(run_dir: Path, record: ResultRecord, target_dir: Path) -> str | None:
    """Copy the record's transcript into run ``target_dir``; its new path, or None when the
    record has none or the file is gone (a merge of runs that moved)."""
    source = _transcript_file(run_dir, record.transcript) if record.transcript else None
    if source is None:
        return None
    target = target_dir / TRANSCRIPTS / os.path.basename(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return str(target)
