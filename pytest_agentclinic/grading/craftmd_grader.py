"""The CRAFT-MD grader shared by both protocols: free-response and multiple-choice answers.

Free response follows the paper's two steps: :mod:`.extract` finds the diagnosis (single,
multiple or none; multiple and none score 0) and :mod:`.equivalence` judges it against the
correct answer (synonyms and broader names are right, more specific names are not).
Multiple choice maps the reply to the option it chose (:mod:`.mcq`).

Everything here is deterministic and offline. Each :class:`Verdict` says whether the rules
were sure; with a fallback configured (an async callable, typically an LLM grader wired in by
the caller), :meth:`CraftMDGrader.agrade` asks it about the unsure verdicts only, and every
verdict records who decided.

>>> grader = CraftMDGrader()
>>> grader.grade_frq("**Final Diagnosis:** Melanoma", "Superficial spreading melanoma").verdict
1
>>> grader.grade_frq("Lymphoma", "Hodgkin lymphoma").verdict  # a family: strict says no
0
>>> CraftMDGrader(policy="paper").grade_frq("Lymphoma", "Hodgkin lymphoma").verdict
1
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from .equivalence import RelationKind
from .extract import Category
from .mcq import Choice, choose, clean_option, is_correct
from .rules import OFFLINE, OFFLINE_UNSURE, Policy, grade_text

Format = Literal["frq", "mcq"]

@dataclass(frozen=True)
class Verdict:
    """One graded answer."""

    #: 1 when the answer is judged correct, else 0.
    verdict: int
    #: The diagnosis read from the answer (FRQ), the chosen option's text (MCQ), or "none" /
    #: "multiple" (the paper's labels) when there is no single one.
    extracted: str
    category: Category
    #: "offline", "offline (unsure)", or the name of the fallback that decided.
    decided_by: str
    reason: str
    #: Whether the deterministic rules were sure (a fallback is asked only when not).
    sure: bool = True
    #: How the free-response answer's name relates to the truth ("same", "synonym",
    #: "broader", "narrower", "sibling", "qualifier-flip", "related", "different"); None when
    #: nothing was judged.
    relation: RelationKind | None = None

    def record(self) -> dict[str, Any]:
        """The fields the ``agentclinic grade`` command writes for one answer."""
        return {k: v for k, v in asdict(self).items() if k != "sure"}


@dataclass(frozen=True)
class Question:
    """What the fallback is asked about: the answer to grade and what the rules proposed."""

    format: Format
    response: str
    correct_answer: str
    choices: tuple[str, ...]
    offline: Verdict


#: A fallback grader: returns its verdict (with its own ``decided_by``), or None to abstain.
Fallback = Callable[[Question], Awaitable[Verdict | None]]


class CraftMDGrader:
    """Grades CRAFT-MD answers; optionally defers unsure ones to ``fallback``."""

    def __init__(self, fallback: Fallback | None = None, policy: Policy = "strict") -> None:
        self.fallback = fallback
        #: How broader answers are graded (see :data:`.rules.Policy`).
        self.policy: Policy = policy

    # --- deterministic grading --------------------------------------------------------------

    def grade(self, response: str, correct_answer: str, *,
              choices: Sequence[str] | None = None, format: Format | None = None) -> Verdict:
        """Grade one answer offline; the format defaults to MCQ when choices are given."""
        fmt = format or ("mcq" if choices else "frq")
        if fmt == "mcq" and choices:
            return self.grade_mcq(response, choices, correct_answer)
        return self.grade_frq(response, correct_answer)

    def grade_frq(self, response: str, correct_answer: str,
                  choices: Sequence[str] = ()) -> Verdict:
        """Step 1 (extract) and step 2 (the rules of :mod:`.rules`, the pipeline both
        protocols grade with) on a free-response answer; ``choices`` are the case's options."""
        extraction, decision = grade_text(response, [correct_answer], choices, self.policy,
                                          diagnosis_asked=True)
        return Verdict(int(decision.correct), extraction.label, extraction.category,
                       OFFLINE if decision.sure else OFFLINE_UNSURE, decision.reason,
                       sure=decision.sure, relation=decision.relation)

    def grade_mcq(self, response: str, choices: Sequence[str], correct_answer: str, *,
                  verbatim: bool = False) -> Verdict:
        """Map a multiple-choice reply to its option and compare with the correct answer.

        ``verbatim`` reproduces the published pipeline's scoring (see :func:`.mcq.is_correct`).
        """
        choice = choose(response, choices)
        correct = is_correct(choice, choices, correct_answer, response=response,
                             verbatim=verbatim)
        return _mcq_verdict(choice, choices, correct)

    # --- with a fallback --------------------------------------------------------------------

    async def agrade(self, response: str, correct_answer: str, *,
                     choices: Sequence[str] | None = None,
                     format: Format | None = None) -> Verdict:
        """Like :meth:`grade`, asking the fallback whenever the rules are unsure."""
        offline = self.grade(response, correct_answer, choices=choices, format=format)
        if offline.sure or self.fallback is None:
            return offline
        question = Question(format or ("mcq" if choices else "frq"), response, correct_answer,
                            tuple(choices or ()), offline)
        decided = await self.fallback(question)
        if decided is None:
            return replace(offline, reason=f"{offline.reason}; the fallback abstained")
        return decided


def _mcq_verdict(choice: Choice, choices: Sequence[str], correct: bool) -> Verdict:
    if choice.index is None:
        return Verdict(0, "none", "none", OFFLINE if choice.sure else OFFLINE_UNSURE,
                       choice.reason, sure=choice.sure)
    chosen = clean_option(choices[choice.index])
    return Verdict(int(correct), chosen, "single", OFFLINE if choice.sure else OFFLINE_UNSURE,
                   choice.reason, sure=choice.sure)
