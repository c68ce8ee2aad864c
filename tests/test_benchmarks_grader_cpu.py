"""``benchmarks/bench_grader_cpu.py``: the grader's CPU per answer, and each answer's reading
written out, to compare two checkouts line by line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_grader_cpu import grade_all
from pytest_agentclinic.grading.judging.rules import grade_text

ANSWERS: list[dict[str, Any]] = [
    {"set": "library", "text": "Final Diagnosis: Psoriasis", "accepted": ["Psoriasis"],
     "choices": [], "asked": None},
    {"set": "recorded", "text": "Eczema or psoriasis", "accepted": ["Psoriasis"],
     "choices": ["Psoriasis", "Eczema", "Lichen planus", "Tinea corporis"], "asked": True},
]


def test_each_reading_is_the_graders_full_decision_in_order(tmp_path: Path) -> None:
    answers, readings = tmp_path / "answers.jsonl", tmp_path / "readings.tsv"
    answers.write_text("".join(json.dumps(a) + "\n" for a in ANSWERS), encoding="utf-8")
    count, cpu = grade_all(answers, ["strict", "paper"], None, readings)
    assert count == 4 and cpu > 0
    lines = [json.loads(line) for line in readings.read_text(encoding="utf-8").splitlines()]
    expected = []
    for policy in ("strict", "paper"):
        for a in ANSWERS:
            extraction, decision = grade_text(a["text"], a["accepted"], a["choices"], policy,
                                              diagnosis_asked=a["asked"])
            expected.append([a["set"], policy, decision.correct, decision.sure,
                             decision.reason, extraction.category, extraction.label,
                             decision.relation])
    assert lines == expected
    assert [line[2] for line in lines] == [True, False, True, False]
