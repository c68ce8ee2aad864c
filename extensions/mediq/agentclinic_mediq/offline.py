"""Offline agents: a patient that retrieves facts, an expert that asks from a checklist.

The patient scores each atomic fact by the content words it shares with the question and
recites the best (at most two), or says it cannot answer. The expert asks a fixed checklist
a clinician runs through, and scores each option by the words it shares with what it has
learnt (a word counts once, and 1/k when k options share it; an option's score is divided
by the square root of its length, so long options do not win by size); ties go to a fixed
per-case order, so an expert that has learnt nothing is right about one time in four. Its
confidence is the top option's share of the scores; each setting turns that into
ask-or-answer as the paper's abstention module does.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from pytest_agentclinic import api

from .state import UNKNOWN, ExpertState, Step

_STOP = frozenset(re.findall(r"\w+", """
    a an the of and or in on at to for with without from by is are was were be been has have
    had his her he she it its this that these those which who whom patient year years old man
    woman male female following most likely diagnosis presents presented history their there
    no not any other after before during over under about into than then also as well due
    left right you your do did does what when where how"""))

#: The offline expert's questions, in order: what a clinician asks of most complaints.
CHECKLIST = (
    "What symptoms do you have, and where on the body are they?",
    "How long have you had them, and when did they start?",
    "Have you had fever, chills, pain or itching?",
    "What did the examination show: lesions, rash, swelling, tenderness?",
    "What is your past medical history?",
    "What medications are you taking, and have you been treated before?",
    "Is there any family history of disease?",
    "What are your vital signs: temperature, pulse, blood pressure?",
    "What did laboratory tests, cultures or a biopsy show?",
    "Do you smoke, drink alcohol or use drugs, and what is your sexual history?",
    "Any recent travel, exposures, new products or sick contacts?",
    "What did imaging or other studies show?",
)


def words(text: str) -> set[str]:
    """Content words, cut to six letters (``psoriasis`` and ``psoriatic`` meet)."""
    return {w[:6] for w in re.findall(r"[a-z]+", text.lower())
            if len(w) > 2 and w not in _STOP}


def fact_text(fact: str) -> str:
    """A fact without its upstream number (``3. The man ...`` -> ``The man ...``)."""
    return re.sub(r"^\s*\d+[.)]\s*", "", fact).strip()


class RetrievalPatient:
    """Answers from the case's atomic facts only: the best-matching ones, verbatim."""

    model = api.OFFLINE
    prompt_version = "mediq-retrieval-1"

    async def respond(self, view: api.TurnView) -> api.Reply:
        facts = [str(f) for f in view.case.metadata.get("facts", []) or []]  # type: ignore[union-attr]
        asked = words(view.incoming)
        scored = [(len(asked & words(fact_text(f))), -i, f) for i, f in enumerate(facts)]
        best = sorted((s for s in scored if s[0] > 0), reverse=True)[:2]
        if not best:
            return api.Reply(UNKNOWN)
        return api.Reply("\n".join(fact_text(f) for _, _, f in sorted(best, key=lambda s: -s[1])))


def option_scores(options: Mapping[str, str], known: str) -> dict[str, float]:
    """Each option's overlap with what is known; a word shared by k options counts 1/k
    (a word every option has tells them apart not at all)."""
    seen = words(known)
    own = {letter: words(text) for letter, text in options.items()}
    shared = Counter(w for ws in own.values() for w in ws)
    return {letter: sum(1 / shared[w] for w in ws & seen) / math.sqrt(max(1, len(ws)))
            for letter, ws in own.items()}


def best_option(scores: Mapping[str, float], case_id: str) -> str:
    """The top-scoring letter; ties in a fixed per-case order."""
    order = sorted(scores, key=lambda k: hashlib.sha256(f"{case_id}|{k}".encode()).hexdigest())
    return max(order, key=lambda k: scores[k])


def confidence(scores: Mapping[str, float]) -> float:
    """The top option's share of the scores (a quarter when nothing is known)."""
    total = sum(scores.values())
    return max(scores.values()) / total if total else 1 / max(1, len(scores))


class ChecklistExpert:
    """The offline expert: a fixed checklist, option overlap, the setting's abstention."""

    model = api.OFFLINE
    prompt_version = "mediq-checklist-1"

    def __init__(self, prob_threshold: float = 0.8, scale_threshold: int = 4) -> None:
        self.prob_threshold = prob_threshold
        self.scale_threshold = scale_threshold

    async def step(self, state: ExpertState) -> Step:
        known = " ".join([state.info, *(answer for _, answer in state.dialogue)])
        scores = option_scores(state.options, known)
        letter = best_option(scores, state.case.id)
        conf = confidence(scores)
        asked = len(state.dialogue)
        if state.must_answer or asked >= len(CHECKLIST) or self._sure(state.setting, scores,
                                                                        conf):
            return Step("choice", letter, letter, conf, f"ANSWER: {letter}")
        return Step("question", CHECKLIST[asked], letter, conf, CHECKLIST[asked])

    def _sure(self, setting: str, scores: Mapping[str, float], conf: float) -> bool:
        kind = setting.split("-")[0]
        top = sorted(scores.values(), reverse=True)
        singled_out = top[0] > 0 and top[0] > top[1]
        if kind == "fixed":
            return False
        if kind in ("basic", "binary"):
            return singled_out and (kind == "basic" or conf >= 0.5)
        if kind == "numerical":
            return conf >= 0.5
        if kind == "scale":
            return likert(conf) >= self.scale_threshold
        return conf >= self.prob_threshold  # numcutoff


def likert(conf: float) -> int:
    """A 1-5 rating of a 0-1 confidence (5: very confident)."""
    return 1 + round(4 * min(1.0, max(0.0, conf)))


def revealed(answer: str, facts: Sequence[str]) -> list[int]:
    """Indexes of the facts an answer recites (a line equal to the fact, or containing it)."""
    lines = [fact_norm(line) for line in answer.splitlines() if line.strip()]
    return [i for i, fact in enumerate(facts)
            if (f := fact_norm(fact_text(fact))) and any(f == line or f in line
                                                          for line in lines)]


def fact_norm(text: str) -> str:
    """Words only, lower-cased, without a leading number."""
    return " ".join(re.findall(r"[a-z0-9]+", fact_text(text).lower()))
