"""Hooks that a conftest.py or plugin can implement to extend pytest-agentclinic."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..core.case import Case
    from ..core.roles import Agent, Moderator
    from ..protocols.craftmd_encounter import Clinician, Summarizer


@pytest.hookspec(firstresult=True)
def pytest_agentclinic_make_agent(
    role: str, model: str, case: Case, bias: str, config: pytest.Config
) -> Agent | Clinician | Summarizer | Moderator | None:
    """Supply the agent for one role of the run's protocol, or None for the next
    implementation (and finally the built-in agent) to decide.

    ``model`` is the value configured for the role (``offline`` or a model string);
    ``bias`` is the item's bias variant (``none``, ``doctor:recency``, ...). What is returned
    must implement the role's interface, else the item is an error naming the role:

    - agentclinic: doctor, patient, measurement -> ``Agent``; moderator -> ``Moderator``
    - craftmd: doctor -> ``Clinician`` (an ``Agent`` with ``final``); patient -> ``Agent``;
      summarizer -> ``Summarizer``; moderator -> ``Moderator``
    - a registered or installed protocol (a conftest's ``register_protocol``, or a
      distribution's ``pytest_agentclinic.protocols`` entry point): its ``roles``
      (``pytest_agentclinic.api.role_interfaces``), e.g. a triage protocol's ``nurse``

    A moderator (either built-in protocol) is asked only about the diagnoses the grading
    rules cannot decide (see docs/grading.md), with the extracted diagnosis, never the
    doctor's text. docs/extending.md shows a third protocol end to end.
    """
