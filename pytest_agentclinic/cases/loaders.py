"""Read case files of every supported shape into :class:`Case` models.

The format is recognised by content, not by file name. Upstream files vary in shape, so
the readers are tolerant of extra keys, missing optional keys and strings where dicts are
usual, but strict about what the protocol needs (objective, diagnosis, patient). A bad
record becomes a :class:`CaseError` naming file, line and field; the other records load.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.case import UNSPECIFIED, Case
from ..core.heap import FrozenParts, gc_paused
from . import formats
from .agentclinic_jsonl import FieldError, dataset_name, medqa_case, nejm_case
from .errors import CaseError as CaseError
from .stored import GivenFields, StoredCases

# The readers of the formats (yaml, the CRAFT-MD CSV) are imported by the load that needs
# them: an xdist worker reads its cases back from the parse cache and parses no file.

SIDECAR_SUFFIX = ".specialties.json"
CASE_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", ".csv")


@dataclass
class LoadedFile:
    """The cases of one file (each with the 1-based line it starts on) and its bad records."""

    path: Path
    format: str
    cases: list[tuple[int, Case]] = field(default_factory=list)
    errors: list[CaseError] = field(default_factory=list)
    #: 0-based position of each case's record in the file: the key of the specialty sidecar,
    #: while the file loads (empty once the sidecar is applied).
    positions: dict[str, int] = field(default_factory=dict)
    #: Why the whole file is not a case file (None when it is one): decided on a parse of the
    #: whole file, never on its first bytes.
    not_cases: str | None = None
    #: A specialty sidecar that could not be read (the cases load without it).
    sidecar_error: CaseError | None = None
    #: Whether ``not_cases`` means damaged input (unreadable, unparsable) rather than a
    #: well-formed file of another kind.
    damaged: bool = False
    #: The equal parts the file's cases share (their strings, their sets of given fields).
    shared: FrozenParts = field(default_factory=FrozenParts, repr=False, compare=False)
    #: Each case as the JSON text it is stored as (:mod:`.parse_cache`), in the order of
    #: ``cases``; empty when the file was read without that store. An item holds its case's
    #: text (~0.4 KB) rather than the model (~2.4 KB) until it plays.
    texts: list[str] = field(default_factory=list, repr=False, compare=False)
    #: The cases read back from the parse cache undecoded (``parse_cache.load(stored=True)``;
    #: ``cases`` and ``texts`` are then empty), or None.
    stored: StoredCases | None = field(default=None, repr=False, compare=False)


def _iter_jsonl(path: Path, text: str) -> Iterator[tuple[int, Any | CaseError]]:
    # "\n" only: str.splitlines() also breaks at U+2028, U+0085, form feeds ... which a
    # JSON string may hold as they are (a "\r" before "\n" is JSON whitespace).
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, CaseError(path, number, "<json>", f"not valid JSON: {exc.msg}")
        except (ValueError, RecursionError) as exc:
            # An integer of more than 4,300 digits, a record nested ~1,000 deep: this line
            # is bad, the file's other lines are not.
            reason = ("nested too deeply to read" if isinstance(exc, RecursionError)
                      else str(exc).split(":")[0])
            yield number, CaseError(path, number, "<json>", f"cannot read: {reason}")


_CASE_KEYS = ("OSCE_Examination", "patient_info", "answers", "diagnosis")


def _load_jsonl(path: Path, text: str, loaded: LoadedFile) -> None:
    records = list(_iter_jsonl(path, text))
    dicts = [r for _, r in records if isinstance(r, dict)]
    shape = None if any(k in r for r in dicts for k in _CASE_KEYS) or not dicts else (
        formats.jsonl_shape_for(dicts[0]))
    if shape is not None:  # an extension's records (e.g. MediQ's), read by its reader
        loaded.format = shape.name
        _read_with(shape.reader, path, text, loaded)
        return
    if not any(k in r for r in dicts for k in _CASE_KEYS):
        loaded.damaged = not dicts
        unreadable = [r for _, r in records if isinstance(r, CaseError)]
        if loaded.damaged and unreadable:
            # Why the first record is not one (a 5,000-digit number, a JSON nested 1,000
            # deep) says more than "no line is a JSON object".
            loaded.errors.append(unreadable[0])
        loaded.not_cases = ("no line is a JSON object" if not dicts
                            else "no record has a case's fields (diagnosis, OSCE_Examination, "
                                 "answers)")
        return
    first = next((r for r in dicts if any(k in r for k in _CASE_KEYS)), {})
    build: Callable[[dict[str, Any], int, str], dict[str, Any]]
    if "OSCE_Examination" in first:
        loaded.format, build = "agentclinic-osce", medqa_case
    elif "patient_info" in first or "answers" in first:
        loaded.format, build = "agentclinic-nejm", nejm_case
    else:
        loaded.format = "project"
        del dicts, first
        for lineno, record in _let_go(records):
            _add_project_case(loaded, lineno, record, path.stem)
        return
    dataset = dataset_name(path)
    del dicts, first
    # Case ids use the 0-based record index, the key of the specialty sidecar.
    for index, (lineno, record) in enumerate(_let_go(records)):
        if isinstance(record, CaseError):
            loaded.errors.append(record)
            continue
        try:
            data = build(record, index, dataset) if isinstance(record, dict) else None
            if data is None:
                raise FieldError("<record>", "not a JSON object")
        except FieldError as exc:
            loaded.errors.append(CaseError(path, lineno, exc.field, str(exc)))
            continue
        _validate(loaded, lineno, data)


def _validate(loaded: LoadedFile, lineno: int, data: dict[str, Any]) -> None:
    position = len(loaded.cases) + len(loaded.errors)
    try:
        case = Case.model_validate(data)
        # Shared as each case is built: the file's cases are all held at once.
        loaded.shared.share(case)
        loaded.cases.append((lineno, case))
        loaded.positions[case.id] = position
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<case>"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        loaded.errors.append(CaseError(loaded.path, lineno, where, err["msg"] + more))


def _add_project_case(loaded: LoadedFile, lineno: int, record: Any, dataset: str) -> None:
    # The package's attribute, as ``documents`` (which made the record) imports it: a module
    # dropped from sys.modules since (pytest's in-process runs do) is not imported anew here.
    from . import yaml_stream

    if isinstance(record, CaseError):
        loaded.errors.append(record)
        return
    if isinstance(record, yaml_stream.ElementError):
        loaded.errors.append(CaseError(loaded.path, record.line, record.field, record.message))
        return
    if not isinstance(record, dict):
        loaded.errors.append(CaseError(loaded.path, lineno, "<case>", "not a mapping"))
        return
    images = record.get("images")
    if isinstance(images, list):
        # A relative image path means "beside the case file", wherever pytest runs from.
        record = {**record, "images": [
            {**i, "path": str(loaded.path.parent / i["path"])}
            if isinstance(i, dict) and i.get("path") and not Path(i["path"]).is_absolute()
            else i for i in images]}
    _validate(loaded, lineno, {"dataset": dataset, **record})


def _load_document(path: Path, text: str, loaded: LoadedFile) -> None:
    from . import documents

    parsed = documents.parse(path, text)
    if parsed.error is not None:
        loaded.errors.append(parsed.error)
        loaded.not_cases, loaded.damaged = parsed.error.message, True
        return
    doc = parsed.data
    if doc in (None, [], {}):
        loaded.not_cases, loaded.damaged = "empty", True
        return
    if not documents.is_case_document(doc):
        loaded.not_cases = "not a case document (no 'diagnosis', 'cases' or OSCE_Examination)"
        return
    if isinstance(doc, dict) and "OSCE_Examination" in doc:
        _load_jsonl(path, json.dumps(doc), loaded)
        return
    dataset, records, lines = documents.records(path, text, parsed)
    loaded.errors.extend(parsed.problems)
    del parsed, doc  # the records alone hold the document's data now
    for lineno, record in zip(lines, _let_go(records), strict=True):
        _add_project_case(loaded, lineno, record, dataset)


def _let_go(records: list[Any]) -> Iterator[Any]:
    """Each of ``records`` in turn, its place in the list emptied as it is handed out: a
    record (~2 KB of parsed data a case) is let go once its case is built, instead of all
    the file's records living on beside all its cases (a collection's peak, and so its
    memory: 4,000 cases parsed ~4.9 KB a case at the peak, ~2.8 KB held)."""
    for index, record in enumerate(records):
        records[index] = None
        yield record


def has_case_suffix(path: Path) -> bool:
    """Whether ``path``'s name allows it to be a case file (whether it is one is decided by
    :func:`load_case_file` on the whole file)."""
    return path.suffix in formats.suffixes() and not path.name.endswith(SIDECAR_SUFFIX)


def looks_like_case_file(path: Path) -> bool:
    """True when ``path`` holds cases in a supported format (a parse of the whole file)."""
    return has_case_suffix(path) and load_case_file(path).not_cases is None


def _apply_sidecar(loaded: LoadedFile) -> None:
    sidecar = loaded.path.with_name(loaded.path.stem + SIDECAR_SUFFIX)
    if not sidecar.exists():
        return
    try:
        labels = json.loads(sidecar.read_text(encoding="utf-8")).get("cases", {})
        by_position = {int(k): str(v.get("specialty", UNSPECIFIED)) for k, v in labels.items()}
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError) as exc:
        # One error for the sidecar; the cases still run, as `unspecified`.
        line = getattr(exc, "lineno", 1)
        loaded.sidecar_error = CaseError(sidecar, line, "cases", f"unreadable sidecar: {exc}")
        return
    loaded.cases = [
        (line, _relabelled(case, by_position[loaded.positions[case.id]], loaded.shared))
        if loaded.positions.get(case.id) in by_position
        else (line, case)
        for line, case in loaded.cases
    ]


def _relabelled(case: Case, specialty: str, shared: FrozenParts) -> Case:
    copy = case.model_copy(update={"specialty": specialty})
    shared.share(copy)  # a copy gets a set of its own
    return copy


def load_case_file(path: Path, *, share: bool = True) -> LoadedFile:
    """Load every case of ``path``; bad records are returned as errors, never raised.

    ``share``: let the file's cases use one object for each of their equal parts (strings,
    sets of given fields; ~1 KB a case held), else for their sets of given fields only
    (:class:`~.stored.GivenFields`: for a caller that lets the models go once read; sharing
    every part of 4,000 cases costs ~35 ms of CPU, more than building them)."""
    loaded = LoadedFile(path=path, format="project",
                        shared=FrozenParts() if share else GivenFields())
    try:
        # utf-8-sig: an editor's byte-order mark would make the first record unreadable.
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        loaded.errors.append(CaseError(path, 1, "<file>", f"cannot read: {exc}"))
        loaded.not_cases, loaded.damaged = f"cannot read: {exc}", True
        return loaded
    if not text.strip():
        loaded.not_cases, loaded.damaged = "empty", True
        return loaded
    # Thousands of small containers that live on: the collector's passes over them while
    # they accumulate cost more than building them (~40 ms of 4,000 cases' 240).
    with gc_paused():
        _BUILT_IN.get(path.suffix, _load_extension)(path, text, loaded)
        _apply_sidecar(loaded)
        _drop_duplicates(loaded)
    loaded.positions = {}  # the sidecar's key, applied: not held with the cases
    return loaded


def _load_csv(path: Path, text: str, loaded: LoadedFile) -> None:
    if "case_vignette" not in text.split("\n", 1)[0]:
        loaded.not_cases = "a CSV without a case_vignette column (not CRAFT-MD cases)"
        return
    from .vignettes import read_craftmd_csv

    try:
        converted = read_craftmd_csv(path)
    except csv.Error as exc:
        loaded.errors.append(CaseError(path, 1, "<file>", f"cannot read the CSV: {exc}"))
        loaded.not_cases, loaded.damaged = f"cannot read the CSV: {exc}", True
        return
    loaded.format = converted.format
    for case in converted.cases:
        loaded.shared.share(case)
    loaded.cases = list(zip(converted.lines, converted.cases, strict=True))
    loaded.errors = list(converted.errors)


def _load_extension(path: Path, text: str, loaded: LoadedFile) -> None:
    """A file of a format an extension registered (:mod:`.formats`): its records are cases
    in the project's shape, validated as such."""
    reader = formats.reader_for(path.suffix)
    if reader is None:
        loaded.not_cases = f"no case format reads {path.suffix!r} files"
        return
    loaded.format = path.suffix.lstrip(".")
    _read_with(reader, path, text, loaded)


def _read_with(reader: formats.RecordReader, path: Path, text: str,
               loaded: LoadedFile) -> None:
    """The records an extension's reader makes of ``text``, validated as cases."""
    try:
        records = list(reader(path, text))
    except Exception as exc:  # the extension's bug: one error for its file, not a crash
        loaded.errors.append(CaseError(path, 1, "<file>", f"the {loaded.format} reader "
                                                          f"failed: {type(exc).__name__}: "
                                                          f"{exc}"))
        loaded.not_cases, loaded.damaged = loaded.errors[0].message, True
        return
    for lineno, record in _let_go(records):
        _add_project_case(loaded, lineno, record, path.stem)


#: The built-in readers by suffix; other suffixes go to the extensions' (:mod:`.formats`).
_BUILT_IN: dict[str, Callable[[Path, str, LoadedFile], None]] = {
    ".jsonl": _load_jsonl, ".json": _load_document, ".yaml": _load_document,
    ".yml": _load_document, ".csv": _load_csv}
formats.declare_built_in(*_BUILT_IN)


def _drop_duplicates(loaded: LoadedFile) -> None:
    """A second case with an id already used in the file is an error naming both places;
    the first keeps running (two items with one id would share one encounter)."""
    first: dict[str, int] = {}
    kept: list[tuple[int, Case]] = []
    for line, case in loaded.cases:
        if case.id in first:
            loaded.errors.append(CaseError(
                loaded.path, line, "id", f"duplicate case id {case.id!r}: already used at "
                f"{loaded.path}:{first[case.id]}; ids must be unique in a file"))
            continue
        first[case.id] = line
        kept.append((line, case))
    loaded.cases = kept
