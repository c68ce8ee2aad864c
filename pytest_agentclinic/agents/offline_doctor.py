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

from ..core.roles import Reply, TurnView
from ..core.text import key_words, words
from .bias_behaviour import (
    OFFLINE_BIAS_VERSION,
    adjust_plan,
    anchored_choice,
    offline_doctor_adjustment,
)

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
    support = scores(candidates, evidence)
    return min(sorted(support), key=lambda c: -support[c])


def scores(candidates: Sequence[str], evidence: str) -> dict[str, float]:
    """Each candidate's support in ``evidence``: the IDF-weighted share of its key words seen."""
    keys = {c: key_words(c) for c in candidates}
    doc_freq: dict[str, int] = {}
    for key in keys.values():
        for w in key:
            doc_freq[w] = doc_freq.get(w, 0) + 1
    idf = {w: math.log((1 + len(keys)) / (1 + n)) + 1.0 for w, n in doc_freq.items()}
    seen = set(words(evidence))

    def score(name: str) -> float:
        key = keys[name]
        # fsum: exact whatever the set's (hash-seeded) order, so equal scores tie exactly
        # and ties go alphabetically in every process.
        total = math.fsum(idf[w] for w in key) or 1.0
        return math.fsum(idf[w] for w in key if w in seen) / total

    return {c: score(c) for c in keys}


class OfflineDoctor:
    """History checklist, then a test panel, then the best-supported candidate."""

    model = "offline"
    prompt_version = VERSION

    def __init__(self, candidates: Sequence[str] = (), *, image_mode: str | None = None,
                 bias: str = "none", distractor: str = "") -> None:
        self.candidates = tuple(dict.fromkeys(candidates))
        self.image_mode = image_mode
        #: A biased doctor plans less and anchors (see agents/bias_behaviour.py for each bias).
        self.adjustment = offline_doctor_adjustment(bias)
        self.distractor = distractor
        if bias != "none":
            self.prompt_version = f"{VERSION}+{bias}+{OFFLINE_BIAS_VERSION}"

    async def respond(self, view: TurnView) -> Reply:
        """The next scripted utterance, or the diagnosis on the last interaction."""
        steps = adjust_plan(plan(view.turn_budget, images=bool(view.case.images)
                                 and self.image_mode == "request"), self.adjustment)
        done = view.turn_budget - view.turns_left
        if view.turns_left > 1 and done < len(steps):
            return Reply(steps[done])
        pool = list(dict.fromkeys([*(view.case.choices or self.candidates)]))
        if not pool:
            return Reply("DIAGNOSIS READY: unknown")
        return Reply(f"DIAGNOSIS READY: {self._diagnose(pool, view)}")

    def _diagnose(self, pool: list[str], view: TurnView) -> str:
        said = [u.text for u in view.history if u.role in ("patient", "measurement")]
        adj = self.adjustment
        if adj.anchor == "distractor" and self.distractor:
            anchor: str | None = self.distractor
            pool = list(dict.fromkeys([*pool, self.distractor]))
        elif adj.anchor == "first_impression" and said:
            anchor = choose(pool, said[0])  # what the first answer alone suggested
        else:
            anchor = None
        return anchored_choice(scores(pool, " ".join(said)), anchor, adj.anchor_weight)
