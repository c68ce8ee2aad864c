"""SVG charts and the small HTML pieces of the report's cards.

Plots are drawn as inline SVG strings so the page needs no charting library and loads nothing
from elsewhere; the page's CSS (``html_template.html``) styles the classes used here.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..core.records import ResultRecord

SERIES_COLOURS = ("#2563eb", "#db2777", "#059669", "#d97706", "#7c3aed", "#0891b2",
                   "#dc2626", "#4b5563")


def bar_chart(title: str, rows: Sequence[Mapping[str, Any]],
              colours: Mapping[str, str] | None = None) -> str:
    """A card with a horizontal bar chart of accuracy and its 95% CI, and the numbers.

    Rows of several doctor models (a ``doctor`` key, or a group ending in ``" | model"`` for
    a model in ``colours``) are clustered by group and coloured by model, with a legend.
    """
    colours = colours or {}
    placed, legend = _bar_rows(rows, colours)
    # The viewBox is about the card's width in the two-column grid, so text is drawn ~1:1.
    # Room for the longest label on one line (see _label) up to LABEL_MAX_W.
    label_w = min(LABEL_MAX_W, 18 + _text_w(max((len(label) for label, *_ in placed),
                                                   default=8)))
    values = [_value_label(row) for *_, row, _ in placed]
    # Room for the longest value label ("36.3% · 29076/80000") at a wide font's width; the
    # label is anchored at the chart's right edge, so whatever font the reader's browser
    # draws it in, it ends inside the chart (at 7.6 px a character assumed, DejaVu Sans' 7.9
    # ran it 20 px past the edge).
    width, row_h = 600, 28
    text_w = max(112, 16 + _text_w(max((len(v) for v in values), default=0)))
    plot_w = width - label_w - text_w
    top, bottom = (placed[0][3], placed[-1][3] + row_h) if placed else (8, 8)
    parts = [_svg_open(width, bottom + 30, title), _x_grid(label_w, plot_w, top, bottom)]
    if legend:
        parts.append(_legend(legend, colours, label_w, 14, plot_w + text_w))
    for label, doctor, row, y0 in placed:
        acc, low, high = (_num(row.get(k)) for k in ("accuracy", "ci_low", "ci_high"))
        mid, group = y0 + row_h / 2, str(row.get("group", ""))
        parts.append(f'<g class="row" data-group="{escape(group)}">'
                     f"<title>{escape(_row_tip(group, row, acc, low, high))}</title>")
        if label:
            parts.append(_label(label, label_w - 10, mid))
        if acc is None:
            parts.append(f'<text class="na" x="{label_w + 6}" y="{mid + 4:.1f}">no judged '
                         f"encounters</text></g>")
            continue
        fill = f' style="fill:{colours[doctor]}"' if doctor else ""
        parts.append(f'<rect class="bar" x="{label_w}" y="{y0 + 7}" height="{row_h - 14}" '
                     f'width="{acc * plot_w:.1f}" rx="3"{fill}/>')
        if low is not None and high is not None:
            x1, x2 = label_w + low * plot_w, label_w + high * plot_w
            parts.append(f'<path class="ci" d="M{x1:.1f} {mid:.1f}H{x2:.1f}'
                         f'M{x1:.1f} {mid - 6:.1f}v12M{x2:.1f} {mid - 6:.1f}v12"/>')
        value = _value_label(row)
        parts.append(f'<text class="value" x="{width - VALUE_MARGIN}" y="{mid + 4:.1f}" '
                     f'text-anchor="end">{escape(value)}</text></g>')
    parts.append("</svg>")
    return card(card_title(title), "".join(parts),
                 "Bars: correct / judged encounters (errors excluded); whiskers: 95% CI.",
                 _numbers_table(rows))


_Placed = tuple[str, str | None, Mapping[str, Any], int]

#: The widest a bar chart's label column gets (of its 600 px): longer labels take two lines.
LABEL_MAX_W = 250
#: Width of one character of the 12.5 px labels, on the safe side: DejaVu Sans, the widest
#: common sans, draws digits and capitals at ~0.64 em (7.9 px); Liberation Sans and Arial at
#: ~0.56 em. Only room is sized with it: text is anchored so that it ends inside the chart.
CHAR_W = 8.2
#: The value labels end this far inside the chart's right edge.
VALUE_MARGIN = 6


#: Sizes are estimated at :data:`CHAR_W`; the page (its script, ``html_template.html``)
#: measures each label with a room (``data-room``, in the chart's units) in the font the
#: reader's browser has, and squeezes one that does not fit to its room: a label is never
#: cut off at the chart's edge. The same code, for a page of charts alone.
FIT_JS = ('document.querySelectorAll("svg [data-room]").forEach(function (t) {'
          ' var room = +t.getAttribute("data-room");'
          ' if (t.getComputedTextLength() > room) {'
          ' t.setAttribute("textLength", room);'
          ' t.setAttribute("lengthAdjust", "spacingAndGlyphs"); } });')


def _text_w(chars: int) -> int:
    return math.ceil(CHAR_W * chars)


def _label(label: str, right: float, mid: float) -> str:
    """A bar's label, right-aligned at ``right``: on one line if it fits the label column,
    else on two (the second shortened with "…"); never wider than the column."""
    chars = int((right - 6) / CHAR_W + 1e-9)
    room = f'data-room="{right - 2:g}"'  # measured in the page (FIT_SCRIPT)
    if len(label) <= chars:
        return (f'<text class="label" x="{right}" y="{mid + 4:.1f}" text-anchor="end" {room}>'
                f"{escape(label)}</text>")
    lines = textwrap.wrap(label, chars, break_long_words=True, break_on_hyphens=False)
    second = " ".join(lines[1:])
    spans = (f'<tspan x="{right}" y="{mid - 2:.1f}" {room}>{escape(lines[0])}</tspan>'
             f'<tspan x="{right}" y="{mid + 10:.1f}" {room}>'
             f"{escape(_shorten(second, chars))}</tspan>")
    return f'<text class="label two" text-anchor="end">{spans}</text>'


def _value_label(row: Mapping[str, Any]) -> str:
    acc = _num(row.get("accuracy"))
    if acc is None:
        return ""
    return f"{acc:.1%} · {row.get('correct', '?')}/{row.get('n', '?')}"


def _bar_rows(rows: Sequence[Mapping[str, Any]],
              colours: Mapping[str, str]) -> tuple[list[_Placed], list[str]]:
    """Each bar's label (blank within a cluster), colour key and top y; the legend's models."""
    split = [_split_group(row, colours) for row in rows]
    legend = [d for d in colours if any(d == doctor for _, doctor in split)]
    if len(legend) < 2 or any(doctor not in colours for _, doctor in split):
        return [(label, None, row, 8 + 28 * i)
                for i, ((label, _), row) in enumerate(zip(split, rows, strict=True))], []
    order = list(dict.fromkeys(label for label, _ in split))
    if all(label.isdigit() for label in order):  # turn budgets: 5, 10, 20, not 10, 20, 5
        order.sort(key=int)
    items = sorted(zip(split, rows, strict=True),
                   key=lambda it: (order.index(it[0][0]), legend.index(it[0][1] or "")))
    placed: list[_Placed] = []
    y, last = 22, None  # below the legend; clusters 8 apart
    for (label, doctor), row in items:
        y += 8 if label != last else 0
        placed.append(("" if label == last else label, doctor, row, y))
        y, last = y + 28, label
    return placed, legend


def budget_chart(records: Sequence[ResultRecord],
                 colours: Mapping[str, str] | None = None) -> str:
    """SVG line chart of accuracy against turn budget, one line per doctor model."""
    budgets = sorted({r.turn_budget for r in records})
    doctors = sorted({r.doctor for r in records})
    colours = colours or {d: SERIES_COLOURS[i % len(SERIES_COLOURS)]
                          for i, d in enumerate(doctors)}
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
        parts.append(f'<text class="tick" x="{xy(b, 0)[0]:.1f}" y="{top + plot_h + 18}" '
                     f'text-anchor="middle">{b}</text>')
    parts.append(f'<text class="axis" x="{left + plot_w / 2}" y="{top + plot_h + 36}" '
                 f'text-anchor="middle">turn budget (doctor interactions)</text>')
    for doctor in doctors:
        points = [(b, *tally[doctor, b]) for b in budgets if tally.get((doctor, b), [0, 0])[1]]
        coords = [xy(b, c / n) for b, c, n in points]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(f'<g class="series" data-doctor="{escape(doctor)}" '
                     f'style="color:{colours.get(doctor, SERIES_COLOURS[0])}">'
                     f'<polyline points="{path}"/>')
        for (b, c, n), (x, y) in zip(points, coords, strict=True):
            tip = f"{doctor}, budget {b}: {c}/{n} correct ({c / n:.1%})"
            parts.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4.5">'
                         f"<title>{escape(tip)}</title></circle>")
        parts.append("</g>")
    parts.append(_legend(doctors, colours, left, top + plot_h + 58, plot_w))
    parts.append("</svg>")
    return "".join(parts)


def _split_group(row: Mapping[str, Any], doctors: Mapping[str, str]) -> tuple[str, str | None]:
    """A row's label without its doctor model, and that model (None when it has none)."""
    group = str(row.get("group", ""))
    doctor = row.get("doctor")
    head, sep, tail = group.rpartition(" | ")
    if doctor is None and sep and tail in doctors:
        doctor = tail
    if doctor is not None and sep and tail == str(doctor):
        group = head
    return group, None if doctor is None else str(doctor)


def _legend(doctors: Sequence[str], colours: Mapping[str, str], x0: float, y0: float,
            width: float) -> str:
    """Swatches and names, three to a line."""
    out = []
    chars = max(6, int((width / 3 - 24) / CHAR_W))  # a name must not run into the next
    for i, doctor in enumerate(doctors):
        x, y = x0 + (i % 3) * (width / 3), y0 + 18 * (i // 3)
        out.append(f'<g class="legend-item"><rect x="{x:.1f}" y="{y - 9}" width="14" '
                   f'height="8" rx="2" style="fill:{colours.get(doctor, SERIES_COLOURS[0])}"/>'
                   f'<text class="legend" x="{x + 20:.1f}" y="{y}">'
                   f"{escape(_shorten(doctor, chars))}</text></g>")
    return "".join(out)


def card(title: str, body: str, note: str, extra: str = "") -> str:
    return (f'<section class="card chart"><h2>{escape(title)}</h2>'
            f'<p class="muted small">{escape(note)}</p>{body}{extra}</section>')


def _numbers_table(rows: Sequence[Mapping[str, Any]]) -> str:
    cells = []
    for row in rows:
        acc, low, high = (_num(row.get(k)) for k in ("accuracy", "ci_low", "ci_high"))
        cells.append([str(row.get("group", "")), fmt(row.get("n")), fmt(row.get("correct")),
                      pct(acc), _ci(low, high), fmt(row.get("errors"))])
    table = html_table(("group", "n", "correct", "accuracy", "95% CI", "errors"), cells)
    return f'<details class="numbers"><summary>numbers</summary>{table}</details>'


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    # In a scroller of its own: a wide table must not widen the card, the grid and the page.
    return (f'<div class="table-scroll"><table class="data"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def card_title(title: str) -> str:
    """ "by specialty" reads as "Accuracy by specialty"; other titles keep their words."""
    title = title.strip()
    if title.lower().startswith("by "):
        title = "accuracy " + title
    return title[:1].upper() + title[1:]


def pct(value: float | None) -> str:
    return "\u2013" if value is None else f"{value:.1%}"


def _ci(low: float | None, high: float | None) -> str:
    return "\u2013" if low is None or high is None else f"{low:.1%}\u2013{high:.1%}"


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
    return (f"{group}: {row.get('correct', '?')}/{row.get('n', '?')} correct ({pct(acc)}), "
            f"95% CI {_ci(low, high)}, {row.get('errors', 0)} errors")


def _num(value: Any) -> float | None:
    """A finite float in [0, 1] or None: NaN and missing values draw nothing."""
    try:
        number = float(value)  # None and text raise; numpy floats convert
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, number)) if math.isfinite(number) else None


def fmt(value: Any) -> str:
    """A cell's value as text: a mean with its interval as ``0.42 [0.31, 0.55]``, a mapping
    as ``k=v``; never a Python repr."""
    if value is None:
        return "\u2013"
    if isinstance(value, Mapping):
        if "mean" in value:
            interval = ("" if value.get("ci_low") is None or value.get("ci_high") is None
                        else f" [{fmt(value['ci_low'])}, {fmt(value['ci_high'])}]")
            return fmt(value["mean"]) + interval
        return ", ".join(f"{k}={fmt(v)}" for k, v in value.items()) or "\u2013"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
