"""The project's YAML and JSON case documents: parsed, with the line each case starts on.

A document is one case (a mapping with ``diagnosis``), a list of cases, or a mapping of
``dataset`` and ``cases`` (a list). What such a document may hold is checked here: an unknown
top-level key or an empty ``cases`` list is an error naming file, line and field rather than
a silent loss.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..core.case import CASE_FORMAT
from ..core.versioned import UnknownVersion
from . import yaml_stream
from .errors import CaseError
from .yaml_aliases import alias_problem, harmless, has_aliases

#: The keys of a document of many cases (``version`` is the cases' format version).
DOCUMENT_KEYS = ("dataset", "cases", "version")
_WHITESPACE = re.compile(r"\s*")
_DECODER = json.JSONDecoder()


@dataclass
class Parsed:
    """A parsed document: its data, the start line of each element of its case list (when
    known), and the error that stopped the parse."""

    data: Any = None
    lines: list[int] | None = None
    error: CaseError | None = None
    #: Problems of the document's own keys; its cases still load.
    problems: list[CaseError] = field(default_factory=list)


def parse(path: Path, text: str) -> Parsed:
    """The document of ``path`` (``.json`` as JSON, else YAML), or the error naming its line."""
    try:
        if path.suffix == ".json":
            data = json.loads(text)
            return Parsed(data, json_element_lines(text))
        if has_aliases(text):
            problem, data, lines = _load_aliased(text)
            if problem is not None:
                return Parsed(error=CaseError(path, *problem))
        else:
            data, lines = yaml_stream.load_with_lines(text)
        key = "cases" if isinstance(data, dict) else None
        return Parsed(data, lines.get(key))
    except yaml_stream.DuplicateKey as exc:
        return Parsed(error=CaseError(path, _line(exc), exc.key, str(exc.problem)))
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        # ValueError: JSON's own errors, and an integer of more than 4,300 digits.
        return Parsed(error=CaseError(path, _line(exc), "<document>",
                                      f"cannot parse: {_reason(exc)}"))


def _load_aliased(text: str) -> tuple[tuple[int, str, str] | None, Any,
                                      dict[str | None, list[int]]]:
    """A document with aliases, loaded once; composed a second time to find a loop or a
    bomb only when the load's count of its aliases cannot rule them out (or it failed)."""
    try:
        data, lines, count = yaml_stream.load_counting_aliases(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        problem = alias_problem(text, yaml_stream.WHOLE_LOADER)
        if problem is None:
            raise
        return problem, None, {}
    if harmless(count.nodes, count.aliased, count.nested):
        return None, data, lines
    return alias_problem(text, yaml_stream.WHOLE_LOADER), data, lines


def _line(exc: BaseException) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    return int(getattr(exc, "lineno", None) or 1)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        return str(exc.problem)
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def is_case_document(doc: Any) -> bool:
    """Whether a parsed document means to hold cases (in any shape, right or wrong)."""
    if isinstance(doc, dict):
        return "OSCE_Examination" in doc or "diagnosis" in doc or "cases" in doc
    return isinstance(doc, list) and any(isinstance(d, dict) and "diagnosis" in d for d in doc)


def records(path: Path, text: str, parsed: Parsed) -> tuple[str, list[Any], list[int]]:
    """The dataset name, the case records and their lines of a case document; problems of
    the document's own keys go to ``parsed.problems``."""
    doc, dataset = parsed.data, path.stem
    if isinstance(doc, list):
        items = doc
    elif "cases" in doc:
        items = _listed_cases(path, text, doc, parsed)
        dataset = str(doc.get("dataset") or dataset)
    else:
        items = [doc]
    lines = parsed.lines if parsed.lines and len(parsed.lines) == len(items) else None
    return dataset, items, lines or case_lines(text, len(items))


def _listed_cases(path: Path, text: str, doc: dict[str, Any], parsed: Parsed) -> list[Any]:
    for key in doc:
        if key not in DOCUMENT_KEYS:
            parsed.problems.append(CaseError(
                path, key_line(text, str(key)), str(key),
                f"unknown top-level key (a case document has {', '.join(DOCUMENT_KEYS)}); "
                f"misspelt?"))
    if "version" in doc:
        try:
            CASE_FORMAT.upgrade({"version": doc["version"]}, None)
        except UnknownVersion as exc:
            # The document's cases may mean something else field by field: none is read.
            parsed.problems.append(CaseError(path, key_line(text, "version"), "version",
                                             str(exc)))
            return []
    items = doc["cases"]
    if not isinstance(items, list):
        kind = "nothing" if items is None else type(items).__name__
        parsed.problems.append(CaseError(path, key_line(text, "cases"), "cases",
                                         f"expected a list of cases, got {kind}"))
        return []
    if not items:
        parsed.problems.append(CaseError(path, key_line(text, "cases"), "cases",
                                         "the list of cases is empty"))
    return items


def key_line(text: str, key: str) -> int:
    """The line of a top-level key (column 0 in YAML, quoted in JSON); 1 when not found."""
    match = re.search(rf'^(?:{re.escape(key)}|"{re.escape(key)}")\s*:|"{re.escape(key)}"\s*:',
                      text, re.M)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def case_lines(text: str, count: int) -> list[int]:
    """Best-effort 1-based start lines of the cases of a YAML/JSON document."""
    starts = [m.start() for m in re.finditer(r'^\s*-?\s*"?id"?\s*:', text, re.M)]
    # Counted on from the previous start: counting from the top each time was O(n^2) in the
    # file's size (20 s for 8,000 cases).
    lines, line, last = [], 1, 0
    for start in starts:
        line += text.count("\n", last, start)
        last = start
        lines.append(line)
    return lines if len(lines) == count else [1] * count


def json_element_lines(text: str) -> list[int] | None:
    """The start line of each element of a JSON document's case list (the top-level list,
    or the list under its top-level ``cases``); None when there is none. One linear scan."""
    try:
        start = _case_list_start(text)
        if start is None:
            return None
        lines: list[int] = []
        line, pos = text.count("\n", 0, start) + 1, _skip(text, start + 1)
        while not text.startswith("]", pos):
            line += text.count("\n", start, pos)
            start = pos
            lines.append(line)
            pos = _skip(text, _DECODER.raw_decode(text, pos)[1])
            pos = _skip(text, pos + 1) if text.startswith(",", pos) else pos
        return lines
    except (ValueError, IndexError, RecursionError):
        return None


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _case_list_start(text: str) -> int | None:
    pos = _skip(text, 0)
    if text.startswith("[", pos):
        return pos
    if not text.startswith("{", pos):
        return None
    found, pos = None, _skip(text, pos + 1)
    while not text.startswith("}", pos):
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the colon
        if key == "cases" and text.startswith("[", pos):
            found = pos  # the last one given is the one json.loads keeps
        pos = _skip(text, _DECODER.raw_decode(text, pos)[1])
        pos = _skip(text, pos + 1) if text.startswith(",", pos) else pos
    return found
