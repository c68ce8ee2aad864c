"""``summary.md``: the run as a person reads it (and as CI shows it in the job summary).

Everything is rendered as text or markdown tables: no Python reprs of dicts or lists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .summary import render_table
from .tables import Table

#: Settings shown as ``- name: value`` lines, in this order, with their labels.
SETTING_LABELS = (
    ("date", "date"), ("duration_s", "duration"), ("command", "command line"),
    ("plugin_version", "pytest-agentclinic"), ("litellm_version", "litellm"),
    ("protocol", "protocol"), ("turn_budgets", "turn budgets"), ("biases", "biases"),
    ("image_modes", "image modes"), ("experiments", "CRAFT-MD experiments"),
    ("answer_modes", "CRAFT-MD answer modes"), ("repeat", "repeats per case"),
    ("cache_mode", "cache mode"), ("temperature", "temperature"), ("api_base", "api base"),
    ("sampling", "sampling"), ("served_models", "served models"), ("shard", "shard"),
    ("subset", "subset"), ("grading_policy", "grading policy"),
    ("stopped_on_cost", "stopped on cost"),
    ("items", "items"), ("bad_case_records", "bad case records"),
    ("model_calls", "model calls"), ("cache_hits", "cache hits"),
)


def text(value: Any) -> str:
    """A setting's value as plain text: lists joined, mappings as ``k=v``, durations in s."""
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={text(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(text(v) for v in value) or "-"
    if value is None:
        return "-"
    return str(value)


def _settings(summary: Mapping[str, Any]) -> list[str]:
    lines = []
    roles = summary.get("roles")
    if isinstance(roles, Mapping):
        lines += [f"- {role} model: {text(model)}" for role, model in roles.items()]
    for key, label in SETTING_LABELS:
        if key not in summary or summary[key] in (None, "", []):
            continue
        value = summary[key]
        if key == "duration_s":
            lines.append(f"- {label}: {float(value):.1f} s")
        elif key == "command":
            lines.append(f"- {label}: `{value}`")
        else:
            lines.append(f"- {label}: {text(value)}")
    parts = summary.get("merged_from")
    if isinstance(parts, list) and parts:
        lines.append("- merged from: " + ", ".join(
            f"{p.get('run')} ({'shard ' + str(p['shard']) + ', ' if p.get('shard') else ''}"
            f"{p.get('items')} items)" for p in parts if isinstance(p, Mapping)))
    files = summary.get("case_files")
    if isinstance(files, Mapping) and files:
        lines.append("- case files: " + ", ".join(f"{k} (sha256 {str(v)[:12]})"
                                                  for k, v in files.items()))
    return lines


def gate_lines(gate: Mapping[str, Any] | None) -> list[str]:
    """The gate's verdict and each check's lines, as markdown."""
    if not gate:
        return ["No gate was set: the exit status is pytest's (a misdiagnosis fails its item)."]
    lines = [f"**gate {gate.get('verdict', '?')}** (the exit status is the gate's verdict)", ""]
    for check in gate.get("checks", []):
        mark = "pass" if check.get("passed") else "FAIL"
        for line in check.get("lines", []):
            lines.append(f"- [{mark}] {line}")
    return lines


def render_markdown(summary: Mapping[str, Any], tables: Sequence[Table]) -> str:
    """The whole of summary.md: the decision and its numbers first (a CI job summary is read
    from the top), then the first table (accuracy by doctor model), the settings, and the
    other tables."""
    gate = summary.get("gate")
    verdict = f": gate {gate.get('verdict', '?')}" if isinstance(gate, Mapping) else ""
    lines = [f"# agentclinic run {summary.get('run')}{verdict}", "", *gate_lines(gate)]
    for i, table in enumerate(tables):
        lines += ["", f"## {table.title}", "", render_table(table)]
        if table.note:
            lines += ["", table.note]
        if i == 0:
            lines += ["", "## Settings", "", *_settings(summary)]
    if not tables:
        lines += ["", "## Settings", "", *_settings(summary)]
    return "\n".join(lines) + "\n"


def append_step_summary(summary_md: os.PathLike[str]) -> None:
    """Append summary.md to GitHub Actions' job summary when the job provides one."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as out, open(summary_md, encoding="utf-8") as src:
        out.write(src.read() + "\n")
