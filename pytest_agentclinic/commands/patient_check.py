"""``agentclinic patient-check --model MODEL``: is a simulated patient true to its case?

Puts the doctor questions of CRAFT-MD's recorded conversations to the patient under test and
compares its answers, and the recorded GPT-4 patient-AI's, with each vignette: facts
conveyed, facts both told, sentences the vignette does not hold (claims and denials), and
the leak rates (conversations where the diagnosis was named or an exam finding revealed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import AgentClinicError, InputError
from ._args import add_call_arguments, call_settings_of, count, model

if TYPE_CHECKING:
    from ..core.case import Case
    from ..metrics.fidelity import FidelitySummary

SHARED = Path("..") / "shared" / "datasets" / "craftmd"
CONVERSATIONS = SHARED / "conversations_gpt4_1106_dermatology.jsonl.gz"
VIGNETTES = SHARED / "usmle_and_derm_dataset.csv"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``patient-check``."""
    p = subparsers.add_parser(
        "patient-check", help="check a simulated patient against recorded conversations",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("--model", required=True, type=model, metavar="MODEL",
                   help="the patient: 'offline' (the offline vignette patient) or a litellm "
                        "model string")
    p.add_argument("--prompt", choices=("craftmd", "agentclinic"), default="craftmd",
                   help="the LLM patient's prompt: CRAFT-MD's vignette patient-AI (default) "
                        "or AgentClinic's patient")
    p.add_argument("--conversations", type=Path, default=CONVERSATIONS, metavar="FILE",
                   help=f"recorded conversations JSONL(.gz) (default {CONVERSATIONS})")
    p.add_argument("--vignettes", type=Path, default=VIGNETTES, metavar="CSV",
                   help=f"CRAFT-MD vignette CSV (default {VIGNETTES})")
    p.add_argument("--limit", type=count(1), default=None, metavar="N",
                   help="check only the first N conversations")
    add_call_arguments(p, api_base=None, timeout=60.0, retries=3)
    p.add_argument("--concurrency", type=count(1), default=8, metavar="N",
                   help="conversations in flight (default 8)")
    p.add_argument("--cache-dir", type=Path, default=Path(".agentclinic_cache"), metavar="DIR")
    p.add_argument("--json", type=Path, default=None, metavar="OUT",
                   help="also write the summary and every conversation's check as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Check; exit 0, 2 on unreadable input, 1 when the model could not be reached."""
    from ..cases.vignettes import read_craftmd_csv
    from ..llm.errors import FatalLLMError
    from ..metrics.conversations import read_conversations
    from ..protocols.patient_check import check_patient

    try:
        converted = read_craftmd_csv(args.vignettes)
        if converted.errors:
            raise InputError(f"{converted.errors[0]}")
        cases = {c.id: c for c in converted.cases}
        conversations = [c for c in read_conversations(args.conversations) if c.case_id in cases]
    except (AgentClinicError, OSError, UnicodeDecodeError) as exc:
        print(f"agentclinic patient-check: error: {exc}", file=sys.stderr)
        return 2
    conversations = conversations[: args.limit] if args.limit else conversations
    if not conversations:
        print(f"agentclinic patient-check: error: no conversation of {args.conversations} has "
              f"a case in {args.vignettes}", file=sys.stderr)
        return 2
    try:
        summary, checks = asyncio.run(check_patient(_patient_factory(args), conversations,
                                                    cases, args.concurrency))
    except FatalLLMError as exc:
        print(f"agentclinic patient-check: error: {exc}", file=sys.stderr)
        return 1
    print(format_summary(summary, args.model))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(_as_json(summary, checks, args), indent=1),
                             encoding="utf-8")
        print(f"JSON: {args.json}")
    return 1 if summary.errors and not summary.conversations else 0


def _patient_factory(args: argparse.Namespace) -> Any:
    from ..agents.craftmd_agents import LLMVignettePatient, OfflineVignettePatient
    from ..agents.llm_agents import LLMPatient
    from ..llm.cache import CacheMode, ResponseCache
    from ..llm.caller import ModelCaller

    if args.model == "offline":
        return lambda case: OfflineVignettePatient()
    caller = ModelCaller(call_settings_of(args, temperature=0.0),
                         ResponseCache(args.cache_dir, CacheMode.READ_WRITE))
    kind = LLMVignettePatient if args.prompt == "craftmd" else LLMPatient

    def make(case: Case) -> Any:
        return kind(args.model, caller)

    return make


def format_summary(summary: FidelitySummary, model: str) -> str:
    """The comparison table: the recorded patient-AI, then the patient under test."""
    from tabulate import tabulate

    from ..protocols.patient_check import RECORDED

    n, facts = summary.conversations, summary.facts
    rows = []
    for who, label in ((RECORDED, "recorded GPT-4 patient-AI"), (model, model)):
        added, claims = summary.added_sentences.get(who, 0), summary.added_claims.get(who, 0)
        conveyed = summary.conveyed.get(who, 0)
        rows.append([label, f"{conveyed} ({conveyed / facts:.0%})" if facts else "0",
                     claims, added - claims, f"{summary.rate('diagnosis_leaks', who):.1%}",
                     f"{summary.rate('exam_leaks', who):.1%}"])
    table = tabulate(rows, headers=["patient", "facts conveyed", "added claims",
                                    "added denials", "diagnosis leak", "exam-finding leak"],
                     tablefmt="github", disable_numparse=True)
    lines = [f"{n} conversations, {summary.answers} doctor questions, {facts} vignette facts; "
             f"facts conveyed by both patients: {summary.common}", "", table, "",
             "leak: share of conversations in which the patient named the diagnosis / "
             "revealed an examination or test finding; added: answer sentences the vignette "
             "does not hold (method: docs/beyond-accuracy.md)"]
    if summary.errors:
        lines.append(f"{len(summary.errors)} conversations not scored (model errors), e.g. "
                     f"{summary.errors[0]}")
    return "\n".join(lines)


def _as_json(summary: FidelitySummary, checks: list[Any], args: argparse.Namespace
             ) -> dict[str, Any]:
    from dataclasses import asdict

    return {"version": 1, "model": args.model, "prompt": args.prompt,
            "conversations_file": str(args.conversations), "summary": asdict(summary),
            "conversations": [c.model_dump() for c in checks]}
