"""CRAFT-MD vignette CSVs (``case_vignette, choice_1..choice_4, answer, category, dataset,
case_id``) read into :class:`Case` objects: the question split from the vignette, an
objective and a presenting complaint drawn from its first sentence.

The one reader of that format into cases, used by :mod:`.loaders` (a CSV among case files)
and :mod:`.convert` (into YAML).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.case import UNSPECIFIED, Case, slugify
from ..core.text import sentences
from .craftmd_csv import read_table
from .errors import CaseError
from .terms import Term, accepted_terms, find_leak

CRAFTMD_COLUMNS = ("case_vignette", "choice_1", "choice_2", "choice_3", "choice_4", "answer",
                   "category", "dataset", "case_id")
GENERIC_OBJECTIVE = "Evaluate and diagnose the patient."


@dataclass
class Converted:
    """The cases read from one input file, its bad records and notes about odd records."""

    source: Path
    format: str
    cases: list[Case] = field(default_factory=list)
    errors: list[CaseError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The 1-based line each case starts on (parallel to ``cases``).
    lines: list[int] = field(default_factory=list)


# ---------------------------------------------------------------- CRAFT-MD CSV

# A closing question may follow a list ("Urinalysis shows:\nBlood +3\n..."), hence newlines.
_BOUNDARY = re.compile(r"(?<=[.!?:;])[\"\u201d\u2019]?\s+|\s*\n\s*")
_ASKS = re.compile(r"[?:][\"\u201d]?$")
_PRESENTING = re.compile(
    r"\b(?:presents?|presented|presenting|comes?|came|(?:is|was) brought|brought|"
    r"(?:is|was|being) (?:referred|seen|evaluated|admitted)|visits|visited)\b.*?"
    r"\b(?:with|because of|complaining of|for (?:the )?(?:evaluation|assessment) of)\s+"
    r"(?P<what>.+)", re.I)
_DEMOGRAPHICS = re.compile(
    r"\b\d{1,3}[\s-]*(?:year|month|week|day)s?[\s-]*old(?:\s+[A-Za-z-]+){0,3}?\s+"
    r"(?:man|woman|boy|girl|male|female|infant|child|neonate|newborn|baby|gentleman|lady)\b",
    re.I)


def split_question(text: str) -> tuple[str, str]:
    """Split a vignette into (story, closing question); the question is "" when there is none.

    The question is the last sentence when it ends with ``?`` or ``:`` (both occur upstream),
    and it starts with a capital letter (so "e.g. what?" is not cut in the middle).
    """
    text = text.strip()
    if not _ASKS.search(text):
        return text, ""
    for match in reversed(list(_BOUNDARY.finditer(text))):
        question = text[match.end():]
        if question[:1].isupper() or question.startswith(('"', "\u201c", "'")):
            if question.endswith('"') and question.count('"') % 2:
                question = question[:-1]  # a stray closing quote of the upstream export
            return text[:match.start() + 1].rstrip(), question.strip()
    return text, ""  # a lone question: keep it as the story, the patient needs a history


def presenting_complaint(first_sentence: str) -> str:
    """What the patient presents with, from the vignette's opening sentence ("" if unclear)."""
    match = _PRESENTING.search(first_sentence.strip().rstrip("."))
    return match["what"].strip() if match else ""


def objective_from(first_sentence: str, terms: Sequence[Term] = ()) -> str:
    """The doctor's brief, from the vignette's opening sentence, never naming the diagnosis."""
    first, complaint = first_sentence.strip().rstrip("."), presenting_complaint(first_sentence)
    if complaint:
        objective = f"Evaluate and diagnose the patient presenting with {complaint}."
    elif first:
        objective = f"Evaluate and diagnose the patient described as follows: {first}."
    else:
        objective = GENERIC_OBJECTIVE
    return GENERIC_OBJECTIVE if find_leak(terms, objective) else objective


def _craftmd_case(row: dict[str, str], default_dataset: str) -> Case:
    story, question = split_question(row["case_vignette"])
    first = (sentences(story) or [""])[0]
    demographics = _DEMOGRAPHICS.search(first)
    record: dict[str, Any] = {
        "id": row["case_id"],
        "dataset": row["dataset"].strip() or default_dataset,
        "specialty": row["category"].strip() or UNSPECIFIED,
        "objective": GENERIC_OBJECTIVE,
        "patient": {"demographics": demographics[0] if demographics else "", "history": story},
        "diagnosis": row["answer"],
        "choices": [row[f"choice_{i}"] for i in range(1, 5) if row[f"choice_{i}"].strip()],
        "vignette": story,
        "question": question,
    }
    # Both need the cleaned diagnosis and synonyms, to be checked for leaks.
    terms = accepted_terms(Case.model_validate(record))
    complaint = presenting_complaint(first)
    record["patient"]["symptoms"] = {"primary": "" if find_leak(terms, complaint) else complaint}
    return Case.model_validate({**record, "objective": objective_from(first, terms)})


def read_craftmd_csv(path: Path) -> Converted:
    """Read a CRAFT-MD vignette CSV; a bad row becomes a :class:`CaseError` naming its line."""
    out = Converted(path, "craftmd-csv")
    table = read_table(path, keep_going=True)
    missing = [c for c in CRAFTMD_COLUMNS if c not in table.columns]
    if missing:
        out.errors.append(CaseError(path, 1, "<header>", f"missing columns: {missing}"))
        return out
    if not table.rows and not table.bad_rows:
        # A header and nothing under it: a file meant to hold cases that holds none.
        out.errors.append(CaseError(path, 1, "<rows>", "a header and no rows: no cases"))
        return out
    out.errors += [CaseError(path, line, "<row>", f"cannot read the row: {reason}")
                   for line, reason in table.bad_rows]
    for line, row in table.rows:
        _add_row(out, line, row)
    out.errors.sort(key=lambda e: e.line)
    return out


def _add_row(out: Converted, line: int, row: dict[str, str]) -> None:
    try:
        case = _craftmd_case(row, slugify(out.source.stem) or "craftmd")
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<row>"
        out.errors.append(CaseError(out.source, line, where, err["msg"]))
        return
    if case.diagnosis not in case.choices:
        out.notes.append(f"{out.source}:{line}: case {case.id}: answer {case.diagnosis!r} "
                         f"is not among the choices {case.choices}")
    out.cases.append(case)
    out.lines.append(line)
