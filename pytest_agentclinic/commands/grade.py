"""``agentclinic grade``: grade recorded CRAFT-MD answers with the offline grader.

Each input line (JSONL, optionally gzipped) holds ``correct_answer`` and ``response``, and
optionally ``choices`` (a list) and ``format`` (``mcq`` or ``frq``; MCQ when choices are
given). Each output line is the input line plus ``extracted``, ``category``
(single|multiple|none), ``verdict`` (1|0), ``decided_by``, ``reason`` and ``relation``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import AgentClinicError, InputError
from ..core.jsonl import json_lines, open_text

ChoiceTable = dict[str, list[str]]


class BadLine(InputError):
    """An input line that cannot be graded; the message names file, line and problem."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``grade``."""
    parser = subparsers.add_parser(
        "grade", help="grade recorded CRAFT-MD answers offline",
        description="Grade free-response (diagnosis extraction and equivalence) and "
                    "multiple-choice (option mapping) answers with the deterministic grader, "
                    "and write each input line with extracted, category, verdict, decided_by, "
                    "reason and relation added.")
    parser.add_argument("--input", required=True, type=Path, metavar="IN.jsonl[.gz]")
    parser.add_argument("--output", required=True, type=Path, metavar="OUT.jsonl[.gz]")
    parser.add_argument("--cases", type=Path, default=None, metavar="CSV",
                        help="case table with case_id and choice_1..choice_4 columns: gives "
                             "the choices of MCQ lines that carry a case_id but no choices")
    parser.add_argument("--verbatim-mcq", action="store_true",
                        help="score an MCQ reply right only when it also contains the correct "
                             "answer verbatim, as the published CRAFT-MD pipeline did")
    parser.add_argument("--policy", choices=("strict", "paper"), default="strict",
                        help="how broader answers are graded: strict (default: a broader name "
                             "counts when it names one disease with its variants) or paper "
                             "(CRAFT-MD's rule: a broader name the truth is a subtype of counts)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Grade every line of ``args.input`` into ``args.output``; 2 on a bad input."""
    from ..grading.judging.craftmd_grader import CraftMDGrader

    grader = CraftMDGrader(policy=getattr(args, "policy", "strict"))
    try:
        table = read_choice_table(args.cases) if args.cases else {}
        stats = _grade_file(grader, args.input, args.output, table, args.verbatim_mcq)
    except (AgentClinicError, OSError, UnicodeDecodeError) as exc:
        print(f"agentclinic grade: {exc}", file=sys.stderr)
        return 2
    print(_summary(stats), file=sys.stderr)
    if not any(k.endswith(":n") for k in stats):
        print(f"agentclinic grade: {args.input}: no lines to grade", file=sys.stderr)
        return 2
    return 0


def _grade_file(grader: Any, source: Path, target: Path, table: ChoiceTable,
                verbatim: bool) -> Counter[str]:
    stats: Counter[str] = Counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open_text(target, "wt") as out:
        for number, line in _read_lines(source):
            fmt, record = grade_record(grader, line, table, verbatim, where=f"{source}:{number}")
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            _count(stats, fmt, record)
    return stats


def grade_record(grader: Any, record: dict[str, Any], table: ChoiceTable, verbatim: bool,
                 where: str = "") -> tuple[str, dict[str, Any]]:
    """The format graded ("frq", "mcq", or "mcq-as-frq" for an MCQ line without its
    choices) and the input record with the grader's fields added.

    An ``extracted`` field already in the input (the recorded runs carry the paper's) is kept
    as ``recorded_extracted``.
    """
    for name in ("correct_answer", "response"):
        if not isinstance(record.get(name), str):
            raise BadLine(f"{where}: field {name!r}: missing or not text")
    choices = record.get("choices") or table.get(str(record.get("case_id", "")))
    if choices is not None and not (isinstance(choices, list)
                                    and all(isinstance(c, str) for c in choices)):
        raise BadLine(f"{where}: field 'choices': expected a list of texts")
    fmt = record.get("format") or ("mcq" if choices else "frq")
    if fmt not in ("mcq", "frq"):
        raise BadLine(f"{where}: field 'format': expected 'mcq' or 'frq', got {fmt!r}")
    if fmt == "mcq" and choices:
        verdict = grader.grade_mcq(record["response"], choices, record["correct_answer"],
                                   verbatim=verbatim)
    else:
        # An MCQ line without its choices can only be read as free text; the summary says
        # how many were, so the MCQ accuracy is not silently missing.
        fmt = "frq" if fmt == "frq" else "mcq-as-frq"
        verdict = grader.grade_frq(record["response"], record["correct_answer"], choices or ())
    kept = {"recorded_extracted": record["extracted"]} if "extracted" in record else {}
    return fmt, {**record, **kept, **verdict.record()}


def read_choice_table(path: Path) -> ChoiceTable:
    """case_id -> [choice_1, ..., choice_4] from a CRAFT-MD style case table."""
    from ..cases.craftmd_csv import choices, read_table

    table = read_table(path)
    if "case_id" not in table.columns or not any(c.startswith("choice_") for c in table.columns):
        raise BadLine(f"{path}:1: the header needs case_id and choice_1..choice_4 columns, "
                      f"found {table.columns}")
    return {row["case_id"]: list(choices(row)) for _, row in table.rows
            if row.get("case_id") and choices(row)}


def _read_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for line in json_lines(path):
        if line.error:
            raise BadLine(f"{path}:{line.number}: {line.error}")
        if not isinstance(line.value, dict):
            raise BadLine(f"{path}:{line.number}: expected a JSON object")
        yield line.number, line.value


def _count(stats: Counter[str], fmt: str, record: dict[str, Any]) -> None:
    stats[f"{fmt}:n"] += 1
    stats[f"{fmt}:correct"] += record["verdict"]
    reference = record.get("grader_verdict")
    if reference in (0, 1):
        stats[f"{fmt}:ref"] += 1
        stats[f"{fmt}:agree"] += int(reference == record["verdict"])


def _summary(stats: Counter[str]) -> str:
    parts = []
    for fmt in ("frq", "mcq", "mcq-as-frq"):
        n = stats[f"{fmt}:n"]
        if not n:
            continue
        text = f"{fmt}: {n} graded, accuracy {stats[f'{fmt}:correct'] / n:.3f}"
        if fmt == "mcq-as-frq":
            text += (" (MCQ lines without choices, read as free text: give --cases CSV "
                     "to map them to their options)")
        if stats[f"{fmt}:ref"]:
            text += (f", agreement with the recorded grader "
                     f"{stats[f'{fmt}:agree'] / stats[f'{fmt}:ref']:.3f}")
        parts.append(text)
    return "; ".join(parts) or "no lines graded"
