"""The offline patient: answers from the case's patient fields, deterministically."""

from __future__ import annotations

import re

from ..core.case import Case, PatientActor
from ..core.roles import Reply, TurnView
from ..core.text import content_words, fold, sentences
from .bias_behaviour import DEFAULT_BELIEF, OFFLINE_BIAS_VERSION, offline_patient_answer
from .biases import BIASES

VERSION = "offline-patient-1"
NO_INFO = "I'm sorry, I don't know anything about that."

# Topic -> words in a question that point at it. Checked in order; the best-scoring wins.
_TOPICS: dict[str, tuple[str, ...]] = {
    "family_history": ("family", "mother", "father", "parent", "sibling", "brother", "sister",
                       "relative", "inherit", "genetic", "run in"),
    "medications": ("medication", "medicine", "drugs do you take", "taking", "pill", "prescri",
                    "supplement", "tablet", "inhaler", "insulin"),
    "past_medical_history": ("medical history", "past", "previous", "before", "condition",
                             "illness", "surger", "operation", "hospital", "diagnosed with",
                             "chronic", "allerg", "vaccin"),
    "social_history": ("smoke", "smoking", "tobacco", "alcohol", "drink", "recreational",
                       "work", "job", "occupation", "live", "living", "travel", "sexual",
                       "partner", "diet", "exercise", "home", "pets"),
    "demographics": ("how old", "your age", "age?", "where are you from", "ethnic"),
    "secondary": ("other symptom", "anything else", "any other", "associated", "besides",
                  "in addition", "else"),
    "history": ("bring", "brings", "what happened", "tell me", "describe", "when did",
                "how long", "start", "began", "begin", "onset", "main", "problem", "concern",
                "trouble", "complaint", "how are you", "feeling"),
}


def _field_text(actor: PatientActor, topic: str) -> str:
    if topic == "secondary":
        return "; ".join(actor.symptoms.secondary)
    if topic == "history":
        return actor.history or actor.symptoms.primary
    if topic == "medications" and not actor.medications:
        # Upstream cases often keep medications inside the past medical history.
        pmh = sentences(actor.past_medical_history)
        return " ".join(s for s in pmh if re.search(r"medication|taking|takes|prescribed", s, re.I))
    return str(getattr(actor, topic, ""))


def _all_sentences(actor: PatientActor) -> list[str]:
    fields = [actor.history, actor.symptoms.primary, *actor.symptoms.secondary,
              actor.past_medical_history, actor.medications, actor.social_history,
              actor.family_history, actor.review_of_systems, *actor.other.values()]
    return [s for f in fields for s in sentences(f)]


def _clamp(rating: int) -> int:
    return max(1, min(10, rating))


def _bias_penalty(bias: str) -> int:
    if not bias.startswith("patient:"):
        return 0
    return 3 if BIASES[bias].kind == "implicit" else 1


def _redact(text: str, case: Case) -> str:
    for name in sorted(case.accepted_diagnoses, key=len, reverse=True):
        text = re.sub(re.escape(name), "my condition", text, flags=re.I)
    return text


class OfflinePatient:
    """Matches each question to a patient field; otherwise to the sentences it shares words with.

    Says plainly when the case holds no such information and never states the diagnosis
    (any accepted diagnosis name in its text is replaced with "my condition").
    """

    model = "offline"
    prompt_version = VERSION

    def __init__(self, bias: str = "none", belief: str = DEFAULT_BELIEF) -> None:
        self.bias = bias
        #: What a self-diagnosing or biased patient believes it has (never the diagnosis).
        self.belief = belief
        if bias != "none":
            self.prompt_version = f"{VERSION}+{bias}+{OFFLINE_BIAS_VERSION}"

    async def respond(self, view: TurnView) -> Reply:
        """Answer the doctor's question in ``view.incoming`` (or rate the doctor at the end)."""
        if view.history and view.history[-1].kind == "perception_request":
            return Reply(self.ratings(view))
        answer = _redact(self.answer(view.case.patient, view.incoming), view.case)
        if self.bias != "none":
            turn = sum(u.role == "patient" for u in view.history)
            answer = offline_patient_answer(self.bias, answer, view.incoming, turn=turn,
                                            demographics=view.case.patient.demographics,
                                            belief=self.belief)
        return Reply(answer)

    def ratings(self, view: TurnView) -> str:
        """The three 1-10 ratings, by a documented rule (see README, "Patient perception").

        Confidence grows with the care taken: 4 + one point per two questions (up to 3) and per
        two tests (up to 3). A patient holding an implicit bias against the doctor rates 3
        points lower, a cognitive one 1 point lower; compliance is confidence minus one when
        the patient is biased; willingness to consult again equals confidence.
        """
        asked = sum(u.kind == "question" for u in view.history)
        tests = sum(u.kind in ("test_request", "image_request") for u in view.history)
        confidence = 4 + min(asked // 2, 3) + min(tests // 2, 3) - _bias_penalty(self.bias)
        compliance = confidence - (1 if self.bias.startswith("patient:") else 0)
        return (f"Confidence: {_clamp(confidence)}\nCompliance: {_clamp(compliance)}\n"
                f"Consultation: {_clamp(confidence)}")

    def answer(self, actor: PatientActor, question: str) -> str:
        """The reply to ``question`` from ``actor``'s fields."""
        q = fold(question)
        scores = {t: sum(k in q for k in keys) for t, keys in _TOPICS.items()}
        topic = max(scores, key=lambda t: scores[t])
        if scores[topic] > 0:
            text = _field_text(actor, topic)
            return text if text else NO_INFO
        return self._by_overlap(actor, question)

    def _by_overlap(self, actor: PatientActor, question: str) -> str:
        asked = content_words(question) - {"any", "do", "have", "you", "had", "ever", "notice"}
        ranked = sorted(
            ((len(asked & content_words(s)), i, s) for i, s in enumerate(_all_sentences(actor))),
            key=lambda t: (-t[0], t[1]),
        )
        best = [s for score, _, s in ranked[:2] if score > 0]
        if best:
            return " ".join(best)
        return "No, I haven't noticed anything like that." if asked else NO_INFO
