"""``agentclinic compare A B --html OUT``: the comparison of two runs as one page.

Self-contained like report.html: per group, both accuracies and the difference B - A with
its 95% CI drawn around zero, the p-values, then the items that flipped, each linking to
its transcript in both runs (relative links, so the page works from a CI artefact that
holds the two run directories beside it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path

from ..core.records import ResultRecord
from .charts import html_table
from .comparison import ComparisonRow, Pair, Pairing

_CSS = """
body{margin:0;background:#f5f6f8;color:#1f2937;font:14px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,Arial,sans-serif}.wrap{max-width:1240px;margin:0 auto;padding:24px 20px 60px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:15px;margin:0 0 6px}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:16px 18px;
margin-bottom:16px;overflow-x:auto}.muted{color:#6b7280}code{font-size:12.5px}
table.data{border-collapse:collapse;font-size:12.5px;font-variant-numeric:tabular-nums}
table.data th,table.data td{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:right;
white-space:nowrap}table.data th{color:#6b7280}table.data td:first-child,
table.data th:first-child{text-align:left}svg{width:100%;max-width:760px;height:auto}
svg .zero{stroke:#6b7280}svg .grid{stroke:#e5e7eb}svg text{font-size:12px;fill:#1f2937}
svg .tick{fill:#6b7280;font-size:11px}svg .worse{fill:#f87171}svg .better{fill:#4ade80}
svg .ci{stroke:#1e3a8a;stroke-width:1.6;fill:none}
ul.flips{margin:4px 0 10px;padding-left:18px}ul.flips li{margin:2px 0}
"""


def _diff_chart(rows: Sequence[ComparisonRow]) -> str:
    """Horizontal bars of B - A around a zero line, with CI whiskers; one row per group."""
    span = max([0.05, *(max(abs(r.ci_low), abs(r.ci_high), abs(r.difference)) for r in rows)])
    label_w, value_w, width, row_h = 200, 200, 760, 26
    plot_w = width - label_w - value_w
    zero = label_w + plot_w / 2

    def x(v: float) -> float:
        return zero + v / span * plot_w / 2

    height = 12 + row_h * len(rows) + 24
    parts = [f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="B - A by group">']
    for frac in (-1, -0.5, 0, 0.5, 1):
        gx = x(frac * span)
        parts.append(f'<path class="{"zero" if frac == 0 else "grid"}" d="M{gx:.1f} 8V'
                     f'{height - 20}"/><text class="tick" x="{gx:.1f}" y="{height - 6}" '
                     f'text-anchor="middle">{frac * span:+.0%}</text>')
    for i, r in enumerate(rows):
        mid = 12 + row_h * i + row_h / 2
        left, right = sorted((x(0), x(r.difference)))
        cls = "worse" if r.difference < 0 else "better"
        parts.append(
            f'<text x="{label_w - 8}" y="{mid + 4:.1f}" text-anchor="end">'
            f"{escape(_label(r))}</text>"
            f'<rect class="{cls}" x="{left:.1f}" y="{mid - 7:.1f}" width="{right - left:.1f}" '
            f'height="14" rx="2"/><path class="ci" d="M{x(r.ci_low):.1f} {mid:.1f}H'
            f'{x(r.ci_high):.1f}M{x(r.ci_low):.1f} {mid - 6:.1f}v12M{x(r.ci_high):.1f} '
            f'{mid - 6:.1f}v12"/><text x="{label_w + plot_w + 8}" y="{mid + 4:.1f}">'
            f"{r.difference:+.1%} [{r.ci_low:+.1%}, {r.ci_high:+.1%}]</text>")
    parts.append("</svg>")
    return "".join(parts)


def _label(row: ComparisonRow) -> str:
    """A group's name; the row over every pair says it pools the groups."""
    if row.key:
        return row.label[:32]
    return "all (pooled)" if row.by else "all"


def _rows_table(by: Sequence[str], rows: Sequence[ComparisonRow]) -> str:
    head = [*(by or ["group"]), "pairs", "cases", "acc A", "acc B", "B - A", "95% CI",
            "p boot", "p McNemar", "p cases", "Holm boot"]
    body = [[*(r.key or (_label(r), *[""] * (max(len(by), 1) - 1))), str(r.n_pairs), str(r.cases),
             f"{r.accuracy_a:.1%}", f"{r.accuracy_b:.1%}", f"{r.difference:+.1%}",
             f"[{r.ci_low:+.1%}, {r.ci_high:+.1%}]", f"{r.p_bootstrap:.4f}",
             f"{r.p_mcnemar:.2g}", f"{r.p_cases:.4f}", f"{r.p_holm_bootstrap:.4f}"]
            for r in rows]
    return html_table(head, body)


def transcript_link(record: ResultRecord, run_dir: Path, out_dir: Path, text: str) -> str:
    """A relative link to the record's transcript file, or the text alone when it is gone."""
    if record.transcript:
        ref = Path(record.transcript)
        for candidate in (ref, run_dir / ref, run_dir / "transcripts" / ref.name):
            if candidate.is_file():
                href = os.path.relpath(candidate.resolve(), out_dir.resolve())
                return f'<a href="{escape(Path(href).as_posix())}">{escape(text)}</a>'
    return f'<span class="muted">{escape(text)} (no transcript)</span>'


def _flip_list(pairs: Sequence[Pair], runs: tuple[Path, Path], out_dir: Path,
               limit: int) -> str:
    items = []
    for a, b in pairs[:limit]:
        condition = ", ".join(f"{k}={v}" for k, v in (
            ("bias", a.bias), ("budget", a.turn_budget), ("experiment", a.experiment),
            ("answer", a.answer_format)) if v not in (None, "none"))
        items.append(
            f"<li><code>{escape(a.case_id)}</code> r{a.sample}"
            f'{" · " + escape(condition) if condition else ""}: A said '
            f"<i>{escape(a.given or 'nothing')}</i>, B said <i>{escape(b.given or 'nothing')}"
            f"</i> (expected {escape(a.expected)}) · "
            f"{transcript_link(a, runs[0], out_dir, 'A transcript')} · "
            f"{transcript_link(b, runs[1], out_dir, 'B transcript')}</li>")
    more = (f'<li class="muted">... and {len(pairs) - limit} more</li>'
            if len(pairs) > limit else "")
    return f'<ul class="flips">{"".join(items)}{more}</ul>' if items else "<p>none</p>"


def render_compare_html(names: tuple[str, str], runs: tuple[Path, Path], pairing: Pairing,
                        tables: Sequence[tuple[Sequence[str], Sequence[ComparisonRow]]],
                        out: Path, limit: int = 200) -> str:
    """The comparison page; ``tables`` as printed (the ``all`` row last in each)."""
    out_dir = out.parent
    why = "".join(f"<li>{escape(line)}</li>" for line in pairing.why_unpaired)
    sections = []
    for by, rows in tables:
        title = "B - A by " + ", ".join(by) if by else "B - A over all pairs"
        sections.append(f'<section class="card"><h2>{escape(title)}</h2><p class="muted">'
                        "Bars: difference in accuracy over the paired items; whiskers: 95% "
                        "CI (paired bootstrap over cases); p cases: sign-flip test over cases."
                        f"</p>{_diff_chart(rows)}{_rows_table(by, rows)}</section>")
    worse = [(a, b) for a, b in pairing.pairs
             if a.outcome == "correct" and b.outcome != "correct"]
    better = [(a, b) for a, b in pairing.pairs
              if a.outcome != "correct" and b.outcome == "correct"]
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name='
            f'"viewport" content="width=device-width, initial-scale=1"><title>AgentClinic '
            f"comparison</title><style>{_CSS}</style></head><body><div class=\"wrap\">"
            f"<h1>AgentClinic comparison</h1><section class=\"card\"><p>A: <code>"
            f"{escape(names[0])}</code><br>B: <code>{escape(names[1])}</code></p><p>paired "
            f"{len(pairing.pairs)} judged items; {pairing.only_a} only in A, {pairing.only_b} "
            f"only in B, {pairing.errors} pairs dropped for an error</p>"
            f'{f"<ul>{why}</ul>" if why else ""}</section>{"".join(sections)}'
            f'<section class="card"><h2>Right in A, wrong in B ({len(worse)})</h2>'
            f"{_flip_list(worse, runs, out_dir, limit)}<h2>Wrong in A, right in B "
            f"({len(better)})</h2>{_flip_list(better, runs, out_dir, limit)}</section>"
            f"</div></body></html>")
