"""Hooks that a conftest.py or plugin can implement to extend pytest-agentclinic."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .agents.base import Agent, Moderator
    from .cases.models import Case


@pytest.hookspec(firstresult=True)
def pytest_agentclinic_make_agent(
    role: str, model: str, case: Case, bias: str, config: pytest.Config
) -> Agent | Moderator | None:
    """Supply the agent for ``role`` (doctor, patient, measurement or moderator; under
    CRAFT-MD doctor, patient, summarizer or moderator). A moderator is asked only about the
    diagnoses the grading rules cannot decide (see docs/grading.md), with the extracted
    diagnosis, never the doctor's whole text.

    ``model`` is the value configured for the role (``offline`` or a model string);
    ``bias`` is the encounter's bias variant (``none``, ``doctor:recency``, ...).
    Return an object implementing :class:`~pytest_agentclinic.agents.base.Agent` (or
    :class:`~pytest_agentclinic.agents.base.Moderator` for the moderator), or None to
    let the next implementation, and finally the built-in agents, decide.
    """
