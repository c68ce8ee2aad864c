"""Check case files: every loader (schema) error plus content checks the schema cannot express.

Content checks, per case: **leaks** of the diagnosis or a synonym into what the agents see
(objective, every patient field, vignette, question, and the *names* of exam findings and
tests; test values may describe the disease); **choices** hold the diagnosis exactly once
(exact string) and no duplicates, and a distractor equal to a synonym is a warning; **empty
sections** (history, symptoms, exam, tests, findings, list items, a vignette without choices);
the **vignette against the structured fields** where mechanically checkable (age and sex words
of its first sentence against the demographics; quoted temperature, heart rate, blood
pressure, respiratory rate and oxygen saturation against the exam, wrong only when matching
none of the exam's readings of that sign); **duplicate case ids** across all files checked.
Leak matching is described in :mod:`.terms`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from ..core.case import Case
from ..core.text import sentences
from .loaders import has_case_suffix, load_case_file
from .terms import accepted_terms, find_leak, same_name

Severity = Literal["error", "warning"]
#: Where a problem is inside a case: keys and list indices, e.g. ("choices", 2).
FieldPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    """One finding of the validator, located by file, line and field."""

    path: Path
    line: int
    field: str
    message: str
    severity: Severity = "error"
    case_id: str | None = None

    def __str__(self) -> str:
        case = f"case {self.case_id}: " if self.case_id else ""
        return (f"{self.path}:{self.line}: {self.severity}: {case}"
                f"field {self.field!r}: {self.message}")


@dataclass
class Summary:
    """Counts filled in by :func:`validate_paths` for the one-line report."""

    files: int = 0
    cases: int = 0


def render_field(path: FieldPath) -> str:
    """``("patient", "symptoms", "secondary", 1)`` -> ``patient.symptoms.secondary[1]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


# ---------------------------------------------------------------- line finding


def _child(node: yaml.Node | None, part: str | int) -> tuple[yaml.Node | None, yaml.Node | None]:
    """The value node under ``part`` and, for mappings, its key node."""
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and str(key.value).strip() == part:
                return value, key
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part], None
    return None, None


def _record_nodes(path: Path) -> dict[str, list[yaml.Node]]:
    """The YAML node of every case record of a document, by case id (empty for JSONL)."""
    if path.suffix == ".jsonl":
        return {}
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}  # lines fall back to the loader's case start lines
    records: list[yaml.Node] = []
    if isinstance(root, yaml.MappingNode):
        cases, _ = _child(root, "cases")
        records = cases.value if isinstance(cases, yaml.SequenceNode) else [root]
    elif isinstance(root, yaml.SequenceNode):
        records = root.value
    out: dict[str, list[yaml.Node]] = {}
    for record in records:
        id_node, _ = _child(record, "id")
        if isinstance(id_node, yaml.ScalarNode):
            out.setdefault(str(id_node.value).strip(), []).append(record)
    return out


@dataclass
class _Where:
    """Builds the problems of one case, finding each field's line in the YAML when it can."""

    path: Path
    case: Case
    line: int
    node: yaml.Node | None = None
    problems: list[Problem] = field(default_factory=list)

    def add(self, where: FieldPath, message: str, severity: Severity = "error") -> None:
        self.problems.append(Problem(self.path, self._line(where), render_field(where),
                                     message, severity, self.case.id))

    def _line(self, where: FieldPath) -> int:
        node, line = self.node, self.line
        for part in where:
            value, key_node = _child(node, part)
            if value is None:
                break  # best effort: the deepest line found so far
            # A key's line, not its value's: a block mapping value starts a line lower.
            line = (key_node or value).start_mark.line + 1
            node = value
        return line


# ---------------------------------------------------------------- case content


def walk_findings(findings: Any, prefix: FieldPath) -> Iterator[tuple[FieldPath, Any]]:
    """Every (path, value) of a nested findings tree, groups before their members."""
    items: Iterable[tuple[str | int, Any]] = (
        findings.items() if isinstance(findings, dict)
        else enumerate(findings) if isinstance(findings, list) else ())
    for key, value in items:
        yield (*prefix, key), value
        yield from walk_findings(value, (*prefix, key))


def _visible_texts(case: Case) -> Iterator[tuple[FieldPath, str]]:
    """Every free text the doctor or the patient agent is shown."""
    yield ("objective",), case.objective
    patient = case.patient
    for name in ("demographics", "history", "past_medical_history", "medications",
                 "social_history", "family_history", "review_of_systems"):
        yield ("patient", name), getattr(patient, name)
    yield ("patient", "symptoms", "primary"), patient.symptoms.primary
    for i, text in enumerate(patient.symptoms.secondary):
        yield ("patient", "symptoms", "secondary", i), text
    for name, text in patient.other.items():
        yield ("patient", "other", name), text
    yield ("vignette",), case.vignette
    yield ("question",), case.question


def _check_leaks(case: Case, where: _Where) -> None:
    terms = accepted_terms(case)
    for path, text in _visible_texts(case):
        term = find_leak(terms, text)
        if term:
            where.add(path, f"gives away the diagnosis ({term.name!r})")
    for section in ("physical_exam", "tests"):
        for path, _ in walk_findings(getattr(case, section), (section,)):
            term = find_leak(terms, str(path[-1]))
            if term and isinstance(path[-1], str):
                where.add(path, f"name gives away the diagnosis ({term.name!r})")


def _check_choices(case: Case, where: _Where) -> None:
    if not case.choices:
        return
    count = case.choices.count(case.diagnosis)
    if count != 1:
        near = [c for c in case.choices if c != case.diagnosis and same_name(c, case.diagnosis)]
        hint = f"; {near[0]!r} differs only in spelling" if near else ""
        where.add(("choices",), f"hold the diagnosis {case.diagnosis!r} {count} times, "
                                f"not once{hint}")
    seen: set[str] = set()
    for i, choice in enumerate(case.choices):
        # Only case and spacing: symbols tell choices apart ("CD3+, CD19-" vs "CD3-, CD19+").
        norm = " ".join(choice.casefold().split())
        if norm in seen and choice != case.diagnosis:
            where.add(("choices", i), f"duplicate choice {choice!r}")
        seen.add(norm)
        if choice != case.diagnosis and any(same_name(choice, s) for s in case.synonyms):
            where.add(("choices", i), f"distractor {choice!r} is an accepted synonym",
                      "warning")


def _check_empty(case: Case, where: _Where) -> None:
    patient = case.patient
    if case.vignette and not (case.physical_exam or case.tests):
        # A CRAFT-MD vignette case: the vignette is what the protocol needs, and it has no
        # structured sections to be empty (the exam-only experiment skips such cases).
        if not case.question:
            where.add(("question",), "empty: the vignette has no closing question", "warning")
        return
    if not patient.history:
        where.add(("patient", "history"), "empty: the patient has no history to tell")
    if not patient.symptoms.primary:
        where.add(("patient", "symptoms", "primary"), "empty: no presenting symptom")
    for section in ("physical_exam", "tests"):
        findings = getattr(case, section)
        if not findings:
            where.add((section,), "empty section")
        for path, value in walk_findings(findings, (section,)):
            if value is None or (isinstance(value, str | dict | list) and not value):
                where.add(path, "empty value")
    lists = {("choices",): case.choices, ("synonyms",): case.synonyms,
             ("patient", "symptoms", "secondary"): patient.symptoms.secondary}
    for prefix, items in lists.items():
        for i in (i for i, text in enumerate(items) if not text):
            where.add((*prefix, i), "empty string in the list")
    if case.vignette and not case.choices:
        where.add(("choices",), "missing: a case with a vignette needs answer choices")


# ---------------------------------------------------------------- vignette consistency

_AGE = re.compile(r"\b(\d{1,3})[\s-]*(year|yr|month|week|day)s?[\s-]*old\b", re.I)
_AGED = re.compile(r"\baged?\s+(\d{1,3})\b", re.I)
_SEX_WORDS = {"male": {"man", "boy", "male", "gentleman"},
              "female": {"woman", "girl", "female", "lady"}}


def _ages(text: str) -> list[tuple[int, str]]:
    found = [(m.start(), int(m[1]), m[2].lower().replace("yr", "year")) for m in
             _AGE.finditer(text)] + [(m.start(), int(m[1]), "year") for m in _AGED.finditer(text)]
    return [(age, unit) for _, age, unit in sorted(found)]


def _sexes(text: str) -> set[str]:
    words = set(re.findall(r"[a-z]+", text.lower()))
    return {sex for sex, names in _SEX_WORDS.items() if words & names}


def _check_demographics(case: Case, where: _Where, first: str) -> None:
    demo = case.patient.demographics
    ages, told = _ages(first), _ages(demo)
    if ages and told and told[0] not in ages:
        age, unit = told[0]
        where.add(("vignette",), f"age {ages[0][0]} {ages[0][1]}s contradicts the "
                                 f"demographics ({age} {unit}s)")
    sexes, told_sex = _sexes(first), _sexes(demo)
    if len(sexes) == 1 and len(told_sex) == 1 and sexes != told_sex:
        where.add(("vignette",), f"describes a {sexes.pop()} patient, the demographics a "
                                 f"{told_sex.pop()} one")


_VITALS: dict[str, re.Pattern[str]] = {
    "temperature": re.compile(r"(?i:\btemperature\b|\btemp\b|\bfebrile\b|\bfever of\b)"),
    "heart rate": re.compile(r"(?i:\bheart rate\b|\bpulse(?: rate)?\b(?! ?ox)|\bapical rate\b)"
                             r"|\bHR\b"),
    "blood pressure": re.compile(r"(?i:\bblood pressure\b)|\bBP\b"),
    "respiratory rate": re.compile(r"(?i:\brespiratory rate\b|\brespirations\b)|\bRR\b"),
    "oxygen saturation": re.compile(r"(?i:\boxygen saturation\b|\bpulse oximetry\b)"
                                    r"|\bSp[Oo]2\b|\bSaO2\b"),
}
_VALUE = {"temperature": re.compile(r"\b(\d{2,3}(?:\.\d+)?)\b"),
          "blood pressure": re.compile(r"\b(\d{2,3}\s*/\s*\d{2,3})\b")}
_INTEGER = re.compile(r"\b(\d{1,3})\b")
# A quoted value belongs to its label only up to the next clause.
_CLAUSE_END = re.compile(r"[,;()]|\.\s|\.$|\band\b|\bwith\b")


def _values(vital: str, text: str) -> list[str]:
    found = _VALUE.get(vital, _INTEGER).findall(text)
    return [re.sub(r"\s", "", v) for v in found]


def _prose_vitals(text: str) -> Iterator[tuple[str, str]]:
    """(sign, value) for each labelled vital sign value quoted in prose."""
    for vital, label in _VITALS.items():
        for match in label.finditer(text):
            clause = _CLAUSE_END.split(text[match.end():match.end() + 40])[0]
            values = _values(vital, clause)
            if values:
                yield vital, values[0]


def _exam_vitals(case: Case) -> dict[str, set[str]]:
    """Every value the physical exam gives for each vital sign."""
    out: dict[str, set[str]] = {}
    for path, value in walk_findings(case.physical_exam, ()):
        if isinstance(value, dict | list):
            continue
        text, key = str(value), str(path[-1])
        named = [v for v, label in _VITALS.items() if label.search(key)]
        pairs = [(named[0], v) for v in _values(named[0], text)] if named else []
        if not named and any("vital" in str(p).lower() for p in path):
            pairs = list(_prose_vitals(text))  # e.g. "Vital Signs: BP 120/80, HR 72"
        for vital, v in pairs:
            out.setdefault(vital, set()).add(v)
    return out


def _celsius(value: str) -> float:
    return (float(value) - 32) * 5 / 9 if float(value) > 50 else float(value)


def _same_reading(vital: str, quoted: str, exam: set[str]) -> bool:
    if vital != "temperature":
        return quoted in exam
    return any(abs(_celsius(quoted) - _celsius(e)) <= 0.15 for e in exam)


def _check_vitals(case: Case, where: _Where) -> None:
    exam = _exam_vitals(case)
    for vital, quoted in _prose_vitals(case.vignette):
        if vital in exam and not _same_reading(vital, quoted, exam[vital]):
            where.add(("vignette",), f"{vital} {quoted} differs from the physical exam "
                                     f"({', '.join(sorted(exam[vital]))})")


def check_case(case: Case, path: Path, line: int, node: yaml.Node | None = None) -> list[Problem]:
    """The content problems of one case starting at ``line`` of ``path``.

    ``node`` is the case's YAML record when known, to locate each field's own line.
    """
    where = _Where(path, case, line, node)
    _check_empty(case, where)
    _check_leaks(case, where)
    _check_choices(case, where)
    if case.vignette:
        first = (sentences(case.vignette) or [""])[0]
        _check_demographics(case, where, first)
        _check_vitals(case, where)
    return where.problems


# ---------------------------------------------------------------- files


def _worth_checking(path: Path) -> bool:
    """A case file, or a damaged one (an alias bomb, a key given twice, empty), as pytest
    collects a folder: only a well-formed file of another kind is left alone."""
    if not has_case_suffix(path):
        return False
    loaded = load_case_file(path)
    return loaded.not_cases is None or loaded.damaged


def _case_files(paths: Iterable[Path | str], problems: list[Problem]) -> list[Path]:
    files: dict[Path, Path] = {}
    for path in map(Path, paths):
        if path.is_dir():
            found = [p for p in sorted(path.rglob("*")) if p.is_file()
                     and not any(part.startswith(".") for part in p.relative_to(path).parts)
                     and _worth_checking(p)]
            if not found:
                problems.append(Problem(path, 1, "<path>", "no case files found"))
            files.update((p.resolve(), p) for p in found)
        elif path.is_file():
            if has_case_suffix(path):  # the loader says why, if it is not a case file
                files.setdefault(path.resolve(), path)
            else:
                problems.append(Problem(path, 1, "<file>", "not a case file in a known format"))
        else:
            problems.append(Problem(path, 1, "<path>", "no such file or directory"))
    return list(files.values())


def validate_paths(paths: Iterable[Path | str], summary: Summary | None = None) -> list[Problem]:
    """Validate the case files at ``paths`` (files or folders searched recursively).

    Returns every problem, errors and warnings, in file order; ``summary`` (if given)
    receives the number of files and of cases that loaded.
    """
    problems: list[Problem] = []
    first_seen: dict[str, tuple[Path, int]] = {}
    summary = summary if summary is not None else Summary()
    for path in _case_files(paths, problems):
        loaded = load_case_file(path)
        if loaded.not_cases is not None and not loaded.errors:
            problems.append(Problem(path, 1, "<file>", f"not a case file: {loaded.not_cases}"))
            continue
        summary.files += 1
        summary.cases += len(loaded.cases)
        problems.extend(Problem(e.path, e.line, e.field, e.message) for e in loaded.errors)
        if loaded.sidecar_error is not None:
            e = loaded.sidecar_error
            problems.append(Problem(e.path, e.line, e.field, e.message))
        nodes = _record_nodes(path) if not loaded.errors or loaded.cases else {}
        for line, case in loaded.cases:
            same_id = nodes.get(case.id, [])
            node = same_id.pop(0) if same_id else None
            start = node.start_mark.line + 1 if node else line
            problems.extend(check_case(case, path, start, node))
            if case.id in first_seen:
                where, at = first_seen[case.id]
                problems.append(Problem(path, start, "id", f"duplicate case id {case.id!r} "
                                        f"(first at {where}:{at})", case_id=case.id))
            else:
                first_seen[case.id] = (path, start)
    return problems
