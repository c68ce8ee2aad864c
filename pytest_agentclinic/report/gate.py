"""The CI gate: whether a run may pass, decided from its result records.

The rule (stated in the README and docs/ci.md):

* any item that ended in an infrastructure error fails the gate (the measurement is
  incomplete, and errors are not counted as wrong diagnoses);
* the other checks run per *cell*: each doctor model under each condition the run varies
  (see :mod:`.conditions` and ``--agent-gate-on``);
* ``--agent-min-accuracy X``: a cell's accuracy must be >= X;
* ``--agent-baseline RUN --agent-max-drop D``: a cell fails when its accuracy is lower than
  the baseline's by more than D **and** the drop is significant at ``--agent-gate-alpha``.
  The evidence is counted in *cases*, never in repeats: with the baseline's results.jsonl,
  each case's mean correctness is paired between the runs (per condition, over whatever
  repeats each run has) and a one-sided sign-flip permutation test over cases decides
  (exact up to 16 differing cases); with only a summary.json, the same test of this run's
  case means against the baseline's accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.lazy import numpy as np  # imported on first use (core/lazy.py says why)
from ..core.records import ResultRecord
from .clustered import cluster_wilson, sign_flip_pvalues
from .comparison import unpaired_reasons
from .conditions import Cell, gate_cells
from .reducers import reduce
from .statistics import per_case


@dataclass(frozen=True)
class GateSettings:
    """The CI gate; inactive when neither a minimum accuracy nor a baseline is given."""

    min_accuracy: float | None = None
    baseline: Path | None = None
    max_drop: float = 0.0
    alpha: float = 0.05
    #: ``--agent-gate-on`` values (see :mod:`.report.conditions`).
    on: tuple[str, ...] = ("default",)
    #: Which reducer over a case's trials the minimum accuracy applies to (see
    #: :mod:`.reducers`); ``mean`` is the item accuracy.
    reducer: str = "mean"
    #: What the run covers when it is a subset of the selected cases (``--agent-limit``,
    #: ``--agent-sample``), e.g. "a stratified sample of 10 cases (seed 1)"; None: all.
    subset: str | None = None
    #: Whether a subset may pass the gate (``--agent-gate-allow-subset``).
    allow_subset: bool = False

    @property
    def active(self) -> bool:
        """Whether a gate decides the exit status."""
        return self.min_accuracy is not None or self.baseline is not None


@dataclass(frozen=True)
class GateCheck:
    """The verdict on one cell (or on the run's errors), with the lines saying why."""

    name: str
    passed: bool
    lines: tuple[str, ...]
    #: The numbers behind the lines, for summary.json.
    data: dict[str, Any]


@dataclass(frozen=True)
class GateResult:
    """The verdict and one check per gated cell."""

    passed: bool
    checks: tuple[GateCheck, ...]

    @property
    def lines(self) -> tuple[str, ...]:
        """Every check's lines, in order."""
        return tuple(line for c in self.checks for line in c.lines)

    def with_bad_records(self, count: int) -> GateResult:
        """The result with a failed check for ``count`` unreadable case records."""
        check = GateCheck("bad case records", False, (
            f"{count} bad case record(s): FAIL, cases could not be read",), {"bad": count})
        return GateResult(False, (*self.checks, check))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for summary.json."""
        return {"passed": self.passed, "verdict": "PASSED" if self.passed else "FAILED",
                "checks": [{"name": c.name, "passed": c.passed, "lines": list(c.lines),
                            **c.data} for c in self.checks]}


# --- the checks ----------------------------------------------------------------------------

def _reduced_line(cell: Cell, minimum: float, reducer: str
                  ) -> tuple[bool, str, dict[str, Any]]:
    figure = reduce(cell.records, reducer)
    if figure is None:
        return False, f"{cell.label}: no judged items: FAIL, nothing to measure", {"n": 0}
    ok = figure.value >= minimum
    name = f"pass@{figure.k}" if reducer == "pass@k" else f"{reducer} (k={figure.k})"
    return ok, (f"{cell.label}: {name} {figure.value:.3f} ({figure.cases} cases, 95% CI "
                f"{figure.ci[0]:.3f}-{figure.ci[1]:.3f}) {'>=' if ok else '<'} minimum "
                f"{minimum:.3f}: {'pass' if ok else 'FAIL'}"), {
        "reducer": reducer, "k": figure.k, "accuracy": figure.value, "cases": figure.cases,
        "ci": list(figure.ci), "minimum": minimum}


def _accuracy_line(cell: Cell, minimum: float, reducer: str = "mean"
                   ) -> tuple[bool, str, dict[str, Any]]:
    if reducer != "mean":
        return _reduced_line(cell, minimum, reducer)
    judged = [r for r in cell.records if r.outcome != "error"]
    errors = len(cell.records) - len(judged)
    if not judged:
        return False, (f"{cell.label}: no judged items ({errors} errors): FAIL, "
                       "nothing to measure"), {"n": 0, "errors": errors}
    correct = np.fromiter((r.outcome == "correct" for r in judged), np.float64, len(judged))
    sums, counts = per_case([r.case_id for r in judged], correct)
    low, high = cluster_wilson(sums, counts)
    accuracy = float(correct.mean())
    ok = accuracy >= minimum
    return ok, (f"{cell.label}: accuracy {accuracy:.3f} ({int(correct.sum())}/{len(judged)}, "
                f"{len(sums)} cases, 95% CI {low:.3f}-{high:.3f}) "
                f"{'>=' if ok else '<'} minimum {minimum:.3f}: {'pass' if ok else 'FAIL'}"), {
        "accuracy": accuracy, "n": len(judged), "cases": len(sums), "ci": [low, high],
        "minimum": minimum}


def _units(records: Sequence[ResultRecord]) -> dict[tuple[Any, ...], float]:
    """Mean correctness per (case, condition): the repeats of one case collapse to one."""
    sums: dict[tuple[Any, ...], list[float]] = {}
    for r in records:
        if r.outcome == "error":
            continue
        key = (r.dataset, r.case_id, r.models.get("patient"), r.bias, r.turn_budget,
               r.experiment, r.answer_format)
        entry = sums.setdefault(key, [0.0, 0.0])
        entry[0] += r.outcome == "correct"
        entry[1] += 1
    return {k: s / n for k, (s, n) in sums.items()}


def _by_case(values: dict[tuple[Any, ...], float]) -> dict[tuple[Any, ...], float]:
    """Average the (case, condition) values of each case: one number per case."""
    grouped: dict[tuple[Any, ...], list[float]] = {}
    for key, v in values.items():
        grouped.setdefault(key[:2], []).append(v)
    return {k: sum(v) / len(v) for k, v in grouped.items()}


def paired_drop(current: Sequence[ResultRecord], baseline: Sequence[ResultRecord],
                ) -> tuple[float, float, float, int, int, int] | None:
    """``(before, after, p, cases, lost, gained)`` of the case-level paired drop test.

    Cases pair when they have judged items under the same condition in both runs; ``lost``
    and ``gained`` count the cases whose mean correctness went down or up. None when
    nothing pairs.
    """
    now, then = _units(current), _units(baseline)
    common = now.keys() & then.keys()
    if not common:
        return None
    after = _by_case({k: now[k] for k in common})
    before = _by_case({k: then[k] for k in common})
    diffs = np.array([after[k] - before[k] for k in sorted(after)])
    p = float(sign_flip_pvalues(diffs[None, :])[0])
    return (float(np.mean(list(before.values()))), float(np.mean(list(after.values()))), p,
            len(diffs), int((diffs < -1e-12).sum()), int((diffs > 1e-12).sum()))


def _paired_check(cell: Cell, baseline: Sequence[ResultRecord],
                  gate: GateSettings) -> tuple[bool, str, dict[str, Any]]:
    result = paired_drop(cell.records, baseline)
    if result is None:
        why = "; ".join(line.split("; to pair")[0] for line in unpaired_reasons(
            baseline, cell.records, ("bias", "turn_budget", "experiment", "answer_format",
                                     "patient"))
                        if not line.startswith("samples"))
        return False, (f"{cell.label}: no case of the baseline pairs with this cell under the "
                       f"same condition ({why or 'the baseline has no items of this doctor'}; "
                       "A is the baseline, B this run): FAIL"), {}
    before, after, p, cases, lost, gained = result
    return _drop_verdict(cell.label, before, after, p, gate,
                         f"{cases} paired cases, {lost} lost / {gained} gained, "
                         f"one-sided sign-flip test over cases p={p:.3g}")


def _summary_check(cell: Cell, summary: Mapping[str, Any],
                   gate: GateSettings) -> tuple[bool, str, dict[str, Any]]:
    before = _summary_accuracy(summary, cell)
    if before is None:
        return False, (f"{cell.label}: the baseline summary has no accuracy for this doctor "
                       "model and condition: FAIL"), {}
    case_means = _by_case(_units(cell.records))
    if not case_means:
        return False, f"{cell.label}: no judged items to compare with the baseline: FAIL", {}
    values = np.array(list(case_means.values()))
    p = float(sign_flip_pvalues((values - before)[None, :])[0])
    return _drop_verdict(cell.label, before, float(values.mean()), p, gate,
                         f"{len(values)} cases against the baseline summary's accuracy, "
                         f"one-sided sign-flip test over cases p={p:.3g}")


def _summary_accuracy(summary: Mapping[str, Any], cell: Cell) -> float | None:
    rows = [r for r in summary.get("conditions", []) if isinstance(r, dict)]
    doctors = {r.get("doctor") for r in rows}
    doctor = cell.doctor if cell.doctor in doctors else (
        next(iter(doctors)) if len(doctors) == 1 else None)
    for row in rows:
        if (row.get("doctor") == doctor and row.get("condition") == cell.condition
                and not cell.pooled and row.get("accuracy") is not None):
            return float(row["accuracy"])
    by_doctor = summary.get("by_doctor")
    if not cell.condition and not cell.pooled and isinstance(by_doctor, dict):
        mine = by_doctor.get(cell.doctor) or (
            next(iter(by_doctor.values())) if len(by_doctor) == 1 else None)
        if isinstance(mine, dict) and mine.get("accuracy") is not None:
            return float(mine["accuracy"])
    return None


def _drop_verdict(label: str, before: float, after: float, p: float, gate: GateSettings,
                  detail: str) -> tuple[bool, str, dict[str, Any]]:
    drop = before - after
    failed = drop > gate.max_drop and p < gate.alpha
    why = ("drop larger than allowed and significant" if failed else
           "drop within the allowed margin" if drop <= gate.max_drop else
           f"drop not significant at alpha={gate.alpha}")
    return (not failed, f"{label}: baseline {before:.3f} -> {after:.3f} (drop {drop:+.3f}, "
            f"max {gate.max_drop:.3f}; {detail}): {'FAIL' if failed else 'pass'}, {why}",
            {"baseline_accuracy": before, "accuracy_now": after, "drop": drop,
             "max_drop": gate.max_drop, "p": p, "alpha": gate.alpha,
             "test": "one-sided sign-flip permutation over cases"})


# --- the gate ------------------------------------------------------------------------------

def _same_doctor(baseline: Sequence[ResultRecord], doctor: str) -> list[ResultRecord]:
    """The baseline items to pair with ``doctor``: its own, or those of the baseline's only
    doctor model (a new model version is compared against the previous one)."""
    mine = [r for r in baseline if r.doctor == doctor]
    return mine or (list(baseline) if len({r.doctor for r in baseline}) == 1 else [])


def _check_cell(cell: Cell, gate: GateSettings, baseline: Sequence[ResultRecord],
                summary: Mapping[str, Any]) -> GateCheck:
    passed, lines, data = True, [], {"doctor": cell.doctor, "condition": cell.condition,
                                     "pooled_over": cell.pooled}
    if gate.min_accuracy is not None:
        ok, line, numbers = _accuracy_line(cell, gate.min_accuracy, gate.reducer)
        passed &= ok
        lines.append(line)
        data["min_accuracy_check"] = numbers
    if gate.baseline is not None:
        ok, line, numbers = (_paired_check(cell, _same_doctor(baseline, cell.doctor), gate)
                             if baseline else _summary_check(cell, summary, gate))
        passed &= ok
        lines.append(line)
        data["drop_check"] = numbers
    return GateCheck(cell.label, passed, tuple(lines), data)


def evaluate(gate: GateSettings, records: Sequence[ResultRecord],
             baseline: tuple[Sequence[ResultRecord], Mapping[str, Any]] = ((), {}),
             baseline_error: str | None = None) -> GateResult:
    """Apply every configured check to each gated cell.

    ``baseline`` is the baseline run's records (empty when only its summary is compared) and
    summary, as the run directory's reader gives them; ``baseline_error`` says why it could
    not be read (the drop checks are then replaced by one failed check saying so).
    """
    checks: list[GateCheck] = []
    errors = sum(r.outcome == "error" for r in records)
    if errors:
        checks.append(GateCheck("infrastructure errors", False, (
            f"{errors} item(s) ended in infrastructure errors: FAIL, the measurement is "
            "incomplete",), {"errors": errors}))
    if gate.subset is not None:
        checks.append(GateCheck("subset", gate.allow_subset, (
            f"the run covers {gate.subset}: "
            + ("allowed by --agent-gate-allow-subset" if gate.allow_subset else
               "FAIL, a release is not gated on a subset (--agent-gate-allow-subset allows "
               "it)"),), {"subset": gate.subset}))
    base_records, summary = baseline
    if gate.baseline is not None and baseline_error is not None:
        checks.append(GateCheck("baseline", False, (
            f"the baseline cannot be read: {baseline_error}: FAIL",), {}))
        gate = replace(gate, baseline=None)
    cells = gate_cells(records, gate.on)
    if not cells:
        checks.append(GateCheck("no gated items", False, (
            f"no item matches --agent-gate-on {', '.join(gate.on)}: FAIL, nothing was "
            "gated",), {}))
    checks += [_check_cell(cell, gate, base_records, summary) for cell in cells]
    return GateResult(all(c.passed for c in checks), tuple(checks))
