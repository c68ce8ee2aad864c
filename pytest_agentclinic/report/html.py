"""The run's HTML report: one page with charts, settings, the records and their dialogues.

The page must open offline from a mail attachment or a CI artefact, so everything it needs
is inline: CSS and vanilla JS from ``html_template.html``, plots as SVG drawn here, and the
records as JSON in a ``<script type="application/json">`` block that the page renders a page
at a time (imported CRAFT-MD runs hold ~40,000 records; 40,000 DOM rows would freeze the
browser).

The dialogues are embedded only in a small run's page (at most :data:`EMBED_MAX` records):
self-contained, it can be mailed alone. A larger run's page stays small at any size (~0.5 KB
a record; embedded, 10,000 two-call dialogues made 9.5 MB, and a page grew with the
dialogues' length): each record names its transcript file under the run directory, which
the page loads when the record is opened (served over HTTP, as CI artefact viewers and
``python -m http.server`` do), or links to (opened from disk, where browsers let a page read
no other file). Writing it reads no transcript.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from html import escape
from importlib import resources
from typing import Any

from ..core.records import ResultRecord
from ..core.transcript import Transcript
from .beyond import BY_NAME, MeanCI, cost_accuracy_chart
from .charts import SERIES_COLOURS, bar_chart, budget_chart, card, card_title, fmt, html_table, pct
from .tables import pooled_over, usage_table

REPORT_FILE = "report.html"
#: Pages of at most this many records embed their dialogues (self-contained); larger ones
#: load each from its transcript file when it is opened.
EMBED_MAX = 1_000
#: Where the run keeps its transcripts (``rundir.TRANSCRIPTS``), relative to the page.
TRANSCRIPTS_FOLDER = "transcripts"
TEMPLATE_FILE = "html_template.html"

#: Field order of each embedded record row; the page's JS reads the same list from the JSON,
#: so adding a field here needs no change there unless the page should show it.
RECORD_FIELDS = ("case_id", "specialty", "doctor", "outcome", "expected", "given",
                 "decided_by", "turn_budget", "turns_used", "sample", "bias", "dataset",
                 "protocol", "experiment", "answer_format", "image_mode", "perception",
                 "refusals", "nodeid", "tests", "error", "models", "duration_s", "transcript",
                 "note", "patient")


def write_page(write: Callable[[str], object], run_name: str,
               records: Sequence[ResultRecord],
               transcripts: Iterable[tuple[Transcript | None, str | None]],
               tables: Mapping[str, Sequence[Mapping[str, Any]]],
               summary: Mapping[str, Any], skipped: int = 0) -> None:
    """Write the report page piece by piece to ``write``, from the records and transcripts.

    ``transcripts`` pairs each record with its transcript, or None and a note saying why
    there is none; it is consumed one transcript at a time, each written and let go, so the
    page costs memory for its records, not for its transcripts (an 8,000-item page built as
    one string held every transcript at once). Each piece passed to ``write`` is whole: a
    part of the template, a chart, one transcript or one record row.

    ``tables`` maps a title ("by doctor", "accuracy by specialty", ...) to rows with
    ``group``, ``n``, ``correct``, ``accuracy``, ``ci_low``, ``ci_high`` (95% CI) and
    ``errors``; each becomes a bar chart (rows without ``accuracy`` become a plain table).
    ``skipped`` counts unreadable record lines, for a warning. Past :data:`EMBED_MAX`
    records ``transcripts`` is not read: each record links its transcript file instead.
    """
    run = str(summary.get("run") or (records[0].run if records else run_name))
    notes: list[str | None] = []
    if len(records) > EMBED_MAX:
        transcripts = _links(records)
    values: dict[str, Callable[[], Iterable[str]]] = {
        "TITLE": lambda: [escape(f"AgentClinic report · {run}")],
        "HEADER": lambda: [_header(run, summary, records, skipped)],
        "CHARTS": lambda: [_charts(records, tables)],
        # The template puts the transcripts first: each record's row carries the note left
        # by reading its transcript.
        "TRANSCRIPTS_JSON": lambda: _transcripts_json(transcripts, notes),
        "RECORDS_JSON": lambda: _records_json(records, notes,
                                              isinstance(transcripts, _Linked)),
    }
    template = resources.files(__package__).joinpath(TEMPLATE_FILE).read_text(encoding="utf-8")
    # Placeholders are found in the template only, so placeholder-like text inside the data
    # stays as it is.
    for i, part in enumerate(re.split(r"\{\{([A-Z_]+)\}\}", template)):
        for piece in values[part]() if i % 2 else [part]:
            write(piece)


def _charts(records: Sequence[ResultRecord],
            tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    doctors = sorted({r.doctor for r in records}
                     | {str(row["doctor"]) for t in tables.values() for row in t
                        if row.get("doctor") is not None})
    # One colour per doctor model, the same in every chart.
    colours = {d: SERIES_COLOURS[i % len(SERIES_COLOURS)] for i, d in enumerate(doctors)}
    charts = [bar_chart(title, table, colours) if any("accuracy" in r for r in table)
              else _data_card(title, table) for title, table in tables.items() if table]
    if len({r.turn_budget for r in records}) > 1:
        see = "; 95% CIs in the turn-budget chart" if any("budget" in t for t in tables) else ""
        charts.append(card("Accuracy by turn budget, per doctor", budget_chart(records, colours),
                            f"Judged encounters diagnosed correctly at each budget{see}."))
    charts.append(cost_accuracy_chart(records, colours))
    return "\n".join(charts) or '<p class="muted">No accuracy tables were given.</p>'


class _Linked(list[tuple[None, str | None]]):
    """The transcripts of a page that links them: no transcript, each record's note."""


def _links(records: Sequence[ResultRecord]) -> _Linked:
    return _Linked((None, None if r.transcript else
                    "No transcript was saved for this encounter (e.g. an imported run).")
                   for r in records)


def _transcripts_json(transcripts: Iterable[tuple[Transcript | None, str | None]],
                      notes: list[str | None]) -> Iterator[str]:
    """The transcripts' JSON array, an element at a time; each one's note goes to ``notes``.
    A page that links its transcripts gets ``null``: the page loads each when opened."""
    if isinstance(transcripts, _Linked):
        notes.extend(note for _none, note in transcripts)
        yield "null"
        return
    yield "["
    for i, (transcript, note) in enumerate(transcripts):
        notes.append(note)
        data = _transcript_data(transcript) if transcript else None
        yield ("," if i else "") + _script_json(data)
    yield "]"


def _records_json(records: Sequence[ResultRecord], notes: Sequence[str | None],
                  linked: bool = False) -> Iterator[str]:
    """``{"fields": [...], "rows": [...]}``, a row at a time; ``linked``: each row's
    transcript is its file's path relative to the page (which the page loads)."""
    yield '{"fields":' + _script_json(list(RECORD_FIELDS)) + ',"rows":['
    for i, (record, note) in enumerate(zip(records, notes, strict=True)):
        row = _record_row(record, note)
        if linked and record.transcript:
            row[_TRANSCRIPT_AT] = _relative(record.transcript)
        yield ("," if i else "") + _script_json(row)
    yield "]}"


_TRANSCRIPT_AT = RECORD_FIELDS.index("transcript")


def _relative(ref: str) -> str:
    """The transcript's path relative to the page: the run keeps it under transcripts/
    (a moved or merged run directory too), whatever path the record was written with."""
    return f"{TRANSCRIPTS_FOLDER}/{ref.replace(chr(92), '/').rsplit('/', 1)[-1]}"


def _data_card(title: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """A table without accuracies (e.g. perception ratings, the information-gathering
    measures) shown as a table: a measure's mean and 95% CI as ``75% [74-77]``, never as a
    Python dict."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    if "group" in keys and all(_group_repeats(row) for row in rows):
        keys.remove("group")  # "offline / Neurology" repeats the columns beside it
    cells = [[_data_cell(k, row.get(k)) for k in keys] for row in rows]
    headers = [BY_NAME[k].label if k in BY_NAME else "n" if k == "encounters"
               else k.replace("_", " ") for k in keys]
    wide = " wide" if len(keys) > 6 else ""
    return (f'<section class="card chart{wide}"><h2>{escape(card_title(title))}</h2>'
            f"{html_table(headers, cells)}</section>")


def _group_repeats(row: Mapping[str, Any]) -> bool:
    """Whether the row's group label is made of the row's other text values."""
    others = [str(v) for k, v in row.items() if k != "group" and isinstance(v, str)]
    group = str(row.get("group", ""))
    return bool(others) and all(v in group for v in others) and len(group) <= sum(
        len(v) + 3 for v in others)


def _data_cell(key: str, value: Any) -> str:
    if isinstance(value, Mapping) and key in BY_NAME:
        mean, low, high, n = (value.get(k) for k in ("mean", "ci_low", "ci_high", "n"))
        return MeanCI(mean, low, high, int(n or 0)).text(BY_NAME[key].percent)
    return fmt(value)


def _record_row(r: ResultRecord, note: str | None) -> list[Any]:
    # NaN is not JSON; a clock glitch must not cost the whole report.
    values = {**r.model_dump(include=set(RECORD_FIELDS)), "doctor": r.doctor,
              "tests": r.tests_requested, "note": note, "patient": r.models.get("patient"),
              "duration_s": r.duration_s if math.isfinite(r.duration_s) else None}
    return [values.get(name) for name in RECORD_FIELDS]


def _transcript_data(t: Transcript) -> dict[str, Any]:
    """The parts of a transcript the viewer shows; per-utterance usage would only bloat it.

    Images stay references shown as text: the page must load nothing from elsewhere.
    """
    return {"u": [[u.turn, u.role, u.kind, u.text, u.detail, u.model, u.images]
                  for u in t.utterances],
            "diagnosis": t.diagnosis,
            "verdict": t.verdict.model_dump() if t.verdict else None}


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no "</script>" or "<!--" can appear in it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _header(run: str, summary: Mapping[str, Any], records: Sequence[ResultRecord],
            skipped: int) -> str:
    """Headline numbers from the records, then the run's settings from the summary."""
    judged = [r for r in records if r.outcome != "error"]
    correct = sum(r.outcome == "correct" for r in judged)
    doctors = len({r.doctor for r in records})
    pooled = ", ".join(filter(None, [f"{doctors} doctor models" if doctors > 1 else "",
                                     pooled_over(records).removeprefix("pooled over ")]))
    kpis = [("encounters", str(len(records)), ""),
            ("accuracy" + (f", pooled over {pooled}" if pooled else ""),
             pct(correct / len(judged) if judged else None), "accent"),
            ("correct", str(correct), "ok"),
            ("incorrect", str(sum(r.outcome == "incorrect" for r in records)), "bad"),
            ("no diagnosis", str(sum(r.outcome == "no_diagnosis" for r in records)), "warn"),
            *([("limit", str(sum(r.outcome == "limit" for r in records)), "warn")]
              if any(r.outcome == "limit" for r in records) else []),
            ("errors", str(len(records) - len(judged)), "err")]
    tiles = "".join(f'<div class="kpi {cls}"><div class="kv">{escape(v)}</div>'
                    f'<div class="kl">{escape(k)}</div></div>' for k, v, cls in kpis)
    settings: list[tuple[str, str]] = []
    roles = summary.get("roles")
    if isinstance(roles, Mapping):
        settings += [(f"{role} model", str(model)) for role, model in roles.items()]
    # The usual settings first, then keys added later (CRAFT-MD conditions, ...) if short.
    first = ("plugin_version", "turn_budgets", "repeat", "cache_mode", "temperature", "items")
    skip = {"version", "run", "roles", "case_files", "tables", "by_doctor", "conditions",
            "gate", "command"}
    for key in [*(k for k in first if k in summary), *(k for k in summary if k not in first)]:
        value = summary[key]
        if (key not in skip and value not in (None, "", []) and not isinstance(value, Mapping)
                and len(fmt(value)) < 80):
            settings.append((key.replace("_", " "), fmt(value)))
    items = "".join(f"<div><dt>{escape(k)}</dt><dd>{escape(v)}</dd></div>" for k, v in settings)
    files = summary.get("case_files")
    files_html = ""
    if isinstance(files, Mapping) and files:
        lis = "".join(f"<li><code>{escape(str(f))}</code> <span class=\"muted\">sha256 "
                      f"{escape(str(h)[:12])}</span></li>" for f, h in files.items())
        files_html = f"<details><summary>{len(files)} case files</summary><ul>{lis}</ul></details>"
    if summary.get("command"):
        files_html = (f'<p class="small">command line: <code>{escape(str(summary["command"]))}'
                      f"</code></p>{files_html}")
    warn = (f'<p class="warning">{skipped} unreadable line(s) of results.jsonl were skipped.</p>'
            if skipped else "")
    settings_html = (f'<section class="card settings"><h2>Run settings</h2><dl>{items}</dl>'
                     f"{files_html}</section>" if items or files_html else "")
    return (f'<h1>AgentClinic report <span class="run">{escape(run)}</span></h1>{warn}'
            f'<section class="kpis">{tiles}</section>{_gate_card(summary.get("gate"))}'
            f"{_usage_cards(records)}{settings_html}")


def _gate_card(gate: Any) -> str:
    """The gate's verdict and each check's line, when the run had a gate."""
    if not isinstance(gate, Mapping):
        return ""
    verdict = str(gate.get("verdict", "?"))
    lines = "".join(f'<li class="{"ok" if c.get("passed") else "bad"}">{escape(str(line))}</li>'
                    for c in gate.get("checks", []) if isinstance(c, Mapping)
                    for line in c.get("lines", []))
    return (f'<section class="card gate {verdict.lower()}"><h2>Gate {escape(verdict)}</h2>'
            f'<p class="muted small">The exit status is the gate\'s verdict.</p>'
            f"<ul>{lines}</ul></section>")


def _usage_cards(records: Sequence[ResultRecord]) -> str:
    """One card per role and model: tokens, cost and seconds per call (the table is below)."""
    rows = usage_table(records).data
    if not rows:
        return ""
    cards = []
    for u in rows:
        tokens = u["prompt_tokens"] + u["completion_tokens"]
        latency = "" if u["mean_latency_s"] is None else f" · {u['mean_latency_s']:.2f} s/call"
        cards.append(f'<div class="kpi usage"><div class="kl">{escape(u["role"])}</div>'
                     f'<div class="um" title="{escape(u["model"])}">{escape(u["model"])}</div>'
                     f'<div class="uv">{tokens:,} tokens · ${u["cost_usd"]:.4f}{latency}</div>'
                     f'<div class="kl">{u["calls"]} calls, {u["cache_hits"]} cached</div></div>')
    return f'<section class="kpis usage-cards">{"".join(cards)}</section>'



