"""A biased encounter's distractor: a plausible wrong diagnosis the bias prompts name (the
recency, frequency, false-consensus and status-quo doctors favour it; a self-diagnosing
patient believes it)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..core.text import fold, key_words


def _same_condition(a: str, b: str) -> bool:
    fa, fb = fold(a).strip(), fold(b).strip()
    ka, kb = key_words(a), key_words(b)
    # A broader or narrower name counts as the diagnosis for the moderator, so it is not wrong.
    return fa in fb or fb in fa or bool(ka and kb and (ka <= kb or kb <= ka))


_FALLBACK_DISTRACTORS = ("viral gastroenteritis", "tension-type headache",
                         "generalized anxiety disorder", "viral upper respiratory infection",
                         "musculoskeletal strain", "iron deficiency anemia")


def pick_distractor(candidates: Sequence[str], accepted: Sequence[str], *, key: str) -> str:
    """A plausible wrong diagnosis: one of ``candidates`` naming none of ``accepted``.

    Deterministic in ``key`` (e.g. the case id) through sha256, so runs and cache keys are
    stable. With no usable candidate, a common condition unrelated to ``accepted`` is used.
    """
    truth = [a for a in accepted if a.strip()]  # a blank synonym would match every name

    def usable(c: str) -> bool:
        return bool(c.strip()) and not any(_same_condition(c, a) for a in truth)

    pool = sorted({c.strip() for c in candidates if usable(c)})
    pool = pool or [c for c in _FALLBACK_DISTRACTORS if usable(c)]
    if not pool:
        raise ValueError(f"no distractor unrelated to {truth}")
    index = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % len(pool)
    return pool[index]
