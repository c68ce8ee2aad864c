"""Turn CRAFT-MD's recorded answers into a run directory the reports can read.

The CRAFT-MD repository publishes every answer its clinical LLMs gave: one gzipped JSONL line
per (case_id, trial 0-4, experiment, format), with the GPT-4 grader's extracted diagnosis and
verdict on free-response (FRQ) lines. Each FRQ line becomes one :class:`ResultRecord`
(``sample`` = trial) whose outcome is the recorded verdict, so the project's statistics and
comparisons run on the paper's own data without replaying any encounter.

Accuracy rule, checked against the paper's Supplementary Table 4 (all eight FRQ numbers agree
to 3 decimals): the pooled mean of ``grader_verdict`` over every recorded line of the
experiment, i.e. every case x trial present in the file. Lines the file lacks (e.g. 15 GPT-4
summarized lines) are simply absent; extractions "none" and "multiple" count as wrong because
the grader scored them 0; nothing else is excluded.

MCQ lines carry no verdict. They are left out unless asked for; then the shared grader maps
each reply to the option it chose, with the paper's verbatim rule (:func:`grade_mcq`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cases.craftmd_csv import CaseInfo, case_table
from ..core.heap import gc_paused
from ..core.jsonl import json_lines
from ..core.records import ResultRecord
from ..core.transcript import Transcript, Verdict
from ..grading.judging.craftmd_grader import CraftMDGrader
from ..protocols.craftmd_tables import craftmd_table
from ..report.rundir import write_reports_text
from ..report.tables import overview
from ..runs.results import write_results
from ..runs.summary import build_summary, sha256_of

#: Bootstrap resamples of the tables written at import (the report command uses 10,000).
IMPORT_RESAMPLES = 2_000

GRADER = "gpt-4 grader (recorded)"
MCQ_GRADER = "offline option mapping (verbatim rule)"
DEFAULT_CSV = "usmle_and_derm_dataset.csv"
_REQUIRED = ("model", "case_id", "trial", "experiment", "format", "correct_answer", "response")


@dataclass
class ImportResult:
    """What an import wrote and what it had to skip (one message per skipped line)."""

    run_dir: Path
    records: list[ResultRecord]
    skipped: list[str] = field(default_factory=list)
    mcq_lines: int = 0
    unknown_cases: int = 0


def read_case_table(path: str | Path) -> dict[str, CaseInfo]:
    """Specialty (``category``), dataset and answer choices per ``case_id``."""
    return case_table(Path(path))


def read_recorded(path: Path, skipped: list[str]) -> Iterator[dict[str, Any]]:
    """The file's valid lines; each invalid one adds ``file:line: reason`` to ``skipped``."""
    # Recorded files ship gzipped; a plain JSONL (e.g. a test excerpt) works too.
    for line in json_lines(path):
        problem = line.error or _line_problem(line.value)
        if problem:
            skipped.append(f"{path}:{line.number}: {problem}")
            continue
        yield line.value


def _line_problem(line: Any) -> str | None:
    if not isinstance(line, dict):
        return "not a JSON object"
    missing = [k for k in _REQUIRED if line.get(k) is None]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    if line["format"] == "frq" and line.get("grader_verdict") not in (0, 1):
        return f"FRQ line without a 0/1 grader_verdict ({line.get('grader_verdict')!r})"
    return None


# --- MCQ grading ----------------------------------------------------------------------------

def grade_mcq(response: str, correct: str, choices: Sequence[str]) -> tuple[str | None, bool]:
    """(given option, correct?) for one MCQ answer, by the shared grader's option mapping with
    the paper's verbatim rule (the correct answer's text must appear in the reply)."""
    if not choices:
        return None, False  # the case is missing from the CSV: nothing to map the reply to
    verdict = CraftMDGrader().grade_mcq(response, choices, correct, verbatim=True)
    return (None if verdict.category == "none" else verdict.extracted), bool(verdict.verdict)


# --- records ---------------------------------------------------------------------------------

def to_record(line: dict[str, Any], case: CaseInfo, *, run: str,
              source: Path) -> ResultRecord:
    """The result record of one recorded FRQ or MCQ line."""
    fmt = str(line["format"])
    if fmt == "frq":
        given, correct, judge = line.get("extracted"), line["grader_verdict"] == 1, GRADER
    else:
        given, correct = grade_mcq(str(line["response"]), str(line["correct_answer"]),
                                   case.choices)
        judge = MCQ_GRADER
    model = str(line["model"])
    # A transcript of what the recorded line holds (no dialogue: the paper did not publish
    # it), so the record comes from the one builder every run uses.
    t = Transcript(
        protocol="craftmd", case_id=str(line["case_id"]), dataset=case.dataset,
        specialty=case.specialty, sample=int(line["trial"]),
        models={"doctor": model, "patient": model, "measurement": "none", "moderator": GRADER},
        turn_budget=0, experiment=str(line["experiment"]), answer_format=fmt,
        diagnosis=None if given is None else str(given),
        verdict=Verdict(correct=bool(correct), decided_by=judge),
        outcome="correct" if correct else "incorrect")
    return ResultRecord.from_transcript(
        t, run=run, expected=str(line["correct_answer"]), transcript_path=None,
        nodeid=f"{source.name}::{line['case_id']}[{line['experiment']}-{fmt}-t{line['trial']}]",
        case_file=str(source))


def convert(lines: Sequence[dict[str, Any]], cases: dict[str, CaseInfo], *, run: str,
            source: Path, include_mcq: bool, result: ImportResult) -> None:
    """Append the records of ``lines`` to ``result``; duplicates of an item are skipped."""
    unknown = CaseInfo(specialty="unspecified", dataset="craftmd")
    seen: set[tuple[Any, ...]] = set()
    for line in lines:
        if line["format"] != "frq":
            result.mcq_lines += 1
            if not include_mcq:
                continue
        key = (line["case_id"], line["trial"], line["experiment"], line["format"])
        if key in seen:
            result.skipped.append(f"{source}: duplicate line for {key}")
            continue
        seen.add(key)
        case = cases.get(str(line["case_id"]))
        result.unknown_cases += case is None
        result.records.append(to_record(line, case or unknown, run=run, source=source))


def craftmd_summary(result: ImportResult, files: Sequence[Path]) -> dict[str, Any]:
    """``summary.json`` (:func:`..runs.summary.build_summary`, the one builder), plus where
    it came from."""
    records = result.records
    header = {
        "run": result.run_dir.name,
        "protocol": "craftmd",
        "source": "recorded CRAFT-MD answers (imported, no encounter replayed)",
        "roles": dict(records[0].models) if records else {},
        "turn_budgets": [0],
        "repeat": len({r.sample for r in records}),
        "cache_mode": "none",
        "temperature": None,
        "mcq_lines": result.mcq_lines,
        "unknown_cases": result.unknown_cases,
    }
    return build_summary(header, records, len(result.skipped),
                         case_files={str(f): sha256_of(str(f)) for f in files})


def import_craftmd(path: str | Path, out: str | Path | None = None,
                   dataset_csv: str | Path | None = None,
                   include_mcq: bool = False) -> ImportResult:
    """Write ``results.jsonl`` and ``summary.json`` for a recorded CRAFT-MD file.

    ``out`` defaults to ``reports/craftmd-<model>``; ``dataset_csv`` to the dataset CSV
    beside the recorded file (without one, specialties are ``unspecified``).
    """
    source = Path(path)
    skipped: list[str] = []
    with gc_paused():
        lines = list(read_recorded(source, skipped))
    csv_path = Path(dataset_csv) if dataset_csv else source.with_name(DEFAULT_CSV)
    if dataset_csv and not csv_path.is_file():
        raise FileNotFoundError(f"dataset CSV not found: {csv_path}")
    cases = read_case_table(csv_path) if csv_path.is_file() else {}
    model = str(lines[0]["model"]) if lines else "unknown"
    run_dir = Path(out) if out else Path("reports") / f"craftmd-{model}"
    result = ImportResult(run_dir=run_dir, records=[], skipped=skipped)
    with gc_paused():
        convert(lines, cases, run=run_dir.name, source=source, include_mcq=include_mcq,
                result=result)
    write_import(result, [source, *([csv_path] if cases else [])])
    return result


def write_import(result: ImportResult, files: Sequence[Path]) -> None:
    """Write the run directory of an import."""
    write_results(result.run_dir, result.records)
    # The headline tables only; `agentclinic report` renders everything (and the HTML).
    tables = [overview(result.records, IMPORT_RESAMPLES),
              craftmd_table(result.records, IMPORT_RESAMPLES)]
    write_reports_text(result.run_dir, craftmd_summary(result, files), tables)
