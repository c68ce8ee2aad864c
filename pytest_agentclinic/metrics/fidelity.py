"""Patient fidelity: do a simulated patient's answers stay true to its case?

For each doctor question, a patient's answer is compared with the case's facts (the method of
:mod:`.facts`; definitions pinned by ``tests/test_metrics_fidelity.py``):

* *facts conveyed*: the case facts an answer covers at half or more of their tokens;
  two patients' conveyed facts give *facts in common* and the facts only one of them told.
* *added*: an answer sentence whose tokens are mostly (more than half) absent from the whole
  case text, i.e. something the case does not say; "I don't know" / "that was not provided"
  sentences are never added. An added sentence with a negation is an *added denial* (a
  symptom the case never mentions, denied: CRAFT-MD's experts saw its patient-AI do this for
  out-of-scope questions), otherwise an *added claim* (an invented finding or history).
* *diagnosis revealed*: an answer containing every key word of one of the case's accepted
  diagnosis names.
* *exam finding revealed*: an answer conveying an ``exam`` fact (a finding the doctor should
  have to examine or test for).

The *leak rate* of a patient is the share of conversations in which it revealed the
diagnosis, and apart from it the share in which it revealed an exam finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from ..core.text import key_words, sentences, variants, words
from .facts import ONE_UTTERANCE, SPREAD, Fact, conveys, coverage, tokens

FIDELITY_VERSION = 1
_UNKNOWN = re.compile(r"\b(?:don'?t know|not sure|no idea|can'?t (?:say|confirm|provide)|"
                      r"haven'?t (?:mentioned|discussed)|not (?:mentioned|provided|included|"
                      r"discussed|specified)|(?:no|any) information|didn'?t mention|"
                      r"does(?:n'?t| not) (?:mention|provide|say)|not aware)\b", re.I)
_DENIAL = re.compile(r"\b(?:no|not|never|none|nobody|nothing|haven'?t|hasn'?t|don'?t|"
                     r"doesn'?t|didn'?t|isn'?t|aren'?t|wasn'?t|n't)\b|n't\b", re.I)


@dataclass(frozen=True)
class AnswerCheck:
    """What one answer conveyed, added and revealed."""

    conveyed: frozenset[int]
    added: tuple[str, ...]
    claims: int
    revealed_diagnosis: bool
    revealed_exam: bool


def check_answer(answer: str, facts: Sequence[Fact], case_text: str,
                 diagnoses: Sequence[str], told_before: frozenset[str] = frozenset()
                 ) -> AnswerCheck:
    """Check one answer against the case (see the module docstring); ``told_before`` are the
    tokens of the same patient's earlier answers (a fact may be told in pieces)."""
    said = tokens(answer)
    conveyed = frozenset(i for i, f in enumerate(facts)
                         if conveys(f.tokens, said, ONE_UTTERANCE)
                         or conveys(f.tokens, said | told_before, SPREAD))
    known = tokens(case_text)
    added = tuple(s for s in sentences(answer)
                  if not _UNKNOWN.search(s) and (t := tokens(s)) and coverage(t, known) < 0.5)
    return AnswerCheck(conveyed, added, sum(not _DENIAL.search(s) for s in added),
                       names_diagnosis(answer, diagnoses),
                       any(facts[i].kind == "exam" for i in conveyed))


def names_diagnosis(text: str, diagnoses: Sequence[str]) -> bool:
    """Whether ``text`` holds every key word of one accepted diagnosis name."""
    said = set(words(text))
    return any(kw and kw <= said for name in diagnoses for v in variants(name)
               for kw in [key_words(v)])


class PatientFidelity(BaseModel):
    """One patient's fidelity over one conversation's questions."""

    model_config = ConfigDict(frozen=True)

    version: int = FIDELITY_VERSION
    case_id: str
    patient: str
    answers: int
    facts: int
    conveyed: list[int]
    added_sentences: int
    added_claims: int
    answers_with_added: int
    revealed_diagnosis: bool
    revealed_exam: bool


def conversation_fidelity(case_id: str, patient: str, answers: Sequence[str],
                          facts: Sequence[Fact], case_text: str,
                          diagnoses: Sequence[str]) -> PatientFidelity:
    """Aggregate :func:`check_answer` over one conversation's answers."""
    checks, before = [], frozenset[str]()
    for answer in answers:
        checks.append(check_answer(answer, facts, case_text, diagnoses, before))
        before |= tokens(answer)
    conveyed = sorted(set().union(*(c.conveyed for c in checks))) if checks else []
    return PatientFidelity(
        case_id=case_id, patient=patient, answers=len(answers), facts=len(facts),
        conveyed=conveyed, added_sentences=sum(len(c.added) for c in checks),
        added_claims=sum(c.claims for c in checks),
        answers_with_added=sum(bool(c.added) for c in checks),
        revealed_diagnosis=any(c.revealed_diagnosis for c in checks),
        revealed_exam=any(c.revealed_exam for c in checks))


@dataclass
class FidelitySummary:
    """Two patients compared over the same questions (``b`` may be absent)."""

    conversations: int = 0
    answers: int = 0
    facts: int = 0
    conveyed: dict[str, int] = field(default_factory=dict)
    common: int = 0
    added_sentences: dict[str, int] = field(default_factory=dict)
    added_claims: dict[str, int] = field(default_factory=dict)
    answers_with_added: dict[str, int] = field(default_factory=dict)
    diagnosis_leaks: dict[str, int] = field(default_factory=dict)
    exam_leaks: dict[str, int] = field(default_factory=dict)
    #: Conversations not scored because a model call failed: ``case_id: error``.
    errors: list[str] = field(default_factory=list)

    def add(self, pair: Sequence[PatientFidelity]) -> None:
        """Count one conversation, answered by each patient of ``pair``."""
        self.conversations += 1
        self.answers += pair[0].answers
        self.facts += pair[0].facts
        for f in pair:
            for name, value in (("conveyed", len(f.conveyed)),
                                ("added_sentences", f.added_sentences),
                                ("added_claims", f.added_claims),
                                ("answers_with_added", f.answers_with_added),
                                ("diagnosis_leaks", int(f.revealed_diagnosis)),
                                ("exam_leaks", int(f.revealed_exam))):
                counter: dict[str, int] = getattr(self, name)
                counter[f.patient] = counter.get(f.patient, 0) + value
        if len(pair) == 2:
            self.common += len(set(pair[0].conveyed) & set(pair[1].conveyed))

    def rate(self, name: str, patient: str) -> float:
        """A per-conversation count of ``name`` as a share of the conversations."""
        counter: dict[str, int] = getattr(self, name)
        return counter.get(patient, 0) / self.conversations if self.conversations else 0.0
