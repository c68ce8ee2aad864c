"""Information gathering of one encounter, from its utterances and its case's facts.

Definitions (pinned by ``tests/test_metrics_gathering.py`` with hand-made transcripts):

* *elicited*: a fact conveyed by the patient's or measurement agent's words (the method is
  in :mod:`.facts`); the doctor's own words never count.
* *questions*: doctor turns of kind ``question``. A question is *repeated* when its tokens
  overlap an earlier question's by :data:`REPEAT_JACCARD` or more (Jaccard), *redundant*
  when its answer conveyed no new fact but did restate one already elicited.
* *tests ordered*: doctor turns of kind ``test_request``; the spend prices those the
  measurement agent performed (not those refused under a test budget).
* *turns to diagnosis*: the doctor turn that gave the diagnosis (None without one).
* *premature closure*: a diagnosis given before any key fact was elicited; *missed closure*:
  no diagnosis although every key fact was elicited. Both are None when the case marks no
  key facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..core.case import Case
from ..core.measures import EncounterMeasures
from .facts import METHOD, ONE_UTTERANCE, SPREAD, Fact, case_facts, conveys, tokens
from .prices import REFUSED, PriceTable, default_prices

REPEAT_JACCARD = 0.6
_TELLERS = (("patient", "answer"), ("measurement", "test_result"))


class Said(Protocol):
    """What the measures read of an utterance (a transcript's ``Utterance`` fits)."""

    @property
    def turn(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def detail(self) -> str: ...


def elicitation(facts: Sequence[Fact], utterances: Sequence[Said]) -> tuple[dict[int, int],
                                                                             dict[int, set[int]]]:
    """Which facts were elicited at which turn, and which facts each telling utterance
    restated (by utterance index), whether new or not."""
    fact_tokens = [f.tokens for f in facts]
    elicited: dict[int, int] = {}
    restated: dict[int, set[int]] = {}
    so_far: frozenset[str] = frozenset()
    for u_index, u in enumerate(utterances):
        if (u.role, u.kind) not in _TELLERS:
            continue
        said = tokens(u.text)
        so_far |= said
        restated[u_index] = {i for i, ft in enumerate(fact_tokens)
                             if conveys(ft, said, ONE_UTTERANCE)}
        for i, ft in enumerate(fact_tokens):
            if i not in elicited and (i in restated[u_index] or conveys(ft, so_far, SPREAD)):
                elicited[i] = u.turn
    return elicited, restated


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _questions(utterances: Sequence[Said], elicited: dict[int, int],
               restated: dict[int, set[int]]) -> tuple[int, int, int]:
    asked: list[frozenset[str]] = []
    repeated = redundant = 0
    turns_with_news = set(elicited.values())
    for index, u in enumerate(utterances):
        if u.role != "doctor" or u.kind != "question":
            continue
        q = tokens(u.text)
        if any(_jaccard(q, earlier) >= REPEAT_JACCARD for earlier in asked):
            repeated += 1
        asked.append(q)
        answer = next((j for j in range(index + 1, len(utterances))
                       if j in restated and utterances[j].turn == u.turn), None)
        if answer is None:
            continue
        if restated[answer] and u.turn not in turns_with_news:
            redundant += 1
    return len(asked), repeated, redundant


def _tests(utterances: Sequence[Said]) -> tuple[list[str], int]:
    """The tests performed (requested and not refused) and the number refused."""
    done, refused = [], 0
    for i, u in enumerate(utterances):
        if u.kind != "test_request":
            continue
        result = next((r for r in utterances[i + 1:] if r.role == "measurement"
                       and r.turn == u.turn), None)
        if result is not None and result.text.startswith(REFUSED):
            refused += 1
        else:
            done.append(u.detail or u.text)
    return done, refused


def for_encounter(case: Case, utterances: Sequence[Said], *, outcome: str | None,
                  experiment: str | None) -> EncounterMeasures | None:
    """The measures of a finished encounter, or None where they do not apply: errors, and
    CRAFT-MD items other than ``multiturn`` (their conversation is the multiturn item's)."""
    if outcome in (None, "error") or experiment not in (None, "multiturn"):
        return None
    return measure(case_facts(case), utterances)


def measure(facts: Sequence[Fact], utterances: Sequence[Said],
            prices: PriceTable | None = None) -> EncounterMeasures:
    """The measures of one encounter (see the module docstring for each definition)."""
    prices = prices or default_prices()
    elicited, restated = elicitation(facts, utterances)
    questions, repeated, redundant = _questions(utterances, elicited, restated)
    tests, refused = _tests(utterances)
    spend, unpriced = prices.spend(tests)
    dx_turn = next((u.turn for u in utterances if u.role == "doctor" and u.kind == "diagnosis"),
                   None)
    keys = [i for i, f in enumerate(facts) if f.key]
    premature = missed = None
    if keys:
        before = [i for i in keys if dx_turn is not None and elicited.get(i, dx_turn) < dx_turn]
        premature = dx_turn is not None and not before
        missed = dx_turn is None and all(i in elicited for i in keys)
    return EncounterMeasures(
        method=METHOD, facts=len(facts), facts_elicited=len(elicited), key_facts=len(keys),
        key_facts_elicited=sum(i in elicited for i in keys), questions=questions,
        repeated_questions=repeated, redundant_questions=redundant,
        tests_ordered=len(tests) + refused, tests_refused=refused,
        test_spend_usd=round(spend, 2), tests_unpriced=unpriced, turns_to_diagnosis=dx_turn,
        premature_closure=premature, missed_closure=missed,
        elicited_at=dict(sorted(elicited.items())))
