"""``benchmarks/bench_styles.py``: the recorded answers rewritten in other models' styles; a
style that changes a verdict is counted, with its example."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_styles import STYLES, changes, restyle
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader


@dataclass
class _Verdict:
    verdict: bool


class _ReadsOnlyBareNames:
    """A grader that scores an answer only when it is the truth as written."""

    policy = "strict"

    def grade_frq(self, answer: str, truth: str) -> _Verdict:
        return _Verdict(answer == truth)


def test_every_style_that_changes_a_verdict_is_counted_with_its_example() -> None:
    grader = _ReadsOnlyBareNames()
    changed, examples = changes([("Psoriasis", "Psoriasis")], grader)  # type: ignore[arg-type]
    restyled = {n for n, s in STYLES.items() if restyle(s, "Psoriasis") != "Psoriasis"}
    assert set(changed) == restyled
    assert all(examples[n] == ["1 -> 0: 'Psoriasis' | 'Psoriasis'"] for n in changed)


def test_the_grader_reads_every_style_as_the_bare_name() -> None:
    answers = [("Psoriasis", "Psoriasis"), ("Granulomatosis with polyangiitis",
                                            "Granulomatosis with polyangiitis"),
               ("Prostatitis", "Chronic bacterial prostatitis"), ("Eczema", "Psoriasis")]
    for policy in ("strict", "paper"):
        changed, examples = changes(answers, CraftMDGrader(policy=policy))
        assert not changed, examples
