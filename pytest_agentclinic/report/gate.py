"""The CI gate: whether a run may pass, decided from its result records.

The rule (stated in the README):

* any item that ended in an infrastructure error fails the gate (the measurement is
  incomplete, and errors are not counted as wrong diagnoses);
* ``--agent-min-accuracy X``: each doctor model's accuracy must be >= X;
* ``--agent-baseline RUN --agent-max-drop D``: each doctor model fails when its accuracy is
  lower than the baseline's by more than D **and** the drop is significant at
  ``--agent-gate-alpha`` (default 0.05). With the baseline's results.jsonl the items are paired
  by case, sample and condition and the test is an exact McNemar test on the discordant pairs;
  with only a summary.json, a one-sided exact binomial test of this run's correct count
  against the baseline's accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.records import ResultRecord
from .comparison import mcnemar_exact, pair_key


@dataclass(frozen=True)
class GateSettings:
    """The CI gate; inactive when neither a minimum accuracy nor a baseline is given."""

    min_accuracy: float | None = None
    baseline: Path | None = None
    max_drop: float = 0.0
    alpha: float = 0.05

    @property
    def active(self) -> bool:
        """Whether a gate decides the exit status."""
        return self.min_accuracy is not None or self.baseline is not None


@dataclass(frozen=True)
class GateResult:
    """The verdict and one line per check saying why."""

    passed: bool
    lines: tuple[str, ...]


def _accuracy(records: Sequence[ResultRecord]) -> tuple[int, int]:
    judged = [r for r in records if r.outcome != "error"]
    return sum(r.outcome == "correct" for r in judged), len(judged)


def _same_doctor(baseline: Sequence[ResultRecord], doctor: str) -> list[ResultRecord]:
    """The baseline items to pair with ``doctor``: its own, or those of the baseline's only
    doctor model (a new model version is compared against the previous one)."""
    mine = [r for r in baseline if r.doctor == doctor]
    return mine or (list(baseline) if len({r.doctor for r in baseline}) == 1 else [])


def _paired_check(doctor: str, current: Sequence[ResultRecord],
                  baseline: Sequence[ResultRecord], gate: GateSettings) -> tuple[bool, str]:
    base = {pair_key(r): r for r in baseline if r.outcome != "error"}
    pairs = [(base[pair_key(r)], r) for r in current
             if r.outcome != "error" and pair_key(r) in base]
    if not pairs:
        return False, (f"{doctor}: no item of the baseline pairs with this run (the baseline "
                       "holds other cases, or several doctor models but not this one): FAIL")
    before = sum(b.outcome == "correct" for b, _ in pairs) / len(pairs)
    after = sum(c.outcome == "correct" for _, c in pairs) / len(pairs)
    lost = sum(b.outcome == "correct" and c.outcome != "correct" for b, c in pairs)
    gained = sum(b.outcome != "correct" and c.outcome == "correct" for b, c in pairs)
    p = mcnemar_exact(lost, gained)
    return _drop_verdict(doctor, before, after, p, gate,
                         f"{len(pairs)} paired items, {lost} lost / {gained} gained, "
                         f"exact McNemar p={p:.4g}")


def _summary_check(doctor: str, current: Sequence[ResultRecord], summary: Mapping[str, object],
                   gate: GateSettings) -> tuple[bool, str]:
    from scipy.stats import binomtest

    rows = summary.get("by_doctor")
    if not isinstance(rows, dict) or not rows:
        return False, f"{doctor}: the baseline summary has no accuracy by doctor"
    row = rows.get(doctor) if doctor in rows else (next(iter(rows.values())) if len(rows) == 1
                                                    else None)
    if not isinstance(row, dict) or row.get("accuracy") is None:
        return False, f"{doctor}: the baseline summary has no accuracy for this model"
    before = float(row["accuracy"])
    correct, n = _accuracy(current)
    p = float(binomtest(correct, n, before, alternative="less").pvalue) if n else 1.0
    return _drop_verdict(doctor, before, correct / n if n else 0.0, p, gate,
                         f"{n} items against the baseline summary, one-sided binomial p={p:.4g}")


def _drop_verdict(doctor: str, before: float, after: float, p: float, gate: GateSettings,
                  detail: str) -> tuple[bool, str]:
    drop = before - after
    failed = drop > gate.max_drop and p < gate.alpha
    why = ("drop larger than allowed and significant" if failed else
           "drop within the allowed margin" if drop <= gate.max_drop else
           f"drop not significant at alpha={gate.alpha}")
    return (not failed, f"{doctor}: baseline {before:.3f} -> {after:.3f} (drop {drop:+.3f}, "
            f"max {gate.max_drop:.3f}; {detail}): {'FAIL' if failed else 'pass'}, {why}")


def evaluate(gate: GateSettings, records: Sequence[ResultRecord],
             baseline: tuple[Sequence[ResultRecord], Mapping[str, object]] = ((), {}),
             ) -> GateResult:
    """Apply every configured check to each doctor model's records.

    ``baseline`` is the baseline run's records (empty when only its summary is compared)
    and summary, as the run directory's reader gives them.
    """
    lines: list[str] = []
    passed = True
    errors = sum(r.outcome == "error" for r in records)
    if errors:
        passed = False
        lines.append(f"{errors} item(s) ended in infrastructure errors: FAIL, "
                     "the measurement is incomplete")
    base_records, summary = baseline
    for doctor in sorted({r.doctor for r in records}):
        mine = [r for r in records if r.doctor == doctor]
        if gate.min_accuracy is not None:
            correct, n = _accuracy(mine)
            accuracy = correct / n if n else 0.0
            ok = n > 0 and accuracy >= gate.min_accuracy
            passed &= ok
            lines.append(f"{doctor}: accuracy {accuracy:.3f} ({correct}/{n}) "
                         f"{'>=' if ok else '<'} minimum {gate.min_accuracy:.3f}: "
                         f"{'pass' if ok else 'FAIL'}")
        if gate.baseline is not None:
            ok, line = (_paired_check(doctor, mine, _same_doctor(base_records, doctor), gate)
                        if base_records else _summary_check(doctor, mine, summary, gate))
            passed &= ok
            lines.append(line)
    return GateResult(passed, tuple(lines))
