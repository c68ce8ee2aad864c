"""Measure the offline grader against CRAFT-MD's recorded runs (the benchmark and the tests).

The recorded files hold one line per (case, trial, experiment, format) with the clinical
model's raw ``response``; free-response lines also carry the paper's GPT-4 grader verdict.
MCQ lines carry no choices: they are joined from the case table on ``case_id``.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentclinic.cases.craftmd_csv import read_table
from pytest_agentclinic.core.jsonl import json_lines
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader, Graded
from pytest_agentclinic.grading.terms.equivalence import judge

EXPERIMENTS = ("vignette", "multiturn", "singleturn", "summarized")
#: Table 1 of the CRAFT-MD paper: four-choice MCQ accuracy per experiment.
PAPER_MCQ = {
    "gpt4": {"vignette": 0.820, "multiturn": 0.627, "singleturn": 0.520, "summarized": 0.669},
    "gpt3": {"vignette": 0.657, "multiturn": 0.467, "singleturn": 0.435, "summarized": 0.507},
}
RECORDED = {"gpt4": "recorded_gpt4_1106.jsonl.gz", "gpt3": "recorded_gpt3_1106.jsonl.gz"}
CASES = "usmle_and_derm_dataset.csv"


@dataclass
class Case:
    """The case-table fields the evaluation needs."""

    choices: list[str]
    specialty: str


def load_cases(path: Path) -> dict[str, Case]:
    """case_id -> choices and specialty, from ``usmle_and_derm_dataset.csv``."""
    return {row["case_id"]: Case([row.get(f"choice_{i}", "") for i in range(1, 5)],
                                 row["category"])
            for _, row in read_table(path).rows}


def load_recorded(path: Path) -> list[dict[str, Any]]:
    """Every line of a recorded run."""
    return [line.value for line in json_lines(path)]


@dataclass
class Agreement:
    """A 2x2 table of (ours, reference) verdicts."""

    table: Counter[tuple[int, int]] = field(default_factory=Counter)

    def add(self, ours: int, reference: int) -> None:
        """Count one answer."""
        self.table[(ours, reference)] += 1

    @property
    def n(self) -> int:
        """Answers counted."""
        return sum(self.table.values())

    @property
    def rate(self) -> float:
        """Share of answers with the same verdict."""
        return (self.table[(0, 0)] + self.table[(1, 1)]) / self.n if self.n else 0.0

    @property
    def kappa(self) -> float:
        """Cohen's kappa of the two graders."""
        n = self.n
        if not n:
            return 0.0
        ours = (self.table[(1, 0)] + self.table[(1, 1)]) / n
        ref = (self.table[(0, 1)] + self.table[(1, 1)]) / n
        chance = ours * ref + (1 - ours) * (1 - ref)
        return (self.rate - chance) / (1 - chance) if chance < 1 else 1.0


@dataclass
class Report:
    """Everything measured on one recorded run."""

    model: str
    frq: Agreement = field(default_factory=Agreement)
    #: Step 2 alone: our equivalence judged on the reference's own extraction.
    frq_step2: Agreement = field(default_factory=Agreement)
    by_experiment: dict[str, Agreement] = field(default_factory=lambda: defaultdict(Agreement))
    by_specialty: dict[str, Agreement] = field(default_factory=lambda: defaultdict(Agreement))
    disagreements: Counter[tuple[str, str, str, int]] = field(default_factory=Counter)
    #: Step 1 alone: (our category, the reference's) of every answer: single, multiple, none.
    step1: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Disagreements by their kind (see :func:`disagreement_kind`).
    anatomy: Counter[str] = field(default_factory=Counter)
    #: Answers whose name our rules read as the truth's own ("same"), by (dermatology
    #: case, the reference read "None").
    exact_none: Counter[tuple[bool, bool]] = field(default_factory=Counter)
    mcq: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    mcq_verbatim: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    decided_by: Counter[str] = field(default_factory=Counter)
    answers: int = 0
    seconds: float = 0.0

    def mcq_accuracy(self, verbatim: bool = False) -> dict[str, float]:
        """MCQ accuracy per experiment."""
        table = self.mcq_verbatim if verbatim else self.mcq
        return {e: sum(table[e]) / len(table[e]) for e in EXPERIMENTS if table.get(e)}


def evaluate(model: str, lines: Sequence[dict[str, Any]], cases: dict[str, Case],
             grader: CraftMDGrader | None = None) -> Report:
    """Grade every recorded answer and compare with the recorded verdicts."""
    grader = grader or CraftMDGrader()
    report = Report(model)
    start = time.perf_counter()
    for line in lines:
        case = cases.get(line["case_id"])
        if line["format"] == "mcq" and case is not None:
            _grade_mcq(grader, report, line, case)
        elif line["format"] == "frq":
            _grade_frq(grader, report, line, case)
    report.seconds = time.perf_counter() - start
    # Outside the timing: a measurement of the grader, not part of grading.
    for line in lines:
        if line["format"] == "frq":
            report.frq_step2.add(_step2_on_reference(line), int(line["grader_verdict"]))
    return report


def _grade_frq(grader: CraftMDGrader, report: Report, line: dict[str, Any],
               case: Case | None) -> None:
    verdict = grader.grade_frq(line["response"], line["correct_answer"],
                               case.choices if case else ())
    reference = int(line["grader_verdict"])
    report.answers += 1
    report.decided_by[verdict.decided_by] += 1
    report.frq.add(verdict.verdict, reference)
    report.step1[(verdict.category, reference_category(str(line.get("extracted", ""))))] += 1
    report.by_experiment[line["experiment"]].add(verdict.verdict, reference)
    report.by_specialty[case.specialty if case else "unknown"].add(verdict.verdict, reference)
    if verdict.relation == "same":
        report.exact_none[(bool(case and case.specialty == "Dermatology"),
                           str(line.get("extracted", "")).strip().lower() == "none")] += 1
    if verdict.verdict != reference:
        report.disagreements[_pattern(verdict, line)] += 1
        report.anatomy[disagreement_kind(verdict, str(line.get("extracted", "")))] += 1


#: The kinds of disagreement, in the order the benchmark prints them. The first three are
#: verdicts of the reference that the paper's own rules contradict, so no grader following
#: those rules can match them.
KINDS = {
    "reference_none": "reference extracted 'None' from an answer naming the truth",
    "reference_broader": "reference rejected a broader answer (the paper's rule accepts it)",
    "reference_narrower": "reference accepted a more specific answer (the rule rejects it)",
    "reference_same": "reference rejected a name that differs only by a qualifier",
    "knowledge": "reference accepted a synonym or clinical link the rules do not know",
    "extraction": "we read multiple or no diagnoses where the reference read one",
    "family": "reference accepted a family above the truth (the strict policy rejects it)",
    "main_only": "reference accepted the truth named beside another disease (we read several)",
    "other": "other",
}


#: Kinds where the reference contradicts the paper's stated rules (or reads no diagnosis in
#: a bare correct name): what bounds the agreement any rule-following grader can reach.
REFERENCE_SLIPS = ("reference_none", "reference_broader", "reference_narrower")


def disagreement_kind(verdict: Graded, reference_extraction: str) -> str:
    """Which of :data:`KINDS` a disagreement with the reference is."""
    if verdict.verdict == 1:  # the reference said 0
        if reference_extraction.strip().lower() == "none":
            return "reference_none"
        return {"broader": "reference_broader", "same": "reference_same",
                "synonym": "reference_same"}.get(verdict.relation or "", "other")
    if verdict.category != "single":
        return "extraction"
    if verdict.relation == "narrower":
        return "reference_narrower"
    if verdict.relation == "broader":
        return "family"
    if "another disease beside" in verdict.reason or "secondary role" in verdict.reason:
        return "main_only"
    known = ("different", "related", "sibling", "qualifier-flip")
    return "knowledge" if verdict.relation in known else "other"


def _step2_on_reference(line: dict[str, Any]) -> int:
    extracted = str(line.get("extracted", "")).strip()
    if extracted.lower() in ("", "none", "multiple"):
        return 0
    return int(judge(extracted, line["correct_answer"]).correct)


def _pattern(verdict: Graded, line: dict[str, Any]) -> tuple[str, str, str, int]:
    # (our extraction, the paper's extraction, the correct answer, the paper's verdict)
    return (verdict.extracted.lower(), str(line.get("extracted", "")),
            line["correct_answer"].strip(), int(line["grader_verdict"]))


def _grade_mcq(grader: CraftMDGrader, report: Report, line: dict[str, Any], case: Case) -> None:
    plain = grader.grade_mcq(line["response"], case.choices, line["correct_answer"])
    strict = grader.grade_mcq(line["response"], case.choices, line["correct_answer"],
                              verbatim=True)
    report.answers += 1
    report.decided_by[plain.decided_by] += 1
    report.mcq[line["experiment"]].append(plain.verdict)
    report.mcq_verbatim[line["experiment"]].append(strict.verdict)


def reference_category(extracted: str) -> str:
    """The category the reference's step 1 gave: its "None", its "Multiple", or a name."""
    word = extracted.strip().strip(".").lower()
    return word if word in ("none", "multiple") else "single"


def evaluate_shared(datasets: Path, models: Iterable[str] = ("gpt4", "gpt3"),
                    grader: CraftMDGrader | None = None) -> dict[str, Report]:
    """Evaluate the recorded runs found under ``datasets/craftmd``."""
    folder = datasets / "craftmd"
    cases = load_cases(folder / CASES)
    return {m: evaluate(m, load_recorded(folder / RECORDED[m]), cases, grader) for m in models}


def pooled(reports: Iterable[Report], step2: bool = False) -> Agreement:
    """The free-response agreement of several runs together (of step 2 alone if asked)."""
    total = Agreement()
    for report in reports:
        total.table.update((report.frq_step2 if step2 else report.frq).table)
    return total
