"""What the expert sees at a step and what it decides (MediQ's Expert interface)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pytest_agentclinic import api

if TYPE_CHECKING:
    from pytest_agentclinic.api import Case, Usage

#: The non-interactive baselines: all the context, its first sentence, or nothing.
BASELINES = ("full", "initial", "none")
#: The interactive experts (upstream's FixedExpert, BasicExpert, BinaryExpert,
#: NumericalExpert, NumericalCutOffExpert, ScaleExpert); each may take ``-rg`` (rationale
#: generation) and ``-sc`` (self-consistency), e.g. ``scale-rg-sc``.
EXPERTS = ("fixed", "basic", "binary", "numerical", "numcutoff", "scale")
#: Said by the patient when no fact answers the question (upstream's wording, shortened).
UNKNOWN = "The patient cannot answer this question."


def _usage() -> Usage:
    return api.Usage()


@dataclass(frozen=True)
class ExpertState:
    """The expert's view of one step."""

    case: Case
    #: The item's setting (``full``, ``initial``, ``none``, ``basic``, ``scale-rg``...).
    setting: str
    #: The patient's information given up front: all of it (``full``), the first sentence
    #: (``initial`` and every interactive setting) or nothing (``none``).
    info: str
    #: The questions asked so far, each with the patient's answer.
    dialogue: Sequence[tuple[str, str]]
    #: Questions the budget still allows (0: the expert must answer now).
    questions_left: int
    sample: int = 0

    @property
    def options(self) -> Mapping[str, str]:
        """The four options by letter."""
        options = self.case.metadata["options"]
        assert isinstance(options, dict)
        return {str(k): str(v) for k, v in options.items()}

    @property
    def must_answer(self) -> bool:
        """Whether the expert must commit now (a baseline, or the budget ran out)."""
        return self.questions_left <= 0


@dataclass(frozen=True)
class Step:
    """The expert's move: one question, or an option letter (None: no readable letter)."""

    kind: Literal["question", "choice"]
    text: str
    letter: str | None = None
    #: The confidence the abstention module estimated (None where it estimates none).
    confidence: float | None = None
    #: What the expert wrote, reasons included (the transcript keeps it).
    said: str = ""
    usage: Usage = field(default_factory=_usage)


@runtime_checkable
class Expert(Protocol):
    """MediQ's expert: asks one question or commits to an option at each step."""

    model: str
    prompt_version: str

    async def step(self, state: ExpertState) -> Step:
        """The next move; a question is ignored when ``state.must_answer``."""
        ...
