"""Convert upstream case files into the project's YAML case format (``cases/README.md``).

Inputs: anything :func:`~.loaders.load_case_file` reads (AgentClinic MedQA/OSCE and NEJM
JSONL, project JSON/YAML) and the CRAFT-MD vignette CSV (``case_vignette, choice_1..choice_4,
answer, category, dataset, case_id``). The YAML written loads back into equal :class:`Case`
objects: :func:`round_trip_problems` checks exactly that for every file written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..core.case import Case
from .errors import CaseError
from .loaders import load_case_file, looks_like_case_file
from .vignettes import Converted, read_craftmd_csv

YAML_WIDTH = 100


# ---------------------------------------------------------------- any input


def read_input(path: Path) -> Converted:
    """Read one input file of any supported upstream format."""
    if path.suffix.lower() == ".csv":
        return read_craftmd_csv(path)
    if not looks_like_case_file(path):
        error = CaseError(path, 1, "<file>", "not a CRAFT-MD CSV nor a known case file format")
        return Converted(path, "unknown", errors=[error])
    loaded = load_case_file(path)
    return Converted(path, loaded.format, [c for _, c in loaded.cases], list(loaded.errors))


# ---------------------------------------------------------------- YAML output


class _Dumper(yaml.SafeDumper):
    """Block style for long or multi-line strings, flow style for short lists."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    # Multi-line text goes literal: PyYAML's folded style mangles indented lines ("   - x").
    # The emitter falls back to a quoted style when a block style cannot round-trip.
    style = "|" if "\n" in text else (">" if len(text) > YAML_WIDTH - 20 else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def _represent_list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.Node:
    short = all(isinstance(i, str) and "\n" not in i for i in items) and (
        sum(len(str(i)) + 2 for i in items) < YAML_WIDTH - 20)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=short)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


def dump_cases(cases: Sequence[Case]) -> str:
    """The YAML document of ``cases`` (``dataset`` at the top, per case only where it differs)."""
    dataset = Counter(c.dataset for c in cases).most_common(1)[0][0] if cases else "cases"
    records = []
    for case in cases:
        record = case.model_dump(mode="json", exclude_defaults=True)
        if record.get("dataset") == dataset:
            del record["dataset"]
        records.append(record)
    return yaml.dump({"dataset": dataset, "cases": records}, Dumper=_Dumper, sort_keys=False,
                     allow_unicode=True, width=YAML_WIDTH - 10,  # PyYAML overshoots by a word
                     default_flow_style=False)


def plan_outputs(converted: Iterable[Converted], out_dir: Path,
                 per_specialty: bool = False) -> dict[Path, list[Case]]:
    """Which cases go to which file: one per input (its stem), or one per specialty."""
    plan: dict[Path, list[Case]] = {}
    for item in converted:
        if not per_specialty:
            plan.setdefault(out_dir / f"{item.source.stem}.yaml", []).extend(item.cases)
            continue
        for case in item.cases:
            plan.setdefault(out_dir / f"{case.specialty_marker}.yaml", []).append(case)
    return plan


def round_trip_problems(path: Path, cases: Sequence[Case]) -> list[str]:
    """Differences between ``cases`` and what ``path`` loads back (empty when equal)."""
    loaded = load_case_file(path)
    problems = [str(e) for e in loaded.errors]
    back = [c for _, c in loaded.cases]
    if len(back) != len(cases):
        problems.append(f"{path}: {len(cases)} cases written, {len(back)} read back")
    problems += [f"{path}: case {a.id} changed in the round trip"
                 for a, b in zip(cases, back, strict=False) if a != b]
    return problems


def duplicate_ids(cases: Iterable[Case]) -> list[str]:
    """Case ids that occur more than once."""
    return [i for i, n in Counter(c.id for c in cases).items() if n > 1]
