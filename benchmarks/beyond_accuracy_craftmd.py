"""Information gathering and patient fidelity on CRAFT-MD's 317 recorded GPT-4 dermatology
conversations; writes the README's plot ``docs/craftmd_gathering.svg``.

    python benchmarks/beyond_accuracy_craftmd.py [--plot docs/craftmd_gathering.svg]
                                                 [--run-dir reports/craftmd-conversations]

The facts are each vignette's sentences (the closing question excluded); a sentence with
examination or test language is an exam fact, the others history facts. The measures and the
matching method are those of ``pytest_agentclinic.metrics`` (docs/beyond-accuracy.md). The
patient fidelity part puts every recorded doctor question to the offline vignette patient
and compares its answers and the recorded GPT-4 patient-AI's with the vignette.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_agentclinic.agents.craftmd_agents import OfflineVignettePatient
from pytest_agentclinic.cases.vignettes import read_craftmd_csv
from pytest_agentclinic.metrics.conversations import read_conversations
from pytest_agentclinic.metrics.facts import case_facts
from pytest_agentclinic.metrics.gathering import measure
from pytest_agentclinic.protocols.patient_check import RECORDED, check_patient

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "craftmd"
CONVERSATIONS = DATA / "conversations_gpt4_1106_dermatology.jsonl.gz"
VIGNETTES = DATA / "usmle_and_derm_dataset.csv"
RECORDED_ANSWERS = DATA / "recorded_gpt4_1106.jsonl.gz"
AUDIT = Path(__file__).resolve().parent / "data" / "elicitation_audit.json"
#: CRAFT-MD's expert review (Fig. 3j, Supplementary Table 18): GPT-4 conversations with the
#: complete relevant medical history, 45 annotated conversations (three datasets).
PAPER_COMPLETE_HISTORY = 0.7111


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def gathering(conversations: Sequence, cases: dict) -> dict[str, list[float]]:
    """Per conversation: shares of all / history / exam facts, questions, repeats."""
    out: dict[str, list[float]] = {k: [] for k in (
        "all facts", "history facts", "exam facts", "questions", "repeated", "redundant",
        "turns to diagnosis", "complete history")}
    for convo in conversations:
        facts = case_facts(cases[convo.case_id])
        m = measure(facts, convo.lines)
        by_kind = {kind: [i for i, f in enumerate(facts) if f.kind == kind]
                   for kind in ("history", "exam")}
        for kind, label in (("history", "history facts"), ("exam", "exam facts")):
            share = _share(sum(i in m.elicited_at for i in by_kind[kind]), len(by_kind[kind]))
            if share is not None:
                out[label].append(share)
        out["all facts"].append(m.fact_share or 0.0)
        out["questions"].append(m.questions)
        out["repeated"].append(m.repeated_questions)
        out["redundant"].append(m.redundant_questions)
        if m.turns_to_diagnosis is not None:
            out["turns to diagnosis"].append(m.turns_to_diagnosis)
        if by_kind["history"]:
            out["complete history"].append(
                float(all(i in m.elicited_at for i in by_kind["history"])))
    return out


def audit(conversations: Sequence, cases: dict) -> str:
    """The matcher against the hand labels of ``data/elicitation_audit.json``."""
    data = json.loads(AUDIT.read_text(encoding="utf-8"))
    by_case = {c.case_id: c for c in conversations}
    tally: dict[str, list[int]] = {"yes": [0, 0], "partly": [0, 0], "no": [0, 0]}
    for item in data["items"]:
        facts = case_facts(cases[item["case_id"]])
        index = next(i for i, f in enumerate(facts) if f.text == item["fact"])
        matched = index in measure(facts, by_case[item["case_id"]].lines).elicited_at
        tally[item["conveyed"]][0] += matched
        tally[item["conveyed"]][1] += 1
    return ("matcher against hand labels (benchmarks/data/elicitation_audit.json): "
            + "; ".join(f"labelled {label}: {hit}/{n} counted elicited"
                        for label, (hit, n) in tally.items()))


def write_run(run_dir: Path, conversations: Sequence, cases: dict) -> int:
    """A run directory of the recorded multiturn FRQ answers (trial 0) of the cases that have
    a conversation, graded by the recorded GPT-4 verdicts, each record with its
    conversation's measures: ``agentclinic report`` and ``compare --measures`` then work on
    it like on any run."""
    from pytest_agentclinic.importers.craftmd import read_case_table, read_recorded, to_record
    from pytest_agentclinic.protocols.registry import report_tables
    from pytest_agentclinic.report import rundir
    from pytest_agentclinic.runs.summary import build_summary

    by_case = {c.case_id: c for c in conversations}
    info = read_case_table(VIGNETTES)
    skipped: list[str] = []
    records = []
    for line in read_recorded(RECORDED_ANSWERS, skipped):
        if (line["experiment"], line["format"], line["trial"]) != ("multiturn", "frq", 0):
            continue
        convo = by_case.get(str(line["case_id"]))
        if convo is None:
            continue
        record = to_record(line, info[convo.case_id], run=run_dir.name, source=RECORDED_ANSWERS)
        facts = case_facts(cases[convo.case_id])
        records.append(record.model_copy(update={"measures": measure(facts, convo.lines)}))
    rundir.write_results(run_dir, records)
    # The one builder of summary.json, as every run directory's.
    summary = build_summary(
        {"run": run_dir.name, "protocol": "craftmd",
         "source": f"{RECORDED_ANSWERS.name} (multiturn FRQ, trial 0) with the measures of "
                   f"{CONVERSATIONS.name}",
         "roles": dict(records[0].models) if records else {}}, records, len(skipped))
    rundir.write_reports(run_dir, summary, records, report_tables(records, 2000))
    _accuracy_by_gathering(records)
    return len(records)


def _accuracy_by_gathering(records: Sequence) -> None:
    """Multiturn FRQ accuracy of the conversations below and above the median fact share."""
    shares = sorted(r.measures.fact_share for r in records)
    median = shares[len(shares) // 2]
    rates = []
    for label, keep in (("below", lambda v: v < median), ("at or above", lambda v: v >= median)):
        group = [r for r in records if keep(r.measures.fact_share)]
        correct = sum(r.outcome == "correct" for r in group)
        rates.append((correct / len(group), len(group)))
        print(f"  multiturn FRQ accuracy with a fact share {label} the median ({median:.0%}): "
              f"{correct}/{len(group)} = {correct / len(group):.1%}")
    (p1, n1), (p2, n2) = rates
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)  # one conversation per case
    print(f"  difference {p2 - p1:+.1%} (95% CI {p2 - p1 - 1.96 * se:+.1%} to "
          f"{p2 - p1 + 1.96 * se:+.1%}, normal approximation); an association, not a cause")


def quartiles(values: Sequence[float]) -> str:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return (f"mean {statistics.fmean(values):.2f}  median {q[1]:.2f}  "
            f"IQR {q[0]:.2f}-{q[2]:.2f}  n={len(values)}")


def histogram_svg(series: dict[str, list[float]], title: str) -> str:
    """Side-by-side histograms (10 bins over 0-100%) of each series, as one SVG."""
    colours = ("#2563eb", "#db2777", "#059669")
    width, height, left, bottom, top = 640, 320, 48, 64, 40
    pw, ph = width - left - 16, height - top - bottom
    counts = {name: [0] * 10 for name in series}
    for name, values in series.items():
        for v in values:
            counts[name][min(int(v * 10), 9)] += 1
    # y axis up to the next 10% above the tallest bar, ticks every 10%
    peak = math.ceil(max(max(c) / max(len(series[n]), 1) for n, c in counts.items()) * 10) / 10
    bar = pw / 10 / (len(series) + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>']
    for tick in range(round(peak * 10) + 1):
        y = top + ph - tick / 10 / peak * ph
        parts.append(f'<path d="M{left} {y:.1f}H{left + pw}" stroke="#ddd"/><text x="{left - 4}"'
                     f' y="{y + 4:.1f}" text-anchor="end">{tick * 10}%</text>')
    for b in range(11):
        parts.append(f'<text x="{left + b * pw / 10:.1f}" y="{top + ph + 14}" '
                     f'text-anchor="middle">{b * 10}%</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{top + ph + 30}" text-anchor="middle">share of '
                 f"the vignette's facts elicited (bins of 10%; 100% in the last)</text>")
    for s, (name, c) in enumerate(counts.items()):
        n = max(len(series[name]), 1)
        for b, k in enumerate(c):
            h = (k / n) / peak * ph if peak else 0
            x = left + b * pw / 10 + (s + 0.5) * bar
            parts.append(f'<rect x="{x:.1f}" y="{top + ph - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" fill="{colours[s]}"/>')
        parts.append(f'<rect x="{left + 8 + s * 210}" y="{height - 14}" width="12" height="8" '
                     f'fill="{colours[s]}"/><text x="{left + 24 + s * 210}" y="{height - 6}">'
                     f"{name} (n={len(series[name])})</text>")
    parts.append(f'<text x="12" y="{top + ph / 2}" transform="rotate(-90 12 {top + ph / 2})" '
                 f'text-anchor="middle">share of conversations</text></svg>')
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "craftmd_gathering.svg")
    parser.add_argument("--run-dir", type=Path, default=None, metavar="DIR",
                        help="also write a run directory (results.jsonl with the measures, "
                             "summary, report.html) of the recorded multiturn FRQ answers")
    args = parser.parse_args(argv)
    if not CONVERSATIONS.exists() or not VIGNETTES.exists():
        print(f"skipped: {CONVERSATIONS} or {VIGNETTES} is missing", file=sys.stderr)
        return 0
    cases = {c.id: c for c in read_craftmd_csv(VIGNETTES).cases}
    conversations = [c for c in read_conversations(CONVERSATIONS) if c.case_id in cases]
    print(f"{len(conversations)} recorded GPT-4 conversations (dermatology)\n")
    per = gathering(conversations, cases)
    print("information gathering (per conversation):")
    for name, values in per.items():
        if name != "complete history":
            print(f"  {name:<20} {quartiles(values)}")
    complete = statistics.fmean(per["complete history"])
    print(f"  every history fact elicited: {complete:.1%} of conversations "
          f"(CRAFT-MD expert review, GPT-4: {PAPER_COMPLETE_HISTORY:.1%} had the complete "
          f"relevant history)")
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    args.plot.write_text(histogram_svg(
        {k: per[k] for k in ("all facts", "history facts")},
        "Vignette facts elicited per conversation: GPT-4, 317 CRAFT-MD dermatology cases"),
        encoding="utf-8")
    print(f"  plot: {args.plot}")
    share_75 = statistics.fmean(v >= 0.75 for v in per["history facts"])
    print(f"  at least 75% of the history facts elicited: {share_75:.1%} of conversations")
    print(f"  {audit(conversations, cases)}\n")
    if args.run_dir is not None:
        n = write_run(args.run_dir, conversations, cases)
        print(f"run directory: {args.run_dir} ({n} records with measures)\n")
    summary, _ = asyncio.run(check_patient(lambda case: OfflineVignettePatient(),
                                           conversations, cases))
    print(f"patient fidelity over {summary.conversations} conversations, {summary.answers} "
          f"doctor questions, {summary.facts} vignette facts:")
    for who in (RECORDED, "offline"):
        name = "recorded GPT-4 patient-AI" if who == RECORDED else "offline vignette patient"
        added = summary.added_sentences.get(who, 0)
        claims = summary.added_claims.get(who, 0)
        print(f"  {name}: facts conveyed {summary.conveyed.get(who, 0)}; sentences the "
              f"vignette does not hold {added} ({claims} claims, {added - claims} denials); "
              f"diagnosis named in {summary.rate('diagnosis_leaks', who):.1%} and an exam "
              f"finding revealed in {summary.rate('exam_leaks', who):.1%} of conversations")
    print(f"  facts conveyed by both: {summary.common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
