"""Builds the four agents of an encounter: a conftest's first, then offline or LLM."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ..cases.models import Case
from ..encounter.craftmd import CraftCast
from ..encounter.engine import Cast
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
from .llm_agents import LLMDoctor, LLMMeasurement, LLMPatient
from .llm_moderator import LLMModerator
from .offline_doctor import OfflineDoctor
from .offline_measurement import OfflineMeasurement
from .offline_patient import OfflinePatient

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
    return OfflineModerator() if model == OFFLINE else LLMModerator(model, caller)


@dataclass(frozen=True)
class Variant:
    """The encounter conditions that shape the agents."""

    bias: str = "none"
    image_mode: str | None = None


def build_cast(config: pytest.Config, case: Case, models: dict[str, str], caller: ModelCaller,
               candidates: Sequence[str], variant: Variant = Variant()) -> Cast:
    """The cast for ``case``; ``models`` maps each role to its configured model."""
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
    return Cast(**agents)


def build_craft_cast(config: pytest.Config, case: Case, models: dict[str, str],
                     caller: ModelCaller, candidates: Sequence[str],
                     sample: int = 0) -> CraftCast:
    """The CRAFT-MD cast: clinician, vignette patient, summarizer and moderator (a conftest
    may supply any of them through the same hook, with role ``doctor``, ``patient``,
    ``summarizer`` or ``moderator``)."""
    offline: dict[str, Callable[[], Any]] = {
        "doctor": lambda: OfflineClinician(candidates), "patient": OfflineVignettePatient,
        "summarizer": OfflineSummarizer, "moderator": OfflineModerator}
    online: dict[str, Callable[[str, ModelCaller], Any]] = {
        "doctor": LLMClinician, "patient": LLMVignettePatient, "summarizer": LLMSummarizer,
        "moderator": LLMModerator}
    agents: dict[str, Any] = {}
    for role in ("doctor", "patient", "summarizer", "moderator"):
        model = models.get(role, OFFLINE)
        custom = config.hook.pytest_agentclinic_make_agent(role=role, model=model, case=case,
                                                           bias="none", config=config)
        agents[role] = custom if custom is not None else (
            offline[role]() if model == OFFLINE else online[role](model, caller))
    if not isinstance(agents["moderator"], Moderator):
        raise TypeError(f"the moderator {agents['moderator']!r} does not implement Moderator")
    return CraftCast(**agents)
