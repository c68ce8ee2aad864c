"""Hooks that a conftest.py or plugin can implement to extend pytest-agentclinic."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..core.case import Case
    from ..core.roles import Agent, Moderator


@pytest.hookspec(firstresult=True)
def pytest_agentclinic_make_agent(
    role: str, model: str, case: Case, bias: str, config: pytest.Config
) -> Agent | Moderator | None:
    """Supply the agent for ``role`` (doctor, patient, measurement or moderator).

    ``model`` is the value configured for the role (``offline`` or a model string);
    ``bias`` is the encounter's bias variant (``none``, ``doctor:recency``, ...).
    Return an object implementing :class:`~pytest_agentclinic.core.roles.Agent` (or
    :class:`~pytest_agentclinic.core.roles.Moderator` for the moderator), or None to
    let the next implementation, and finally the built-in agents, decide.
    """
