"""Expert review: a blinded rating sheet of sampled transcripts, and the ratings brought back.

The sheet follows CRAFT-MD's expert evaluation of the clinical LLM (history taking, when to
stop asking) and adds the two other qualities the issue names; each criterion is rated 1-5
against written anchors. Model names are replaced by codes (``M1``, ``M2``...) in the sheet
and in the transcripts; ``key.json`` beside the sheet maps codes back and must not be given
to the raters. Ratings come back as the same CSV filled in (one file per rater, or one file
with a ``rater`` column telling them apart).
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import InputError
from ..core.records import ResultRecord
from ..core.transcript import Transcript
from ..core.versioned import Format, read_json
from ..runs.directory import REVIEW_VERSION, read_review
from .statistics import group_rng, per_case, ratio_interval
from .tables import Table

#: ``key.json``: which model each code of a review sheet stands for (kept from the raters).
REVIEW_KEY_FORMAT = Format("review key", REVIEW_VERSION)
SHEET = "sheet.csv"
PAGE = "sheet.html"
KEY = "key.json"


@dataclass(frozen=True)
class Criterion:
    """One rated quality with its 1 / 3 / 5 anchors."""

    name: str
    question: str
    anchors: tuple[str, str, str]


CRITERIA: tuple[Criterion, ...] = (
    Criterion("history_completeness",
              "Did the doctor elicit the relevant medical history (symptoms, onset and course, "
              "medications, personal and family history; not the exam or lab results)?",
              ("almost none of the relevant history was asked for",
               "about half of the relevant history was elicited",
               "all of the relevant history was elicited")),
    Criterion("appropriate_stopping",
              "Did the doctor stop asking questions when, and only when, a single most likely "
              "diagnosis was possible?",
              ("stopped with many diagnoses still open, or went on long after",
               "stopped somewhat early or somewhat late",
               "stopped as soon as a single most likely diagnosis was possible")),
    Criterion("patient_friendly_language",
              "Did the doctor speak so a patient could follow (plain words, one short question "
              "at a time)?",
              ("jargon and compound questions throughout",
               "mostly plain, some unexplained terms or several questions at once",
               "plain language and one short question at a time throughout")),
    Criterion("diagnostic_reasoning",
              "Does the final diagnosis follow from what was elicited, with tests chosen to "
              "tell the likely diagnoses apart?",
              ("unsupported by, or contrary to, what was elicited",
               "plausible but ignores some findings or orders tests without purpose",
               "follows from the findings; tests (if any) discriminate")),
)
COLUMNS = ("item", "model", "rater", *(c.name for c in CRITERIA), "comments")
_SHOWN = {("doctor", "question"), ("doctor", "test_request"), ("doctor", "diagnosis"),
          ("doctor", "image_request"), ("patient", "answer"), ("measurement", "test_result"),
          ("measurement", "image_result"), ("doctor", "final_answer")}


@dataclass(frozen=True)
class Sampled:
    """A record picked for review, with its transcript."""

    record: ResultRecord
    transcript: Transcript


def sample(candidates: Sequence[Sampled], n: int, seed: int) -> list[Sampled]:
    """``n`` items spread evenly over the doctor models (round robin over each model's
    seeded shuffle), then shuffled so a model's items are not adjacent."""
    rng = random.Random(seed)
    by_model: dict[str, list[Sampled]] = {}
    for c in sorted(candidates, key=lambda c: c.record.nodeid):
        by_model.setdefault(c.record.doctor, []).append(c)
    for items in by_model.values():
        rng.shuffle(items)
    picked: list[Sampled] = []
    while len(picked) < n and any(by_model.values()):
        for model in sorted(by_model):
            if by_model[model] and len(picked) < n:
                picked.append(by_model[model].pop())
    rng.shuffle(picked)
    return picked


def model_codes(models: Sequence[str], seed: int) -> dict[str, str]:
    """Model -> ``M1``.. in a seeded random order (so codes do not follow the names)."""
    order = sorted(set(models))
    random.Random(seed + 1).shuffle(order)
    return {m: f"M{i}" for i, m in enumerate(order, 1)}


def _redact(text: str, models: Sequence[str]) -> str:
    """``text`` with every model's name, and its name without the provider prefix, replaced;
    longest first, so "openai/gpt-4o" goes whole rather than leaving "openai/"."""
    names = {n for model in models for n in (model, model.rsplit("/", 1)[-1]) if len(n) > 2}
    for name in sorted(names, key=lambda n: (-len(n), n)):
        text = re.sub(re.escape(name), "[model]", text, flags=re.I)
    return text


def write_sheet(out: Path, picked: Sequence[Sampled], case_text: Mapping[str, str],
                run: str, seed: int) -> dict[str, Any]:
    """Write ``sheet.csv``, ``sheet.html`` and ``key.json`` into ``out``; return the key."""
    out.mkdir(parents=True, exist_ok=True)
    models = [p.record.doctor for p in picked]
    codes = model_codes(models, seed)
    all_models = sorted({m for p in picked for m in p.record.models.values()})
    items = {f"R{i:03d}": p for i, p in enumerate(picked, 1)}
    with (out / SHEET).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for code, p in items.items():
            writer.writerow([code, codes[p.record.doctor], "", *([""] * len(CRITERIA)), ""])
    pages = [_item_html(code, codes[p.record.doctor], p, case_text.get(p.record.case_id, ""),
                        all_models) for code, p in items.items()]
    (out / PAGE).write_text(_page(pages), encoding="utf-8")
    key = {"version": REVIEW_VERSION, "run": run, "seed": seed,
           "models": {code: model for model, code in codes.items()},
           "items": {code: {"nodeid": p.record.nodeid, "case_id": p.record.case_id,
                            "model": p.record.doctor, "outcome": p.record.outcome}
                     for code, p in items.items()}}
    (out / KEY).write_text(json.dumps(key, indent=1), encoding="utf-8")
    return key


def read_key(path: Path) -> dict[str, Any]:
    """A review sheet's ``key.json`` as the current format (an InputError naming the file
    when it is not one, or of a format this version cannot read)."""
    key = read_json(path)
    if not isinstance(key, dict):
        raise InputError(f"not a review key (a JSON {type(key).__name__})", path=path)
    return REVIEW_KEY_FORMAT.upgrade(key, str(path))


def _item_html(code: str, model_code: str, p: Sampled, case: str,
               models: Sequence[str]) -> str:
    lines = []
    for u in p.transcript.utterances:
        if (u.role, u.kind) in _SHOWN:
            who = {"doctor": "Doctor", "patient": "Patient", "measurement": "Results"}[u.role]
            lines.append(f'<p class="{u.role}"><b>{who}:</b> '
                         f"{escape(_redact(u.text, models))}</p>")
    boxes = "".join(f"<tr><td>{escape(c.name.replace('_', ' '))}</td>"
                    + "".join("<td>&#9744; " + str(k) + "</td>" for k in range(1, 6)) + "</tr>"
                    for c in CRITERIA)
    return (f'<section class="item"><h2>{code} <small>doctor {model_code}</small></h2>'
            f'<p class="case"><b>Case:</b> {escape(case)}<br><b>Correct diagnosis:</b> '
            f"{escape(p.record.expected)}</p>{''.join(lines)}"
            f'<table class="rate">{boxes}</table><p>Comments: ____________________</p>'
            f"</section>")


def _page(items: Sequence[str]) -> str:
    criteria = "".join(
        f"<li><b>{escape(c.name.replace('_', ' '))}</b>: {escape(c.question)}<br>"
        f"1 = {escape(c.anchors[0])}; 3 = {escape(c.anchors[1])}; 5 = {escape(c.anchors[2])}"
        f"</li>" for c in CRITERIA)
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Expert review sheet"
            "</title><style>body{font:14px/1.4 serif;max-width:48em;margin:auto}"
            ".item{page-break-before:always;border-top:2px solid #000;padding-top:.5em}"
            ".patient,.measurement{margin-left:2em}.rate td{padding:2px 8px}"
            "</style></head><body><h1>Expert review sheet</h1><p>Rate each conversation on "
            "the four criteria, 1 (worst) to 5 (best), against the anchors; write the ratings "
            f"into {SHEET} (one row per item; put your name in the rater column). Doctor "
            "models are hidden behind codes.</p><ol>" + criteria + "</ol>"
            + "".join(items) + "</body></html>\n")


# --- ratings back ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Rating:
    """One rater's ratings of one item (None where left blank)."""

    item: str
    rater: str
    scores: dict[str, int | None]


def read_ratings(path: Path, key: Mapping[str, Any]) -> list[Rating]:
    """The filled-in sheet's ratings; a bad cell is an InputError naming file, line and
    field. A blank rater column is the file's name (one file per rater)."""
    try:
        return _ratings(path, key)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"not a CSV sheet ({exc})", path=path) from None


def _ratings(path: Path, key: Mapping[str, Any]) -> list[Rating]:
    out = []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS[:3] if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}", path=path, line=1)
        for row in reader:
            line = reader.line_num
            if row["item"] not in key["items"]:
                raise InputError(f"{row['item']!r} is not an item of {KEY}", path=path,
                                 line=line, field="item")
            scores = {c.name: _score(path, line, c.name, row.get(c.name)) for c in CRITERIA}
            if any(v is not None for v in scores.values()):
                out.append(Rating(row["item"], (row.get("rater") or "").strip() or path.stem,
                                  scores))
    return out


def _score(path: Path, line: int, name: str, value: str | None) -> int | None:
    text = (value or "").strip()
    if not text:
        return None
    if text not in ("1", "2", "3", "4", "5"):
        raise InputError(f"expected 1-5 or blank, got {text!r}", path=path, line=line,
                         field=name)
    return int(text)


def weighted_kappa(a: Sequence[int], b: Sequence[int], k: int = 5) -> float | None:
    """Cohen's kappa with quadratic weights for two raters' 1..k ratings of the same items."""
    if not a:
        return None
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[x - 1, y - 1] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    weights = (i - j) ** 2 / (k - 1) ** 2
    denominator = float((weights * expected).sum())
    return None if denominator == 0 else 1 - float((weights * observed).sum()) / denominator


def summarize(ratings: Sequence[Rating], key: Mapping[str, Any],
              resamples: int = 2000) -> dict[str, Any]:
    """Means with 95% CIs (bootstrap over cases) per model and criterion, every rating of an
    item counted; and per criterion the weighted kappa of the first two raters."""
    items = key["items"]
    by_model: dict[str, dict[str, Any]] = {}
    for model in sorted({items[r.item]["model"] for r in ratings}):
        rows = [r for r in ratings if items[r.item]["model"] == model]
        by_model[model] = {}
        for c in CRITERIA:
            pairs = [(items[r.item]["case_id"], v) for r in rows
                     if (v := r.scores[c.name]) is not None]
            by_model[model][c.name] = _mean_ci(pairs, (model, c.name), resamples)
    raters = sorted({r.rater for r in ratings})
    agreement: dict[str, Any] = {}
    if len(raters) >= 2:
        first, second = raters[:2]
        for c in CRITERIA:
            a = {r.item: r.scores[c.name] for r in ratings if r.rater == first}
            b = {r.item: r.scores[c.name] for r in ratings if r.rater == second}
            pairs = [(x, y) for i in sorted(a)
                     if (x := a[i]) is not None and (y := b.get(i)) is not None]
            agreement[c.name] = {"kappa": weighted_kappa([x for x, _ in pairs],
                                                         [y for _, y in pairs]),
                                 "items": len(pairs)}
    return {"version": REVIEW_VERSION, "run": key.get("run"), "raters": raters,
            "ratings": len(ratings), "by_model": by_model,
            "agreement": {"raters": raters[:2], "weights": "quadratic", **agreement}
            if agreement else None}


def _mean_ci(pairs: Sequence[tuple[str, int]], key: tuple[str, ...],
             resamples: int) -> dict[str, Any]:
    if not pairs:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    sums, counts = per_case([c for c, _ in pairs], np.array([v for _, v in pairs], float))
    low, high = ratio_interval(sums, counts, resamples, group_rng(0, key))
    return {"mean": float(sums.sum() / counts.sum()), "ci_low": low, "ci_high": high,
            "n": len(pairs)}


def review_tables(run_dir: Path) -> list[Table]:
    """The imported review of ``run_dir`` (``review.json``) as report tables."""
    review = read_review(run_dir)
    if review is None:
        return []
    rows, data = [], []
    for model, stats in review["by_model"].items():
        cells = [f"{s['mean']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}] n={s['n']}"
                 if s["mean"] is not None else "-" for s in stats.values()]
        rows.append([model, *cells])
        data.append({"group": model, "doctor": model, **stats})
    tables = [Table("expert review (1-5) by doctor", ["doctor", *(c.name.replace("_", " ")
                                                                  for c in CRITERIA)],
                    rows, data, "mean [95% CI, bootstrap over cases] of the raters' scores; "
                                "criteria and anchors: docs/beyond-accuracy.md")]
    agreement = review.get("agreement")
    if agreement:
        raters = " and ".join(agreement["raters"])
        kappa_rows = [[c.name.replace("_", " "),
                       "-" if agreement[c.name]["kappa"] is None
                       else f"{agreement[c.name]['kappa']:.2f}", str(agreement[c.name]["items"])]
                      for c in CRITERIA]
        tables.append(Table(f"inter-rater agreement ({raters})",
                            ["criterion", "weighted kappa", "items"], kappa_rows,
                            [{"criterion": r[0], "kappa": r[1], "items": r[2]}
                             for r in kappa_rows], "Cohen's kappa, quadratic weights"))
    return tables
