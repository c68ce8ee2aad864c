"""The CRAFT-MD grader shared by both protocols: free-response and multiple-choice answers.

Free response follows the paper's two steps: :mod:`.extract` finds the diagnosis (single,
multiple or none; multiple and none score 0) and :mod:`.equivalence` judges it against the
correct answer (synonyms and broader names are right, more specific names are not).
Multiple choice maps the reply to the option it chose (:mod:`.mcq`).

Everything here is deterministic and offline. Each :class:`Graded` says whether the rules
were sure and who decided; a run asks its moderator about the unsure ones
(:func:`.pipeline.grade_answer`).

>>> grader = CraftMDGrader()
>>> grader.grade_frq("**Final Diagnosis:** Melanoma", "Superficial spreading melanoma").verdict
1
>>> grader.grade_frq("Lymphoma", "Hodgkin lymphoma").verdict  # a family: strict says no
0
>>> CraftMDGrader(policy="paper").grade_frq("Lymphoma", "Hodgkin lymphoma").verdict
1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..reading.extract import Category
from ..reading.mcq import Choice, choose, clean_option, is_correct
from ..terms.relation import RelationKind
from .rules import OFFLINE, OFFLINE_UNSURE, Policy, grade_text

Format = Literal["frq", "mcq"]

@dataclass(frozen=True)
class Graded:
    """One graded answer."""

    #: 1 when the answer is judged correct, else 0.
    verdict: int
    #: The diagnosis read from the answer (FRQ), the chosen option's text (MCQ), or "none" /
    #: "multiple" (the paper's labels) when there is no single one.
    extracted: str
    category: Category
    #: "offline" or "offline (unsure)".
    decided_by: str
    reason: str
    #: Whether the deterministic rules were sure (a moderator is asked only when not).
    sure: bool = True
    #: How the free-response answer's name relates to the truth ("same", "synonym",
    #: "broader", "narrower", "sibling", "qualifier-flip", "related", "different"); None when
    #: nothing was judged.
    relation: RelationKind | None = None

    def record(self) -> dict[str, Any]:
        """The fields the ``agentclinic grade`` command writes for one answer."""
        return {k: v for k, v in asdict(self).items() if k != "sure"}


class CraftMDGrader:
    """Grades CRAFT-MD answers offline (a run's moderator decides what the rules are unsure
    of: :func:`.pipeline.grade_answer`)."""

    def __init__(self, policy: Policy = "strict") -> None:
        #: How broader answers are graded (see :data:`.rules.Policy`).
        self.policy: Policy = policy

    # --- deterministic grading --------------------------------------------------------------

    def grade(self, response: str, correct_answer: str, *,
              choices: Sequence[str] | None = None, format: Format | None = None) -> Graded:
        """Grade one answer offline; the format defaults to MCQ when choices are given."""
        fmt = format or ("mcq" if choices else "frq")
        if fmt == "mcq" and choices:
            return self.grade_mcq(response, choices, correct_answer)
        return self.grade_frq(response, correct_answer)

    def grade_frq(self, response: str, correct_answer: str,
                  choices: Sequence[str] = ()) -> Graded:
        """Stages 1 to 3 (read, relate, decide: :func:`.rules.grade_text`, the entry both
        protocols grade with) on a free-response answer; ``choices`` are the case's options."""
        extraction, decision = grade_text(response, [correct_answer], choices, self.policy,
                                          diagnosis_asked=True)
        return Graded(int(decision.correct), extraction.label, extraction.category,
                       OFFLINE if decision.sure else OFFLINE_UNSURE, decision.reason,
                       sure=decision.sure, relation=decision.relation)

    def grade_mcq(self, response: str, choices: Sequence[str], correct_answer: str, *,
                  verbatim: bool = False) -> Graded:
        """Map a multiple-choice reply to its option and compare with the correct answer.

        ``verbatim`` reproduces the published pipeline's scoring (see :func:`.mcq.is_correct`).
        """
        choice = choose(response, choices)
        correct = is_correct(choice, choices, correct_answer, response=response,
                             verbatim=verbatim)
        return _mcq_verdict(choice, choices, correct)


def _mcq_verdict(choice: Choice, choices: Sequence[str], correct: bool) -> Graded:
    if choice.index is None:
        return Graded(0, "none", "none", OFFLINE if choice.sure else OFFLINE_UNSURE,
                       choice.reason, sure=choice.sure)
    chosen = clean_option(choices[choice.index])
    return Graded(int(correct), chosen, "single", OFFLINE if choice.sure else OFFLINE_UNSURE,
                   choice.reason, sure=choice.sure)
