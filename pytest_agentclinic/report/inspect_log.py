"""Our runs as Inspect eval logs, so teams that browse evaluations in Inspect View can open
our encounters there.

The one writer of that format here. An Inspect log is one task run by one model, so a run
becomes one log per doctor model (``<run>-<model>.json``, Inspect's JSON log format, version
:data:`INSPECT_LOG_VERSION`). Each item is a sample: its id is the case id (with the
condition when the run varies one, e.g. a bias), its epoch the repeat (1-based), its input
the case's first words to the doctor, its target the expected diagnosis, its output the
doctor's final answer, and its score the moderator's verdict (``C``/``I``; ``N`` for no
diagnosis or a per-encounter limit). The messages are the encounter from the doctor's side:
its own turns are ``assistant`` messages, every other role's words are ``user`` messages
whose ``metadata.role`` says who spoke (patient, measurement, moderator, ...). An item that
ended in an infrastructure error keeps its messages and carries Inspect's ``error`` field.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.records import ResultRecord
from ..core.transcript import Transcript

#: The Inspect log format version written (``EvalLog.version``).
INSPECT_LOG_VERSION = 2
#: Score values: Inspect's conventional letters for correct / incorrect / no answer.
_VALUES = {"correct": "C", "incorrect": "I", "no_diagnosis": "N", "limit": "N"}


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


def _usage(records: Sequence[ResultRecord]) -> dict[str, Any]:
    """Inspect's model_usage: tokens and cost per model (of the roles it played)."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        for role, u in r.usage.items():
            name = r.models.get(role, role)
            entry = out.setdefault(name, {"input_tokens": 0, "output_tokens": 0,
                                          "total_tokens": 0, "total_cost": 0.0})
            entry["input_tokens"] += u.prompt_tokens
            entry["output_tokens"] += u.completion_tokens
            entry["total_tokens"] += u.prompt_tokens + u.completion_tokens
            entry["total_cost"] += u.cost_usd
    return out


def _messages(t: Transcript | None) -> list[dict[str, Any]]:
    if t is None:
        return []
    return [{"role": "assistant" if u.role == "doctor" else "user", "content": u.text,
             "source": "generate" if u.role == "doctor" else "input",
             "metadata": {"role": u.role, "kind": u.kind, "turn": u.turn, "model": u.model}}
            for u in t.utterances]


def _sample_id(r: ResultRecord, varied: Sequence[str]) -> str:
    parts = [f"{name}={_field(r, name)}" for name in varied]
    return r.case_id + (f" [{', '.join(parts)}]" if parts else "")


def _field(r: ResultRecord, name: str) -> object:
    """A condition of the record: a header field, a protocol's own condition
    (``conditions.<name>``) or a role's model (``models.<role>``)."""
    kind, _, key = name.partition(".")
    if kind == "conditions" and key:
        return r.conditions.get(key)
    if kind == "models" and key:
        return r.models.get(key)
    return getattr(r, name)


def _varied(records: Sequence[ResultRecord]) -> list[str]:
    """What varies over the log's items besides the case and the repeat: each such field is
    part of a sample's id, so (id, epoch) names one sample."""
    names = ["bias", "turn_budget", "experiment", "answer_format", "image_mode",
             *sorted({f"conditions.{k}" for r in records for k in r.conditions}),
             *sorted({f"models.{k}" for r in records for k in r.models if k != "doctor"})]
    return [n for n in names if len({str(_field(r, n)) for r in records}) > 1]


def _identity(run: str, mine: Sequence[ResultRecord]) -> str:
    """A digest of the run and every role's model (not of their sanitised names, which
    may collide): the log's id and its file name's."""
    models = sorted(mine[0].models.items()) if mine else []
    return hashlib.sha256(json.dumps([run, models]).encode()).hexdigest()[:22]


def _sample(r: ResultRecord, t: Transcript | None, varied: Sequence[str]) -> dict[str, Any]:
    messages = _messages(t)
    first = next((m["content"] for m in messages if m["role"] == "user"), r.case_id)
    answer = r.given or ""
    sample: dict[str, Any] = {
        "id": _sample_id(r, varied), "epoch": r.sample + 1, "input": first,
        "target": r.expected, "messages": messages,
        "output": {"model": r.doctor, "completion": answer, "choices": [
            {"message": {"role": "assistant", "content": answer, "source": "generate"},
             "stop_reason": "stop"}]},
        "metadata": {"dataset": r.dataset, "specialty": r.specialty, "protocol": r.protocol,
                     "outcome": r.outcome, "bias": r.bias, "turn_budget": r.turn_budget,
                     "turns_used": r.turns_used, "experiment": r.experiment,
                     "answer_format": r.answer_format, "nodeid": r.nodeid},
        "model_usage": _usage([r]),
        "total_time": r.duration_s,
    }
    if r.outcome == "error":
        sample["error"] = {"message": r.error or "error", "traceback": "",
                           "traceback_ansi": ""}
    else:
        sample["scores"] = {"moderator": {
            "value": _VALUES.get(r.outcome, "I"), "answer": answer,
            "explanation": r.error if r.outcome == "limit" else (r.decided_by or ""),
            "metadata": {"relation": r.relation, "decided_by": r.decided_by}}}
    return sample


def _results(records: Sequence[ResultRecord]) -> dict[str, Any]:
    judged = [r for r in records if r.outcome != "error"]
    accuracy = (sum(r.outcome == "correct" for r in judged) / len(judged)) if judged else 0.0
    n = max(len(judged), 1)
    stderr = (accuracy * (1 - accuracy) / n) ** 0.5
    return {"total_samples": len(records), "completed_samples": len(judged), "scores": [{
        "name": "moderator", "scorer": "moderator", "scored_samples": len(judged),
        "unscored_samples": len(records) - len(judged), "params": {},
        "metrics": {"accuracy": {"name": "accuracy", "value": accuracy, "params": {}},
                    "stderr": {"name": "stderr", "value": stderr, "params": {}}}}]}


def log_groups(records: Sequence[ResultRecord]) -> list[list[ResultRecord]]:
    """The records of each Inspect log: one per doctor and set of the other roles' models
    (an Inspect eval has one model and one model per role)."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[ResultRecord]] = {}
    for r in records:
        others = tuple(sorted((k, v) for k, v in r.models.items() if k != "doctor"))
        groups.setdefault((r.doctor, others), []).append(r)
    return list(groups.values())


def log_file_name(run: str, mine: Sequence[ResultRecord], taken: set[str]) -> str:
    """The file name Inspect lists (``{timestamp}_{task}_{id}.json``: ``inspect view`` and
    ``list_eval_logs`` skip any other), unique among ``taken`` (which it joins)."""
    started = min((r.started_at for r in mine if r.started_at), default=time.time())
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S+00-00", time.gmtime(started))
    task = re.sub(r"[^A-Za-z0-9-]+", "-", f"agentclinic-{mine[0].protocol}")[:60]
    digest = _identity(run, mine)
    name, n = f"{stamp}_{task}_{digest}.json", 1
    while name in taken:  # the same run and models twice: never overwrite
        n += 1
        name = f"{stamp}_{task}_{digest}{n}.json"
    taken.add(name)
    return name


def inspect_log(run: str, mine: Sequence[ResultRecord],
                transcripts: Mapping[str, Transcript | None],
                summary: Mapping[str, Any]) -> dict[str, Any]:
    """The Inspect eval log (a JSON-able dict) of one group of run ``run``'s items
    (:func:`log_groups`: one doctor, one model per other role).

    ``transcripts`` maps a record's nodeid to its transcript (None where it is gone).
    """
    doctor = mine[0].doctor if mine else ""
    varied = _varied(mine)
    started = min((r.started_at for r in mine if r.started_at), default=time.time())
    ended = max((r.started_at + r.duration_s for r in mine if r.started_at), default=started)
    roles = {role: {"model": model} for role, model in mine[0].models.items()
             if role != "doctor"} if mine else {}
    protocol = mine[0].protocol if mine else "agentclinic"
    samples = [_sample(r, transcripts.get(r.nodeid), varied) for r in mine]
    return {
        "version": INSPECT_LOG_VERSION,
        "status": "error" if any(r.outcome == "error" for r in mine) else "success",
        "eval": {
            "eval_id": _identity(run, mine), "run_id": run, "created": _iso(started),
            "task": f"agentclinic/{protocol}", "task_id": f"{run}-{protocol}",
            "task_version": 0,
            "dataset": {"name": ", ".join(sorted({r.dataset for r in mine})),
                        "samples": len({r.case_id for r in mine}),
                        "sample_ids": sorted({s["id"] for s in samples})},
            "model": doctor, "model_roles": roles or None,
            "config": {"epochs": max((r.sample for r in mine), default=0) + 1},
            "packages": {"pytest-agentclinic": str(summary.get("plugin_version", ""))},
            "metadata": {"agentclinic_summary": {k: v for k, v in summary.items()
                                                 if k in ("protocol", "roles", "repeat",
                                                          "turn_budgets", "command")}},
        },
        "plan": {"name": "plan", "steps": [{"solver": f"agentclinic/{protocol}/encounter",
                                             "params": {}}], "config": {}},
        "results": _results(mine),
        "stats": {"started_at": _iso(started), "completed_at": _iso(ended),
                  "model_usage": _usage(mine)},
        "samples": samples,
    }
