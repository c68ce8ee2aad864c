"""Convert upstream case files into the project's YAML case format (``cases/README.md``).

Inputs: anything :func:`~.loaders.load_case_file` reads (AgentClinic MedQA/OSCE and NEJM
JSONL, project JSON/YAML) and the CRAFT-MD vignette CSV (``case_vignette, choice_1..choice_4,
answer, category, dataset, case_id``). The YAML written loads back into equal :class:`Case`
objects: :func:`round_trip_problems` checks exactly that for every file written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..core.case import UNSPECIFIED, Case, slugify
from ..core.text import sentences
from .craftmd_csv import read_table
from .loaders import CaseError, load_case_file, looks_like_case_file
from .terms import Term, accepted_terms, find_leak

CRAFTMD_COLUMNS = ("case_vignette", "choice_1", "choice_2", "choice_3", "choice_4", "answer",
                   "category", "dataset", "case_id")
YAML_WIDTH = 100
GENERIC_OBJECTIVE = "Evaluate and diagnose the patient."


@dataclass
class Converted:
    """The cases read from one input file, its bad records and notes about odd records."""

    source: Path
    format: str
    cases: list[Case] = field(default_factory=list)
    errors: list[CaseError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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
    table = read_table(path)
    missing = [c for c in CRAFTMD_COLUMNS if c not in table.columns]
    if missing:
        out.errors.append(CaseError(path, 1, "<header>", f"missing columns: {missing}"))
        return out
    for line, row in table.rows:
        _add_row(out, line, row)
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


# ---------------------------------------------------------------- any input


def read_input(path: Path) -> Converted:
    """Read one input file of any supported upstream format."""
    if path.suffix.lower() == ".csv":
        return read_craftmd_csv(path)
    if not looks_like_case_file(path):
        error = CaseError(path, 1, "<file>", "not a CRAFT-MD CSV nor a known case file format")
        return Converted(path, "unknown", errors=[error])
    loaded = load_case_file(path)
    return Converted(path, loaded.format, [c for _, c in loaded.cases], list(loaded.errors))


# ---------------------------------------------------------------- YAML output


class _Dumper(yaml.SafeDumper):
    """Block style for long or multi-line strings, flow style for short lists."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    # Multi-line text goes literal: PyYAML's folded style mangles indented lines ("   - x").
    # The emitter falls back to a quoted style when a block style cannot round-trip.
    style = "|" if "\n" in text else (">" if len(text) > YAML_WIDTH - 20 else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def _represent_list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.Node:
    short = all(isinstance(i, str) and "\n" not in i for i in items) and (
        sum(len(str(i)) + 2 for i in items) < YAML_WIDTH - 20)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=short)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


def dump_cases(cases: Sequence[Case]) -> str:
    """The YAML document of ``cases`` (``dataset`` at the top, per case only where it differs)."""
    dataset = Counter(c.dataset for c in cases).most_common(1)[0][0] if cases else "cases"
    records = []
    for case in cases:
        record = case.model_dump(mode="json", exclude_defaults=True)
        if record.get("dataset") == dataset:
            del record["dataset"]
        records.append(record)
    return yaml.dump({"dataset": dataset, "cases": records}, Dumper=_Dumper, sort_keys=False,
                     allow_unicode=True, width=YAML_WIDTH - 10,  # PyYAML overshoots by a word
                     default_flow_style=False)


def plan_outputs(converted: Iterable[Converted], out_dir: Path,
                 per_specialty: bool = False) -> dict[Path, list[Case]]:
    """Which cases go to which file: one per input (its stem), or one per specialty."""
    plan: dict[Path, list[Case]] = {}
    for item in converted:
        if not per_specialty:
            plan.setdefault(out_dir / f"{item.source.stem}.yaml", []).extend(item.cases)
            continue
        for case in item.cases:
            plan.setdefault(out_dir / f"{case.specialty_marker}.yaml", []).append(case)
    return plan


def round_trip_problems(path: Path, cases: Sequence[Case]) -> list[str]:
    """Differences between ``cases`` and what ``path`` loads back (empty when equal)."""
    loaded = load_case_file(path)
    problems = [str(e) for e in loaded.errors]
    back = [c for _, c in loaded.cases]
    if len(back) != len(cases):
        problems.append(f"{path}: {len(cases)} cases written, {len(back)} read back")
    problems += [f"{path}: case {a.id} changed in the round trip"
                 for a, b in zip(cases, back, strict=False) if a != b]
    return problems


def duplicate_ids(cases: Iterable[Case]) -> list[str]:
    """Case ids that occur more than once."""
    return [i for i, n in Counter(c.id for c in cases).items() if n > 1]
