"""The run's HTML report: one self-contained page with charts, settings and transcripts.

The page must open offline from a mail attachment or a CI artefact, so everything is inline:
CSS and vanilla JS from ``html_template.html``, plots as SVG drawn here, and the encounters
as JSON in ``<script type="application/json">`` blocks that the page renders a page at a time
(imported CRAFT-MD runs hold ~40,000 records; 40,000 DOM rows would freeze the browser).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..encounter.transcript import Transcript
from .records import ResultRecord

REPORT_FILE = "report.html"
TEMPLATE_FILE = "html_template.html"

#: Field order of each embedded record row; the page's JS reads the same list from the JSON,
#: so adding a field here needs no change there unless the page should show it.
RECORD_FIELDS = ("case_id", "specialty", "doctor", "outcome", "expected", "given",
                 "decided_by", "turn_budget", "turns_used", "sample", "bias", "dataset",
                 "protocol", "experiment", "answer_format", "nodeid", "tests", "error",
                 "models", "duration_s", "transcript", "note")

_SERIES_COLOURS = ("#2563eb", "#db2777", "#059669", "#d97706", "#7c3aed", "#0891b2",
                   "#dc2626", "#4b5563")


def write_html(run_dir: Path, tables: Mapping[str, Sequence[Mapping[str, Any]]],
               summary: Mapping[str, Any]) -> Path:
    """Write ``run_dir/report.html`` from the run's records, transcripts and tables."""
    path = run_dir / REPORT_FILE
    path.write_text(render_html(run_dir, tables, summary), encoding="utf-8")
    return path


def render_html(run_dir: Path, tables: Mapping[str, Sequence[Mapping[str, Any]]],
                summary: Mapping[str, Any]) -> str:
    """The report page for ``run_dir`` as one string.

    ``tables`` maps a title ("by doctor", "by specialty", ...) to rows with ``group``, ``n``,
    ``correct``, ``accuracy``, ``ci_low``, ``ci_high`` (95% CI) and ``errors``; each becomes a
    bar chart. Records come from ``run_dir/results.jsonl``, transcripts from their paths.
    """
    records, skipped = load_records(run_dir)
    rows: list[list[Any]] = []
    transcripts: list[Any] = []
    for record in records:
        transcript, note = load_transcript(run_dir, record)
        rows.append(_record_row(record, note))
        transcripts.append(_transcript_data(transcript) if transcript else None)
    charts = [bar_chart(title, table) for title, table in tables.items()]
    budget_ci = _budget_ci(tables) if len({r.doctor for r in records}) == 1 else {}
    if len({r.turn_budget for r in records}) > 1:
        charts.append(_card("Accuracy by turn budget, per doctor", budget_chart(records, budget_ci),
                            "Share of judged encounters diagnosed correctly at each budget."))
    run = str(summary.get("run") or (records[0].run if records else run_dir.name))
    values = {
        "TITLE": escape(f"AgentClinic report · {run}"),
        "HEADER": _header(run, summary, records, skipped),
        "CHARTS": "\n".join(charts) or '<p class="muted">No accuracy tables were given.</p>',
        "RECORDS_JSON": _script_json({"fields": list(RECORD_FIELDS), "rows": rows}),
        "TRANSCRIPTS_JSON": _script_json(transcripts),
    }
    # One pass over the template only, so placeholder-like text inside the data stays as is.
    return re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: values[m.group(1)], _template())


def load_records(run_dir: Path) -> tuple[list[ResultRecord], int]:
    """The run's result records and the number of unreadable lines skipped."""
    path = run_dir / "results.jsonl"
    if not path.is_file():
        return [], 0
    records: list[ResultRecord] = []
    skipped = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(ResultRecord.model_validate_json(line))
        except ValidationError:
            # One damaged line (a crashed writer) should not cost the whole report; the
            # header says how many were skipped.
            skipped += 1
    return records, skipped


def load_transcript(run_dir: Path, record: ResultRecord) -> tuple[Transcript | None, str | None]:
    """The record's transcript, or ``None`` and a note saying why there is none."""
    if not record.transcript:
        return None, "No transcript was saved for this encounter (e.g. an imported run)."
    ref = Path(record.transcript)
    # Paths are written as the run saw them; a moved or copied run directory still holds the
    # file under transcripts/, so look there too.
    candidates = [ref] if ref.is_absolute() else [Path.cwd() / ref, run_dir / ref]
    candidates.append(run_dir / "transcripts" / ref.name)
    for candidate in candidates:
        if candidate.is_file():
            try:
                return Transcript.model_validate_json(candidate.read_bytes()), None
            except (OSError, ValidationError) as exc:
                return None, f"Transcript {candidate} could not be read: {type(exc).__name__}."
    return None, f"Transcript file not found: {record.transcript}"


def bar_chart(title: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """A card with a horizontal bar chart of accuracy and its 95% CI, and the numbers."""
    # The viewBox is about the card's width in the two-column grid, so text is drawn ~1:1.
    label_w = min(220, 20 + 7 * max((len(str(r.get("group", ""))) for r in rows), default=8))
    width, text_w, row_h, top = 600, 112, 28, 8
    plot_w = width - label_w - text_w
    height = top + row_h * len(rows) + 30
    parts = [_svg_open(width, height, f"Accuracy {title}"),
             _x_grid(label_w, plot_w, top, top + row_h * len(rows))]
    for i, row in enumerate(rows):
        group = str(row.get("group", ""))
        acc, low, high = (_num(row.get(k)) for k in ("accuracy", "ci_low", "ci_high"))
        y = top + i * row_h
        mid = y + row_h / 2
        tip = _row_tip(group, row, acc, low, high)
        parts.append(f'<g class="row" data-group="{escape(group)}"><title>{escape(tip)}</title>')
        parts.append(f'<text class="label" x="{label_w - 10}" y="{mid + 4:.1f}" '
                     f'text-anchor="end">{escape(_shorten(group, 30))}</text>')
        if acc is None:
            parts.append(f'<text class="na" x="{label_w + 6}" y="{mid + 4:.1f}">no judged '
                         f'encounters</text></g>')
            continue
        parts.append(f'<rect class="bar" x="{label_w}" y="{y + 7}" height="{row_h - 14}" '
                     f'width="{acc * plot_w:.1f}" rx="3"/>')
        if low is not None and high is not None:
            x1, x2 = label_w + low * plot_w, label_w + high * plot_w
            parts.append(f'<path class="ci" d="M{x1:.1f} {mid:.1f}H{x2:.1f}'
                         f'M{x1:.1f} {mid - 6:.1f}v12M{x2:.1f} {mid - 6:.1f}v12"/>')
        value = f"{acc:.1%} · {row.get('correct', '?')}/{row.get('n', '?')}"
        parts.append(f'<text class="value" x="{label_w + plot_w + 10}" y="{mid + 4:.1f}">'
                     f'{escape(value)}</text></g>')
    parts.append("</svg>")
    return _card(f"Accuracy {title}", "".join(parts),
                 "Bars: correct / judged encounters (errors excluded); whiskers: 95% CI.",
                 _numbers_table(rows))


def budget_chart(records: Sequence[ResultRecord],
                 ci: Mapping[int, tuple[float, float]] | None = None) -> str:
    """SVG line chart of accuracy against turn budget, one line per doctor model."""
    budgets = sorted({r.turn_budget for r in records})
    doctors = sorted({r.doctor for r in records})
    tally: dict[tuple[str, int], list[int]] = {}
    for r in records:
        if r.outcome != "error":
            cell = tally.setdefault((r.doctor, r.turn_budget), [0, 0])
            cell[0] += r.outcome == "correct"
            cell[1] += 1
    width, left, right, top, plot_h = 600, 48, 20, 12, 200
    plot_w = width - left - right
    # Room under the axis for its title and the legend, three doctors per line.
    height = top + plot_h + 52 + 18 * math.ceil(len(doctors) / 3)
    span = (budgets[-1] - budgets[0]) or 1

    def xy(budget: int, acc: float) -> tuple[float, float]:
        return left + (budget - budgets[0]) / span * plot_w, top + (1 - acc) * plot_h

    parts = [_svg_open(width, height, "Accuracy by turn budget")]
    for frac in (0, 0.25, 0.5, 0.75, 1):
        y = top + (1 - frac) * plot_h
        parts.append(f'<path class="grid" d="M{left} {y:.1f}H{left + plot_w}"/>'
                     f'<text class="tick" x="{left - 8}" y="{y + 4:.1f}" '
                     f'text-anchor="end">{frac:.0%}</text>')
    for b in budgets:
        x = xy(b, 0)[0]
        parts.append(f'<text class="tick" x="{x:.1f}" y="{top + plot_h + 18}" '
                     f'text-anchor="middle">{b}</text>')
    parts.append(f'<text class="axis" x="{left + plot_w / 2}" y="{top + plot_h + 36}" '
                 f'text-anchor="middle">turn budget (doctor interactions)</text>')
    for i, doctor in enumerate(doctors):
        colour = _SERIES_COLOURS[i % len(_SERIES_COLOURS)]
        points = [(b, *tally[doctor, b]) for b in budgets if tally.get((doctor, b), [0, 0])[1]]
        coords = [xy(b, c / n) for b, c, n in points]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(f'<g class="series" data-doctor="{escape(doctor)}" style="color:{colour}">'
                     f'<polyline points="{path}"/>')
        for (b, c, n), (x, y) in zip(points, coords, strict=True):
            if ci and b in ci:
                y1, y2 = xy(b, ci[b][0])[1], xy(b, ci[b][1])[1]
                parts.append(f'<path class="ci" d="M{x:.1f} {y1:.1f}V{y2:.1f}'
                             f'M{x - 5:.1f} {y1:.1f}h10M{x - 5:.1f} {y2:.1f}h10"/>')
            tip = f"{doctor}, budget {b}: {c}/{n} correct ({c / n:.1%})"
            parts.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4.5">'
                         f'<title>{escape(tip)}</title></circle>')
        lx = left + (i % 3) * (plot_w / 3)
        ly = top + plot_h + 62 + 18 * (i // 3)
        parts.append(f'<rect x="{lx:.1f}" y="{ly - 9}" width="14" height="4" rx="2" '
                     f'fill="currentColor"/><text class="legend" x="{lx + 20:.1f}" '
                     f'y="{ly - 3}">{escape(_shorten(doctor, 24))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _budget_ci(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[int, tuple[float, float]]:
    """95% CIs per budget from a "turn budget" table, to draw on a single doctor's line."""
    out: dict[int, tuple[float, float]] = {}
    for title, rows in tables.items():
        if "budget" not in title.lower():
            continue
        for row in rows:
            digits = re.search(r"\d+", str(row.get("group", "")))
            low, high = _num(row.get("ci_low")), _num(row.get("ci_high"))
            if digits and low is not None and high is not None:
                out[int(digits.group())] = (low, high)
    return out


def _record_row(r: ResultRecord, note: str | None) -> list[Any]:
    values = {**r.model_dump(include=set(RECORD_FIELDS)), "doctor": r.doctor,
              "tests": r.tests_requested, "note": note}
    return [values.get(name) for name in RECORD_FIELDS]


def _transcript_data(t: Transcript) -> dict[str, Any]:
    """The parts of a transcript the viewer shows; per-utterance usage would only bloat it."""
    return {"u": [[u.turn, u.role, u.kind, u.text, u.detail, u.model] for u in t.utterances],
            "diagnosis": t.diagnosis,
            "verdict": t.verdict.model_dump() if t.verdict else None,
            "prompts": t.prompt_versions}


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no "</script>" or "<!--" can appear in it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _header(run: str, summary: Mapping[str, Any], records: Sequence[ResultRecord],
            skipped: int) -> str:
    """Headline numbers from the records, then the run's settings from the summary."""
    judged = [r for r in records if r.outcome != "error"]
    correct = sum(r.outcome == "correct" for r in judged)
    kpis = [("encounters", str(len(records)), ""),
            ("accuracy", f"{correct / len(judged):.1%}" if judged else "–", "accent"),
            ("correct", str(correct), "ok"),
            ("incorrect", str(sum(r.outcome == "incorrect" for r in records)), "bad"),
            ("no diagnosis", str(sum(r.outcome == "no_diagnosis" for r in records)), "warn"),
            ("errors", str(len(records) - len(judged)), "err")]
    tiles = "".join(f'<div class="kpi {cls}"><div class="kv">{escape(v)}</div>'
                    f'<div class="kl">{escape(k)}</div></div>' for k, v, cls in kpis)
    settings: list[tuple[str, str]] = []
    roles = summary.get("roles")
    if isinstance(roles, Mapping):
        settings += [(f"{role} model", str(model)) for role, model in roles.items()]
    known = {"plugin_version": "plugin version", "turn_budgets": "turn budgets",
             "repeat": "repeats", "cache_mode": "cache mode", "temperature": "temperature",
             "items": "items", "model_calls": "model calls", "cache_hits": "cache hits",
             "bad_case_records": "bad case records"}
    skip = {"version", "run", "roles", "case_files", *known}
    settings += [(label, _fmt(summary[key])) for key, label in known.items() if key in summary]
    # Keys added later (CRAFT-MD conditions, ...) still show, if they are short values.
    settings += [(key.replace("_", " "), _fmt(value)) for key, value in summary.items()
                 if key not in skip and not isinstance(value, Mapping) and len(_fmt(value)) < 80]
    items = "".join(f"<div><dt>{escape(k)}</dt><dd>{escape(v)}</dd></div>" for k, v in settings)
    files = summary.get("case_files")
    files_html = ""
    if isinstance(files, Mapping) and files:
        lis = "".join(f"<li><code>{escape(str(f))}</code> <span class=\"muted\">sha256 "
                      f"{escape(str(h)[:12])}</span></li>" for f, h in files.items())
        files_html = f"<details><summary>{len(files)} case files</summary><ul>{lis}</ul></details>"
    warn = (f'<p class="warning">{skipped} unreadable line(s) of results.jsonl were skipped.</p>'
            if skipped else "")
    return (f'<h1>AgentClinic report <span class="run">{escape(run)}</span></h1>{warn}'
            f'<section class="kpis">{tiles}</section>'
            f'<section class="card settings"><h2>Run settings</h2><dl>{items}</dl>'
            f"{files_html}</section>")


def _card(title: str, body: str, note: str, extra: str = "") -> str:
    return (f'<section class="card chart"><h2>{escape(title)}</h2>'
            f'<p class="muted small">{escape(note)}</p>{body}{extra}</section>')


def _numbers_table(rows: Sequence[Mapping[str, Any]]) -> str:
    body = []
    for row in rows:
        acc, low, high = (_num(row.get(k)) for k in ("accuracy", "ci_low", "ci_high"))
        ci = f"{low:.1%} – {high:.1%}" if low is not None and high is not None else "–"
        cells = [str(row.get("group", "")), _fmt(row.get("n")), _fmt(row.get("correct")),
                 f"{acc:.1%}" if acc is not None else "–", ci, _fmt(row.get("errors"))]
        body.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("group", "n", "correct", "accuracy", "95% CI",
                                             "errors"))
    return (f'<details class="numbers"><summary>numbers</summary><table><thead><tr>{head}'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table></details>')


def _svg_open(width: int, height: int, label: str) -> str:
    return (f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(label)}">')


def _x_grid(left: int, plot_w: int, top: int, bottom: int) -> str:
    out = []
    for frac in (0, 0.25, 0.5, 0.75, 1):
        x = left + frac * plot_w
        out.append(f'<path class="grid" d="M{x:.1f} {top}V{bottom}"/><text class="tick" '
                   f'x="{x:.1f}" y="{bottom + 18}" text-anchor="middle">{frac:.0%}</text>')
    return "".join(out)


def _row_tip(group: str, row: Mapping[str, Any], acc: float | None, low: float | None,
             high: float | None) -> str:
    tip = f"{group}: {row.get('correct', '?')}/{row.get('n', '?')} correct"
    if acc is not None:
        tip += f" ({acc:.1%})"
    if low is not None and high is not None:
        tip += f", 95% CI {low:.1%}–{high:.1%}"
    return tip + f", {row.get('errors', 0)} errors"


def _num(value: Any) -> float | None:
    """A finite float in [0, 1] or None: NaN and missing values draw nothing."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, number)) if math.isfinite(number) else None


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _template() -> str:
    return resources.files(__package__).joinpath(TEMPLATE_FILE).read_text(encoding="utf-8")
