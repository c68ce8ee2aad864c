"""MediQ's case files (``all_craft_md.jsonl``, ``all_dev_good.jsonl``) as cases.

One JSON object a line: ``id``, ``question``, ``context`` (sentences; the first is what the
patient says first), ``options`` {A..D}, ``answer``, ``answer_idx``, ``facts`` (numbered
atomic facts), ``patient``. Everything MediQ needs is kept in ``Case.metadata``; the case's
``diagnosis`` is the right option's text and its ``choices`` the four options.

iCRAFT-MD cases carry the id of the CRAFT-MD vignette they were made from
(``metadata.craftmd_case_id``, and CRAFT-MD's specialty), matched by text when
``../craftmd/usmle_and_derm_dataset.csv`` lies beside the MediQ folder, as in the upstream
data layout: the first context sentence must start the vignette (or occur in it) and the
right answers must agree; a vignette matched by several cases, or a case by several
vignettes, is left without an id.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from pytest_agentclinic import api

LETTERS = ("A", "B", "C", "D")
#: Where CRAFT-MD's vignettes lie relative to a MediQ case file (the upstream layout).
CRAFTMD_CSV = Path("..") / "craftmd" / "usmle_and_derm_dataset.csv"
_DATASETS = {"all_craft_md": "icraft-md", "all_dev_good": "imedqa"}


def norm(text: str) -> str:
    """Lower-case words joined by single spaces (what text matching compares)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def read_mediq(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """The reader of :data:`SHAPE`: one case (or a CaseError) a line."""
    import json

    craftmd = _craftmd_index(str((path.parent / CRAFTMD_CSV).resolve()))
    for line, row in enumerate(text.splitlines(), 1):
        if not row.strip():
            continue
        try:
            record = json.loads(row)
            # The upstream files by name; another file by its records' shape (iMedQA's
            # records carry ``context_len``).
            dataset = _DATASETS.get(path.stem) or (
                "imedqa" if "context_len" in record else "icraft-md")
            yield line, _case(record, dataset, craftmd if dataset == "icraft-md" else {})
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            field = exc.args[0] if isinstance(exc, KeyError) else "<record>"
            yield line, api.CaseError(path, line, str(field), f"not a MediQ record: {exc}")


def _case(record: dict[str, Any], dataset: str,
          craftmd: dict[str, list[tuple[str, str, str, str]]]) -> dict[str, Any]:
    options = record["options"]
    if not isinstance(options, dict) or sorted(options) != list(LETTERS):
        raise ValueError(f"options must be A, B, C and D, got {sorted(options)}")
    letter = record["answer_idx"]
    if letter not in LETTERS:
        raise ValueError(f"answer_idx must be one of A-D, got {letter!r}")
    context = [str(s) for s in record["context"]]
    patient = record.get("patient") or {}
    metadata: dict[str, Any] = {
        "mediq_id": record["id"], "options": options, "answer_idx": letter,
        "context": context, "facts": [str(f) for f in record["facts"]]}
    specialty = str(patient.get("gpt_specialty") or "unspecified")
    match = _match(context, str(record["answer"]), craftmd)
    if match is not None:
        metadata["craftmd_case_id"], specialty = match
    demographics = ", ".join(str(patient[k]) for k in ("age", "gender")
                             if patient.get(k) and patient.get(k) != "study")
    # A record without context (3 of iMedQA's) runs as upstream's Patient runs it: no
    # initial information, and every question is one the patient cannot answer.
    return {"id": f"{dataset}-{int(record['id']):04d}", "dataset": dataset,
            "specialty": specialty, "objective": str(record["question"]),
            "question": str(record["question"]),
            "patient": {"demographics": demographics,
                        "history": context[0] if context else ""},
            "diagnosis": str(options[letter]), "choices": [options[k] for k in LETTERS],
            "vignette": " ".join(context), "metadata": metadata}


def _match(context: list[str], answer: str,
           craftmd: dict[str, list[tuple[str, str, str, str]]]) -> tuple[str, str] | None:
    if not context:
        return None
    first = norm(context[0])
    found = {(case_id, category) for vignette, right, case_id, category
             in craftmd.get(first[:40], ()) if right == norm(answer) and first in vignette}
    return found.pop() if len(found) == 1 else None


@cache
def _craftmd_index(csv_path: str) -> dict[str, list[tuple[str, str, str, str]]]:
    """CRAFT-MD's vignettes keyed by the first 40 characters of each sentence start."""
    path = Path(csv_path)
    if not path.is_file():
        return {}
    index: dict[str, list[tuple[str, str, str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            vignette = norm(row.get("case_vignette", ""))
            entry = (vignette, norm(row.get("answer", "")), row.get("case_id", ""),
                     row.get("category", "") or "unspecified")
            for sentence in re.split(r"(?<=[.!?])\s+", row.get("case_vignette", "")):
                index.setdefault(norm(sentence)[:40], []).append(entry)
    return index


#: MediQ's records, recognised in any ``.jsonl`` file by their keys.
SHAPE = api.JsonlShape("mediq", ("question", "context", "options", "answer_idx", "facts"),
                       read_mediq)
