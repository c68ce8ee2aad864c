"""``agentclinic play``: a person plays the doctor or the patient of one case in the terminal.

The other roles are agents (offline by default, or any litellm model string). The encounter
runs through the same engine as a pytest item (:func:`run_encounter`), is judged by the
moderator as usual, and its transcript is saved under ``<report-dir>/play-<timestamp>/``
like any run's, with a one-line ``results.jsonl`` so the run tools can read it too.

Exit status: 0 the diagnosis was correct; 1 it was wrong or none was given; 2 bad arguments
or case file; 3 the encounter ended in error (a model failure, or the person playing the
patient left); 130 interrupted (Ctrl-C, nothing saved).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import InputError
from ._args import add_call_arguments, call_settings_of, positive
from ._args import model as model_name

if TYPE_CHECKING:  # the heavy imports wait for ``run`` so ``agentclinic --help`` stays instant
    from ..agents.human import HumanRole
    from ..core.case import Case
    from ..core.roles import Agent, Reply, TurnView
    from ..core.transcript import Transcript
    from ..llm.caller import ModelCaller
    from ..protocols.agentclinic import Cast

AGENT_ROLES = ("doctor", "patient", "measurement", "moderator")
USAGE_ERROR, ENCOUNTER_ERROR, INTERRUPTED = 2, 3, 130
#: Utterance kinds that answer a doctor's interaction.
_ANSWERS = ("answer", "test_result", "image_result")


class PlayError(InputError):
    """A problem with the arguments or the case file: reported in one line, exit status 2."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``agentclinic play``."""
    p = subparsers.add_parser(
        "play", help="play the doctor or the patient of a case in the terminal",
        description="Play one role of an encounter yourself; agents play the others. The "
                    "encounter is judged and saved like any run's.")
    p.add_argument("case_file", type=Path, metavar="CASE_FILE",
                   help="a case file in any supported format")
    p.add_argument("--case", metavar="ID", help="the case to play (default: the file's first)")
    p.add_argument("--role", choices=("doctor", "patient"), required=True,
                   help="the role you play")
    for role in AGENT_ROLES:
        asked = ", asked only when the offline matcher is unsure" if role == "moderator" else ""
        p.add_argument(f"--{role}", metavar="MODEL", default=None, type=model_name,
                       help=f"{role}: 'offline' (default) or a litellm model string{asked}")
    p.add_argument("--turns", type=positive, default=20, metavar="N",
                   help="doctor interactions: questions, tests and the diagnosis (default: 20)")
    add_call_arguments(p, api_base=None)
    p.add_argument("--report-dir", type=Path, default=Path("reports"), metavar="DIR",
                   help="where the run directory is written (default: reports)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Play the encounter, save it and print the verdict; return the exit status."""
    try:
        return _run(args)
    except PlayError as exc:
        print(f"agentclinic play: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("\ninterrupted: the encounter was not saved", file=sys.stderr)
        return INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from ..llm.cache import CacheMode, ResponseCache
    from ..llm.caller import ModelCaller
    from ..llm.errors import FatalLLMError

    models = _models(args)
    case, pool = _pick_case(args.case_file, args.case)
    # No response cache: a person's replies make every conversation new, and a game should
    # not fill the evaluation cache with conversations no run will ever replay.
    caller = ModelCaller(call_settings_of(args),
                         ResponseCache(Path(".agentclinic_cache"), CacheMode.OFF))
    cast = build_play_cast(args.role, models, caller, pool)
    roles = " ".join(f"{r}={m}" for r, m in cast.models.items())
    print(f"agentclinic play: case {case.id} ({case.specialty}) from {args.case_file}\n"
          f"  {roles}, {args.turns} interactions\n", flush=True)
    try:
        transcript = asyncio.run(caller.closing(play(case, cast, args.turns)))
    except FatalLLMError as exc:
        print(f"\nagentclinic play: model error, the encounter cannot go on: {exc}",
              file=sys.stderr)
        return ENCOUNTER_ERROR
    path = _save(args, case, transcript)
    _print_verdict(args.role, case, transcript, path)
    if transcript.outcome == "error":
        return ENCOUNTER_ERROR
    return 0 if transcript.outcome == "correct" else 1


# ---------------------------------------------------------------- arguments and case


def _models(args: argparse.Namespace) -> dict[str, str]:
    """Each agent role's model; the person's role is not one of them."""
    given = {role: getattr(args, role) for role in AGENT_ROLES}
    if given[args.role] is not None:
        raise PlayError(f"--{args.role}: you play the {args.role} (--role {args.role})")
    models: dict[str, str] = {}
    for role, model in given.items():
        if role == args.role:
            continue
        models[role] = "offline" if model is None else model  # checked by argparse
    return models


def _pick_case(path: Path, case_id: str | None) -> tuple[Case, tuple[str, ...]]:
    """The case to play and every diagnosis of its file (the offline doctor's candidates)."""
    from ..cases.loaders import load_case_file

    if not path.is_file():
        raise PlayError(f"{path}: no such file")
    loaded = load_case_file(path)
    cases = [case for _, case in loaded.cases]
    if not cases:
        problems = "; ".join(str(e) for e in loaded.errors[:3]) or "no cases found"
        raise PlayError(f"{path}: no playable case ({problems})")
    if case_id is None:
        chosen = cases[0]
    else:
        found = [c for c in cases if c.id == case_id]
        if not found:
            raise PlayError(f"{path}: no case {case_id!r}; its cases are: "
                            + ", ".join(c.id for c in cases))
        chosen = found[0]
    if loaded.errors:
        print(f"warning: {len(loaded.errors)} bad record(s) of {path} skipped, the first: "
              f"{loaded.errors[0]}", file=sys.stderr)
    return chosen, tuple(dict.fromkeys(c.diagnosis for c in cases))


# ---------------------------------------------------------------- the cast


class _Announced:
    """A model-backed agent that says it is working: a model may take seconds to answer,
    and a silent terminal looks stuck."""

    def __init__(self, agent: Agent, label: str) -> None:
        self.agent = agent
        self.label = label
        self.model = agent.model
        self.prompt_version = agent.prompt_version

    async def respond(self, view: TurnView) -> Reply:
        """Announce, then delegate."""
        print(f"({self.label} {self.model} is thinking...)", flush=True)
        return await self.agent.respond(view)


def build_play_cast(human_role: HumanRole, models: dict[str, str], caller: ModelCaller,
                    candidates: Sequence[str]) -> Cast:
    """The cast with the person in ``human_role`` and built-in agents in the other roles.

    Conftest agents (the pytest hook) are not offered: there is no pytest session here.
    """
    from ..agents.human import HumanAgent
    from ..agents.llm_agents import LLMDoctor, LLMMeasurement, LLMPatient
    from ..agents.llm_moderator import LLMModerator
    from ..agents.offline_doctor import OfflineDoctor
    from ..agents.offline_measurement import OfflineMeasurement
    from ..agents.offline_patient import OfflinePatient
    from ..grading.judging.moderator import OfflineModerator
    from ..protocols.agentclinic import Cast

    builders: dict[str, tuple[Callable[[], Any], Callable[[str], Any]]] = {
        "doctor": (lambda: OfflineDoctor(candidates), lambda m: LLMDoctor(m, caller)),
        "patient": (OfflinePatient, lambda m: LLMPatient(m, caller)),
        "measurement": (OfflineMeasurement, lambda m: LLMMeasurement(m, caller)),
    }
    agents: dict[str, Any] = {human_role: HumanAgent(human_role)}
    for role, (offline, llm) in builders.items():
        if role != human_role:
            model = models[role]
            agents[role] = offline() if model == "offline" else _Announced(llm(model), role)
    moderator = models["moderator"]
    agents["moderator"] = (OfflineModerator() if moderator == "offline"
                           else LLMModerator(moderator, caller))
    return Cast(**agents)


# ---------------------------------------------------------------- the encounter


async def play(case: Case, cast: Cast, budget: int) -> Transcript:
    """Run the encounter through the engine; a person who leaves still gets a transcript."""
    from ..agents.human import EncounterAbandoned
    from ..core.transcript import Transcript
    from ..protocols.agentclinic import AgentClinic, run_encounter

    started_at, started = time.time(), time.perf_counter()
    try:
        return await run_encounter(case, cast, budget=budget, sample=0, protocol=AgentClinic.name)
    except EncounterAbandoned as left:
        # The engine has no "stop now" signal, so the transcript is rebuilt here from the
        # conversation the person saw: the same fields run_encounter fills.
        t = Transcript(protocol=AgentClinic.name, case_id=case.id, dataset=case.dataset,
                       specialty=case.specialty, models=cast.models, sample=0, turn_budget=budget,
                       prompt_versions=cast.prompt_versions, utterances=list(left.history),
                       started_at=started_at, duration_s=time.perf_counter() - started)
        if left.role == "doctor":
            t.outcome = "no_diagnosis"  # giving up is not naming a diagnosis
        else:
            # Not the doctor's failure: an error is kept out of the doctor's accuracy.
            t.outcome, t.error = "error", str(left)
        return t


def _save(args: argparse.Namespace, case: Case, t: Transcript) -> str:
    """Write the transcript and a one-record ``results.jsonl``; return the transcript's path."""
    from ..core.records import ResultRecord
    from ..metrics.gathering import for_encounter
    from ..report import rundir

    run_name = f"play-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    run_dir = args.report_dir / run_name
    item = f"{case.id}[{case.specialty_slug}-human_{args.role}]"
    path = rundir.write_transcript(run_dir, args.case_file, item, t)
    record = ResultRecord.from_transcript(t, run=run_name, nodeid=f"{args.case_file}::{item}",
                                          expected=case.diagnosis, transcript_path=path,
                                          case_file=str(args.case_file),
                                          difficulty=case.difficulty,
                                          measures=for_encounter(case, t.utterances,
                                                                 outcome=t.outcome,
                                                                 experiment=t.experiment))
    rundir.write_results(run_dir, [record])
    return path


def _print_verdict(role: str, case: Case, t: Transcript, path: str) -> None:
    last = t.utterances[-1] if t.utterances else None
    # A person playing the doctor never gives up on the last interaction, so there the
    # budget ran out on a question whose answer the person has not seen yet.
    spent = t.turns_used == t.turn_budget
    if role == "doctor" and spent and last is not None and last.kind in _ANSWERS:
        print(f"{last.role}: {last.text}")
    if t.outcome == "correct":
        verdict = "CORRECT"
    elif t.outcome == "incorrect":
        verdict = "INCORRECT"
    elif t.outcome == "no_diagnosis":
        verdict = "NO DIAGNOSIS" + ("" if spent or role != "doctor" else " (you gave up)")
    else:
        verdict = f"ERROR: {t.error}"
    if t.verdict is not None:
        verdict += f" ({t.verdict.decided_by}: {t.verdict.reason})"
    rows = [("case", f"{case.id} ({case.specialty})"), ("expected", case.diagnosis),
            ("given", t.diagnosis or "(none)"), ("verdict", verdict),
            ("turns used", f"{t.turns_used}/{t.turn_budget}"),
            ("tests", ", ".join(t.tests_requested) or "none")]
    if t.perception is not None:
        rated = t.perception.model_dump()
        rows.append(("ratings", ", ".join(f"{k} {'-' if v is None else v}/10"
                                          for k, v in rated.items())))
    rows.append(("transcript", path))
    print("\n=== encounter over ===")
    for label, value in rows:
        print(f"{label + ':':<12} {value}")
