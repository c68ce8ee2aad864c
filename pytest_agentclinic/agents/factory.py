"""Builds the four agents of an encounter: a conftest's first, then offline or LLM."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ..cases.models import Case
from ..encounter.craftmd import CraftCast
from ..encounter.engine import Cast
from ..grading.answers import Fallback
from ..grading.moderator import OfflineModerator
from ..llm.caller import ModelCaller
from .base import OFFLINE, Agent, Moderator
from .biases import BIAS_PROMPT_VERSION, DEFAULT_BELIEF, Side, bias_prompt, pick_distractor
from .craftmd_agents import (
    LLMClinician,
    LLMSummarizer,
    LLMVignettePatient,
    OfflineClinician,
    OfflineSummarizer,
    OfflineVignettePatient,
)
from .llm_agents import LLMDoctor, LLMMeasurement, LLMModerator, LLMPatient
from .offline_doctor import OfflineDoctor
from .offline_measurement import OfflineMeasurement
from .offline_patient import OfflinePatient
from .test_budget import BudgetedMeasurement

#: Patient biases whose offline patient names a condition (the distractor) as its belief.
_NAMES_A_BELIEF = ("patient:self_diagnosis", "patient:false_consensus")


def _builtin(role: str, model: str, caller: ModelCaller, candidates: Sequence[str],
             variant: Variant, case: Case) -> Any:
    bias = variant.bias
    distractor = (pick_distractor(case.choices or candidates, case.accepted_diagnoses,
                                  key=case.id) if bias != "none" else "")
    side: Side | None = "doctor" if role == "doctor" else "patient" if role == "patient" else None
    biased = {"bias_text": bias_prompt(bias, distractor=distractor, side=side) if side else "",
              "bias_version": f"{bias}@{BIAS_PROMPT_VERSION}" if bias != "none" else ""}
    if not biased["bias_text"]:
        biased = {}
    if role == "doctor":
        if model == OFFLINE:
            return OfflineDoctor(candidates, image_mode=variant.image_mode, bias=bias,
                                 distractor=distractor)
        return LLMDoctor(model, caller, image_mode=variant.image_mode, **biased)
    if role == "patient":
        if model != OFFLINE:
            return LLMPatient(model, caller, **biased)
        belief = distractor.lower() if bias in _NAMES_A_BELIEF else DEFAULT_BELIEF
        return OfflinePatient(bias, belief)
    if role == "measurement":
        return OfflineMeasurement() if model == OFFLINE else LLMMeasurement(model, caller)
    fallback = None if model == OFFLINE else LLMModerator(model, caller)
    return OfflineModerator(fallback)


@dataclass(frozen=True)
class Variant:
    """The encounter conditions that shape the agents."""

    bias: str = "none"
    image_mode: str | None = None


def build_cast(config: pytest.Config, case: Case, models: dict[str, str], caller: ModelCaller,
               candidates: Sequence[str], variant: Variant = Variant(),
               test_budget: float | None = None) -> Cast:
    """The cast for ``case``; ``models`` maps each role to its configured model. With
    ``test_budget`` (USD), the measurement agent refuses tests beyond it."""
    agents: dict[str, Any] = {}
    for role, model in models.items():
        custom = config.hook.pytest_agentclinic_make_agent(role=role, model=model, case=case,
                                                           bias=variant.bias, config=config)
        agents[role] = (custom if custom is not None
                        else _builtin(role, model, caller, candidates, variant, case))
        wanted = Moderator if role == "moderator" else Agent
        if not isinstance(agents[role], wanted):
            raise TypeError(f"the {role} agent {agents[role]!r} does not implement "
                            f"{wanted.__name__}")
    if test_budget is not None:
        agents["measurement"] = BudgetedMeasurement(agents["measurement"], test_budget)
    return Cast(**agents)


def build_craft_cast(config: pytest.Config, case: Case, models: dict[str, str],
                     caller: ModelCaller, candidates: Sequence[str],
                     sample: int = 0) -> CraftCast:
    """The CRAFT-MD cast: clinician, vignette patient and summarizer (a conftest may supply
    any of them through the same hook, with role ``doctor``, ``patient`` or ``summarizer``)."""
    offline = {"doctor": lambda: OfflineClinician(candidates),
               "patient": OfflineVignettePatient, "summarizer": OfflineSummarizer}
    online = {"doctor": LLMClinician, "patient": LLMVignettePatient,
              "summarizer": LLMSummarizer}
    agents: dict[str, Any] = {}
    for role in ("doctor", "patient", "summarizer"):
        model = models[role]
        custom = config.hook.pytest_agentclinic_make_agent(role=role, model=model, case=case,
                                                           bias="none", config=config)
        agents[role] = custom if custom is not None else (
            offline[role]() if model == OFFLINE else online[role](model, caller))
    grader = models.get("moderator", OFFLINE)
    fallback = (None if grader == OFFLINE
                else _llm_fallback(LLMModerator(grader, caller), case, sample))
    return CraftCast(**agents, fallback=fallback, grader_model=grader)


def _llm_fallback(moderator: LLMModerator, case: Case, sample: int) -> Fallback:
    """Ask the grader model about an extracted diagnosis the rules were unsure of."""

    async def ask(extracted: str) -> tuple[bool, str, str]:
        verdict = (await moderator.judge(case, extracted, sample)).verdict
        return verdict.correct, verdict.decided_by, verdict.reason

    return ask
