"""The offline doctor: a transparent scripted baseline, not a model.

Its script (documented in the README):
1. history: a fixed checklist of questions, asked in order;
2. tests: a fixed panel of requests, in order;
3. diagnosis: among a candidate list (the case's answer choices when it has them, otherwise
   every diagnosis of the case file it came from, like an examinee with a long answer list),
   the candidate whose distinctive words appear most, IDF-weighted, in what the patient and
   the tests said. Ties go to the alphabetically first name.
The budget is split so the last interaction is always the diagnosis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..grading.normalize import key_words, words
from .base import Reply, TurnView

VERSION = "offline-doctor-1"

HISTORY = (
    "What brings you in today, and when did it start?",
    "What other symptoms have you noticed?",
    "Do you have any medical conditions or past illnesses?",
    "Are you taking any medications?",
    "Do you smoke, drink alcohol, and what is your work and living situation?",
    "Does anyone in your family have medical problems?",
    "Have you had fevers, weight changes, or problems anywhere else in your body?",
)
TESTS = (
    "Vital signs",
    "Physical examination",
    "Complete blood count",
    "Blood tests",
    "Urinalysis",
    "Imaging",
    "Biopsy",
    "Electrocardiogram",
)


def plan(budget: int, *, images: bool = False) -> list[str]:
    """The utterances before the diagnosis for a budget of ``budget`` interactions.

    With ``images`` (a case whose images come on request) the first test step is
    ``REQUEST IMAGES``.
    """
    slots = max(budget - 1, 0)
    tests_wanted = [*(["REQUEST IMAGES"] if images else []),
                    *(f"REQUEST TEST: {t}" for t in TESTS)]
    questions = min(len(HISTORY), max((slots + 1) // 2, slots - len(tests_wanted)))
    tests = min(len(tests_wanted), slots - questions)
    return [*HISTORY[:questions], *tests_wanted[:tests]]


def choose(candidates: Sequence[str], evidence: str) -> str:
    """The candidate best supported by ``evidence`` (IDF-weighted key-word coverage)."""
    keys = {c: key_words(c) for c in candidates}
    doc_freq: dict[str, int] = {}
    for key in keys.values():
        for w in key:
            doc_freq[w] = doc_freq.get(w, 0) + 1
    idf = {w: math.log((1 + len(keys)) / (1 + n)) + 1.0 for w, n in doc_freq.items()}
    seen = set(words(evidence))

    def score(name: str) -> float:
        key = keys[name]
        total = sum(idf[w] for w in key) or 1.0
        return sum(idf[w] for w in key if w in seen) / total

    return min(sorted(candidates), key=lambda c: -score(c))


class OfflineDoctor:
    """History checklist, then a test panel, then the best-supported candidate."""

    model = "offline"
    prompt_version = VERSION

    def __init__(self, candidates: Sequence[str] = (), *, image_mode: str | None = None) -> None:
        self.candidates = tuple(dict.fromkeys(candidates))
        self.image_mode = image_mode

    async def respond(self, view: TurnView) -> Reply:
        """The next scripted utterance, or the diagnosis on the last interaction."""
        steps = plan(view.turn_budget,
                     images=bool(view.case.images) and self.image_mode == "request")
        done = view.turn_budget - view.turns_left
        if view.turns_left > 1 and done < len(steps):
            return Reply(steps[done])
        heard = " ".join(u.text for u in view.history if u.role in ("patient", "measurement"))
        pool = view.case.choices or self.candidates
        if not pool:
            return Reply("DIAGNOSIS READY: unknown")
        return Reply(f"DIAGNOSIS READY: {choose(pool, heard)}")
