"""Answers phrased as other doctor models phrase them are read as the diagnosis they state:
every entry of fixtures/answer_styles.yaml, through the pipeline both protocols use."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import make_case

from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.reading.extract import extract

FIXTURE = yaml.safe_load((Path(__file__).parent / "fixtures" / "answer_styles.yaml")
                         .read_text(encoding="utf-8"))
ANSWERS: list[dict[str, Any]] = FIXTURE["answers"]


def _id(entry: dict[str, Any]) -> str:
    return " ".join(str(entry["answer"]).split())[:48]


@pytest.mark.parametrize("entry", ANSWERS, ids=[_id(e) for e in ANSWERS])
def test_answer_is_read_as_stated(entry: dict[str, Any]) -> None:
    found = extract(entry["answer"])
    assert found.category == entry["category"], found.reason
    if entry["category"] == "single":
        assert found.diagnosis == entry["diagnosis"]


@pytest.mark.parametrize("protocol", ["craftmd", "agentclinic"])
@pytest.mark.parametrize("entry", ANSWERS, ids=[_id(e) for e in ANSWERS])
def test_both_protocols_grade_it_alike(entry: dict[str, Any], protocol: str) -> None:
    case = Case.model_validate({**make_case(1, diagnosis=FIXTURE["truth"]), "dataset": "t"})
    answer = entry["answer"] if protocol == "craftmd" else f"DIAGNOSIS READY: {entry['answer']}"
    grade = asyncio.run(grade_answer(answer, case, OfflineModerator(), 0))
    assert grade.category == entry["category"]
    assert grade.verdict.correct is (entry["category"] == "single")
    assert grade.outcome == {"single": "correct", "multiple": "incorrect",
                             "none": "no_diagnosis"}[entry["category"]]
