"""What every agent implements, offline or LLM-backed, built-in or from a conftest."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    # Annotations only: an installed protocol's agents and roles are defined in every pytest
    # run of its environment, which must not import the pydantic models (bench_startup.py).
    from .case import Case
    from .transcript import Usage, Utterance, Verdict

ROLES: tuple[str, ...] = ("doctor", "patient", "measurement", "moderator")
OFFLINE = "offline"


@dataclass(frozen=True)
class TurnView:
    """What an agent is shown when it is its turn to speak."""

    case: Case
    #: Everything said so far, in order.
    history: Sequence[Utterance]
    #: The message this turn answers (the doctor's question, the patient's reply...).
    incoming: str
    #: Doctor inferences left, this one included.
    turns_left: int
    turn_budget: int
    sample: int


def _no_usage() -> Usage:
    from .transcript import Usage

    return Usage()


@dataclass(frozen=True)
class Reply:
    """An agent's utterance and what producing it cost."""

    text: str
    usage: Usage = field(default_factory=_no_usage)


@dataclass(frozen=True)
class Judgement:
    """A moderator's verdict with the usage it took."""

    verdict: Verdict
    usage: Usage = field(default_factory=_no_usage)


@runtime_checkable
class Agent(Protocol):
    """A doctor, patient or measurement agent."""

    #: What the report names this agent: ``offline`` or the model string.
    model: str
    #: Version of the prompt (or script) that shapes the replies; enters the cache key.
    prompt_version: str

    async def respond(self, view: TurnView) -> Reply:
        """Produce this agent's next utterance."""
        ...


@runtime_checkable
class Moderator(Protocol):
    """Decides whether the doctor's diagnosis is the case's diagnosis."""

    model: str
    prompt_version: str

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        """Judge ``diagnosis`` against ``case``'s accepted diagnoses."""
        ...


#: Asks the user's code for an agent: ``(role, model, case, bias) -> agent or None``. The
#: pytest layer answers it with the ``pytest_agentclinic_make_agent`` hook; None means the
#: built-in agent for the role.
MakeAgent = Callable[[str, str, "Case", str], object | None]
