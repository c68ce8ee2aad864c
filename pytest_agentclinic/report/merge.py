"""Join the runs of several machines (``--agent-shard K/N``) into one run directory.

The merged directory is an ordinary run: ``agentclinic report``, ``compare``, the gate and
``--agent-baseline`` read it like any other. What makes a merge wrong is refused, with one
line saying which runs and why: the same item in two runs (overlapping shards, or one run
given twice), the same shard twice, a missing shard (unless ``partial``), shards of different
counts, and runs whose settings differ (another model, budget, sampling...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InputError, RunDirectoryError
from ..core.records import ResultRecord
from ..runs import directory as store
from ..runs import transcripts
from ..runs.summary import build_summary

#: Summary fields that must be equal in every merged run: they decide what was measured.
MUST_AGREE = ("protocol", "roles", "turn_budgets", "biases", "image_modes", "experiments",
              "answer_modes", "repeat", "sampling", "cache_mode")
#: Summary fields that are counts: the merged run's value is the sum.


class MergeError(InputError):
    """The runs cannot be merged; the message says which and why."""


@dataclass(frozen=True)
class RunPart:
    """One run to merge: its directory, records and summary."""

    directory: Path
    records: list[ResultRecord]
    summary: dict[str, Any]

    @property
    def shard(self) -> tuple[int, int] | None:
        """(K, N) when the run was a shard."""
        label = self.summary.get("shard")
        if not label:
            return None
        k, _, n = str(label).partition("/")
        return int(k), int(n)


def load_part(path: str | Path) -> RunPart:
    """Read one run (a directory, its results.jsonl or summary.json)."""
    try:
        results = store.results_path(path)
        records = store.load_records(results)
    except (RunDirectoryError, InputError) as exc:  # no run there, a bad record
        raise MergeError(str(exc)) from None
    return RunPart(results.parent, records, store.read_summary(results.parent))


def check(parts: Sequence[RunPart], *, partial: bool = False) -> None:
    """Refuse overlapping, duplicate, missing or inconsistent runs."""
    if len(parts) < 2:
        raise MergeError("give at least two runs to merge")
    _check_overlap(parts)
    _check_shards(parts, partial)
    first = parts[0]
    for part in parts[1:]:
        for key in MUST_AGREE:
            if first.summary.get(key) != part.summary.get(key):
                raise MergeError(
                    f"{first.directory} and {part.directory} differ in {key}: "
                    f"{first.summary.get(key)!r} vs {part.summary.get(key)!r}")


def _check_overlap(parts: Sequence[RunPart]) -> None:
    directories = [p.directory.resolve() for p in parts]
    for i, directory in enumerate(directories):
        if directory in directories[:i]:
            raise MergeError(f"{parts[i].directory} is given twice")
    seen: dict[str, Path] = {}
    for part in parts:
        for record in part.records:
            other = seen.setdefault(record.nodeid, part.directory)
            if other != part.directory:
                raise MergeError(f"{other} and {part.directory} both hold {record.nodeid} "
                                 f"(overlapping shards, or the same run given twice)")


def _check_shards(parts: Sequence[RunPart], partial: bool) -> None:
    shards = [p.shard for p in parts]
    if all(s is None for s in shards):
        return
    if any(s is None for s in shards):
        unsharded = next(p.directory for p in parts if p.shard is None)
        raise MergeError(f"{unsharded} is not a shard, but other runs are")
    counts = {s[1] for s in shards if s}
    if len(counts) > 1:
        labels = ", ".join(f"{p.directory}: {p.summary.get('shard')}" for p in parts)
        raise MergeError(f"the runs are shards of different counts: {labels}")
    n = counts.pop()
    by_index: dict[int, Path] = {}
    for part in parts:
        assert part.shard is not None
        other = by_index.setdefault(part.shard[0], part.directory)
        if other != part.directory:
            raise MergeError(f"shard {part.shard[0]}/{n} given twice: {other} and "
                             f"{part.directory}")
    missing = sorted(set(range(1, n + 1)) - set(by_index))
    if missing and not partial:
        raise MergeError(f"shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing "
                         f"(--partial merges what there is)")


def merge(parts: Sequence[RunPart], out: Path,
          ) -> tuple[list[ResultRecord], dict[str, Any], int]:
    """Copy the parts' transcripts into ``out``; return the merged records (sorted by node
    id, as a run writes them), the merged summary, and the transcripts not found."""
    if out.exists() and any(out.iterdir()):
        raise MergeError(f"{out} exists and is not empty; give a new directory")
    out.mkdir(parents=True, exist_ok=True)
    records: list[ResultRecord] = []
    lost = 0
    for part in parts:
        for record in part.records:
            path = transcripts.copy_transcript(part.directory, record, out)
            lost += record.transcript is not None and path is None
            records.append(record.model_copy(update={"run": out.name, "transcript": path}))
    records.sort(key=lambda r: r.nodeid)
    return records, merged_summary(parts, out.name, records), lost


def merged_summary(parts: Sequence[RunPart], run: str,
                   records: Sequence[ResultRecord]) -> dict[str, Any]:
    """The first part's settings, with counts summed and lists joined (the one builder,
    :func:`..runs.summary.build_summary`, counts the merged records)."""
    # Tables, the conditions and the gate are the merged records' (a shard's gate judged a
    # shard); the date is the earliest start, the duration the longest machine's.
    header = {k: v for k, v in parts[0].summary.items()
              if k not in ("tables", "by_doctor", "conditions", "gate")}
    header.update(run=run, shard=None)
    summary = build_summary(header, records,
                            sum(int(p.summary.get("bad_case_records") or 0) for p in parts),
                            litellm_version=header.get("litellm_version"))
    dates = [str(p.summary["date"]) for p in parts if p.summary.get("date")]
    durations = [float(p.summary["duration_s"]) for p in parts
                 if isinstance(p.summary.get("duration_s"), (int, float))]
    if dates:
        summary["date"] = min(dates)
    if durations:
        summary["duration_s"] = max(durations)
    files: dict[str, str] = {}
    served: dict[str, set[str]] = {}
    for part in parts:
        files.update(part.summary.get("case_files") or {})
        for model, ids in (part.summary.get("served_models") or {}).items():
            served.setdefault(model, set()).update(ids)
    summary["case_files"] = dict(sorted(files.items()))
    summary["served_models"] = {m: sorted(ids) for m, ids in sorted(served.items())}
    stopped = [p.summary["stopped_on_cost"] for p in parts if p.summary.get("stopped_on_cost")]
    summary["stopped_on_cost"] = ({**stopped[0], "unplayed_items": sum(
        int(s.get("unplayed_items") or 0) for s in stopped)} if stopped else None)
    summary["merged_from"] = [{"run": p.summary.get("run") or p.directory.name,
                               "directory": str(p.directory), "shard": p.summary.get("shard"),
                               "command": p.summary.get("command"),
                               "items": len(p.records)} for p in parts]
    return summary
