"""How the offline agents behave under each of the 23 AgentClinic biases (the catalogue and
the LLM prompt texts are :mod:`.biases`).

The offline agents, which cannot be prompted, change deterministically so that an offline run
already shows a bias effect:

================================  ============================================================
bias                              offline behaviour
================================  ============================================================
doctor:recency                    +0.30 to the distractor's evidence score
doctor:frequency                  +0.25 to the distractor; orders 3/4 of its test panel
doctor:false_consensus            +0.35 to the distractor; asks 3/4 of its checklist
doctor:confirmation               +0.40 to its first impression; orders 1/4 of its panel
doctor:status_quo                 +0.50 to the distractor (the "earlier" diagnosis); 1/2 panel
doctor:gender                     skips social history; asks 3/4 of the rest; 3/4 panel
doctor:race                       skips social and family history; asks 3/4; 3/4 panel
doctor:sexual_orientation         skips social history; orders 3/4 of its panel
doctor:cultural                   skips social and family history; 3/4 panel
doctor:education                  skips social history; asks 1/2 of the rest; 3/4 panel
doctor:religion                   skips social history; asks 3/4 of the rest; 1/2 panel
doctor:socioeconomic              skips social history; orders 1/2 of its panel
patient:recency                   turn 0: a friend had <belief>; multi-sentence answers lose
                                  their last sentence ("Nothing else worth mentioning")
patient:frequency                 turns 0, 3, 6...: "it's going around"; on even turns
                                  multi-sentence answers lose their last sentence
patient:false_consensus           turn 0: everyone says <belief>; multi-sentence answers keep
                                  only their first sentence
patient:self_diagnosis            even turns: insists on <belief>; multi-sentence answers lose
                                  their last sentence
patient:<implicit> (7 biases)     turn 0: a bias-specific remark of distrust; on even turns,
                                  questions on past history, medications, social or family
                                  history get "I'd rather not say."; an answer giving the
                                  demographics gets "I don't see why that matters."
================================  ============================================================

The doctor's rows are package data (``data/doctor_biases.tsv``, with the descriptions the
report shows). Fractions keep ``ceil(n * fraction)`` items, in order (:func:`adjust_plan`).
``turn`` is the 0-based index of the patient's answer. ``<belief>`` is the caller's lay
self-diagnosis (default "just stress"); the offline patient adds only the fixed phrases above
and the belief, so it never reveals the diagnosis unless the caller passes it as the belief.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from ..core.datafiles import Row, data_file, read_rows
from ..core.errors import InputError
from ..core.text import fold, sentences

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

Side = Literal["doctor", "patient"]
#: What a biased offline doctor favours (see :class:`DoctorAdjustment`).
Anchor = Literal["none", "distractor", "first_impression"]
NONE = "none"
#: Version of the offline biased behaviour; fold it into the offline agents' ``prompt_version``.
OFFLINE_BIAS_VERSION = "offline-bias-1"
DEFAULT_BELIEF = "just stress"

COGNITIVE = ("recency", "frequency", "false_consensus")
_IMPLICIT = ("gender", "race", "sexual_orientation", "cultural", "education", "religion",
             "socioeconomic")
#: Canonical order: doctor biases, then patient biases, each as in the AgentClinic code.
SIDES: dict[Side, tuple[str, ...]] = {
    "doctor": (*COGNITIVE, "confirmation", "status_quo", *_IMPLICIT),
    "patient": (*COGNITIVE, "self_diagnosis", *_IMPLICIT),
}

#: Every bias, ``side:bias``, in canonical order.
NAMES: tuple[str, ...] = tuple(f"{side}:{short}" for side, shorts in SIDES.items()
                               for short in shorts)
_NAME_SET = frozenset(NAMES)


def split_name(name: str) -> tuple[Side, str] | None:
    """``name``'s side and short name; ``None`` for ``none``. An unknown name is a
    ``ValueError`` naming every one allowed."""
    if name == NONE:
        return None
    if name not in _NAME_SET:
        raise ValueError(f"unknown bias {name!r}; allowed: {', '.join((NONE, *NAMES))}")
    side, short = name.split(":")
    return ("doctor" if side == "doctor" else "patient"), short


@dataclass(frozen=True)
class DoctorAdjustment:
    """How the scripted offline doctor changes under a bias; the neutral value changes nothing.

    ``anchor_weight`` is added to the anchor's evidence score (a 0..1 coverage) before the
    best candidate is chosen: the anchor then wins unless another candidate is better supported
    by more than that margin. The anchor is the distractor, or the ``first_impression``: the
    candidate the doctor would choose from the patient's first answer alone.
    """

    question_fraction: float = 1.0
    test_fraction: float = 1.0
    anchor: Anchor = "none"
    anchor_weight: float = 0.0
    #: History topics (see :func:`question_topics`) the doctor does not ask about.
    skip_topics: frozenset[str] = frozenset()


NEUTRAL = DoctorAdjustment()

_MINIMISE = "Nothing else worth mentioning, really."
_WITHHOLD = "I'd rather not say."
_WHY = "I don't see why that matters."
#: Patient cognitive biases: (remark with {belief}, turns it is said on, answer trimming).
_PATIENT_COGNITIVE: dict[str, tuple[str, str, str]] = {
    "recency": ("A friend of mine had something like this recently and it turned out to be "
                "{belief}, so I think that's what this is.", "first", "last"),
    "frequency": ("Loads of people I know have had this lately, and for all of them it was "
                  "{belief}; it's going around.", "every3", "last_even"),
    "false_consensus": ("Everyone I've asked says it's {belief}, so I'm not too worried.",
                        "first", "first_only"),
    "self_diagnosis": ("Honestly, I'm sure it's {belief}; I've read all about it.", "even", "last"),
}
_PATIENT_DISTRUST: dict[str, str] = {
    "gender": "To be honest, I'd have felt easier with a doctor of a different gender.",
    "race": "I'm not sure you'll really take someone like me seriously.",
    "sexual_orientation": "I'll be honest, I'm not comfortable sharing much with you.",
    "cultural": "I doubt you know much about people from my background.",
    "education": "Where did you train again? I'm not sure you're the right doctor for this.",
    "religion": "I have a feeling you'll judge me, so I'll keep this short.",
    "socioeconomic": "People like you don't usually understand people like me.",
}
_TRIM_TEXT = {"last": "lose their last sentence",
              "last_even": "lose their last sentence on even turns",
              "first_only": "keep only their first sentence"}
_WHEN_TEXT = {"first": "on its first answer", "every3": "on turns 0, 3, 6...",
              "even": "on even turns"}

#: Question words that mark the history topics biased agents avoid or withhold.
_TOPIC_WORDS: dict[str, tuple[str, ...]] = {
    "past_history": ("medical history", "past", "previous", "condition", "illness", "surger",
                     "operation", "hospital", "chronic", "allerg"),
    "medications": ("medication", "medicine", "taking", "pill", "prescri", "supplement",
                    "tablet"),
    "social": ("smok", "tobacco", "alcohol", "drink", "recreational", "drug", "work", "job",
               "occupation", "living", "travel", "sexual", "partner", "diet", "exercise"),
    "family": ("family", "mother", "father", "parent", "sibling", "brother", "sister",
               "relative", "run in"),
}
TOPICS: tuple[str, ...] = tuple(_TOPIC_WORDS)

_ANCHORS: dict[str, Anchor] = {anchor: anchor for anchor in get_args(Anchor)}


def _number(row: Row, field: str, text: str) -> float:
    """A cell holding a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise row.error(f"{text!r} is not a number", field) from None
    if not 0.0 <= value <= 1.0:
        raise row.error(f"{text} is not from 0 to 1", field)
    return value


def _doctor_row(row: Row) -> tuple[DoctorAdjustment, str]:
    """One row of ``data/doctor_biases.tsv``: the bias's adjustment and its description."""
    _, questions, tests, anchor, weight, topics, description = row.cells
    if anchor not in _ANCHORS:
        raise row.error(f"{anchor!r} is not one of {', '.join(_ANCHORS)}", "anchor")
    skip = frozenset() if topics == "-" else frozenset(topics.split(","))
    if not skip <= set(TOPICS):
        raise row.error(f"unknown topics {sorted(skip - set(TOPICS))}; known: "
                        f"{', '.join(TOPICS)}", "skip_topics")
    return DoctorAdjustment(_number(row, "question_fraction", questions),
                            _number(row, "test_fraction", tests), _ANCHORS[anchor],
                            _number(row, "anchor_weight", weight), skip), description


def read_doctor_table(source: Traversable | Path) -> dict[str, tuple[DoctorAdjustment, str]]:
    """The offline doctor's behaviour under each doctor bias, from its table (7 columns: the
    bias, then :class:`DoctorAdjustment`'s fields, then the description); every doctor bias
    has one row."""
    table: dict[str, tuple[DoctorAdjustment, str]] = {}
    for row in read_rows(source, 7):
        if row.cells[0] not in SIDES["doctor"] or row.cells[0] in table:
            raise row.error(f"{row.cells[0]!r} is not a doctor bias or is given twice", "bias")
        table[row.cells[0]] = _doctor_row(row)
    if missing := [b for b in SIDES["doctor"] if b not in table]:
        raise InputError(f"no row for {', '.join(missing)}", path=str(source))
    return table


_DOCTOR_OFFLINE = read_doctor_table(data_file(__package__, "doctor_biases.tsv"))


def description(side: Side, short: str) -> str:
    """What the offline agent does under the bias, in one sentence (the report shows it)."""
    if side == "doctor":
        return _DOCTOR_OFFLINE[short][1]
    if short in _PATIENT_COGNITIVE:
        _, when, trim = _PATIENT_COGNITIVE[short]
        return (f"Voices its lay belief {_WHEN_TEXT[when]}; answers of several sentences "
                f"{_TRIM_TEXT[trim]}, replaced by a remark that the rest is minor.")
    return ("Voices distrust of the doctor on its first answer, answers questions on past, "
            "medication, social or family history with \"I'd rather not say.\" on even turns, "
            "and will not give its demographics.")


def question_topics(question: str) -> frozenset[str]:
    """The history topics (:data:`TOPICS`) a question asks about."""
    q = fold(question)
    return frozenset(t for t, keys in _TOPIC_WORDS.items() if any(k in q for k in keys))


def _join(items: Sequence[str]) -> str:
    text = " ".join(items).rstrip(" ;,")
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _trim(answer: str, rule: str, turn: int) -> str:
    items = sentences(answer)
    if len(items) < 2 or (rule == "last_even" and turn % 2):
        return answer
    kept = items[:1] if rule == "first_only" else items[:-1]
    return f"{_join(kept)} {_MINIMISE}"


def offline_patient_answer(name: str, answer: str, question: str, *, turn: int,
                           demographics: str, belief: str = DEFAULT_BELIEF) -> str:
    """The offline patient's ``answer`` to ``question`` as the patient biased by ``name`` says it.

    ``none`` and doctor biases return ``answer`` unchanged. See the module table for the rules;
    ``belief`` is a lay self-diagnosis usable after "it's" ("the flu", "just stress").
    """
    split = split_name(name)
    if split is None or split[0] != "patient":
        return answer
    short = split[1]
    if short in _PATIENT_COGNITIVE:
        remark, when, trim = _PATIENT_COGNITIVE[short]
        out = _trim(answer, trim, turn)
        says = {"first": turn == 0, "every3": turn % 3 == 0, "even": turn % 2 == 0}[when]
        return f"{out} {remark.format(belief=belief.strip() or DEFAULT_BELIEF)}" if says else out
    # Implicit: distrust makes the patient keep its identity and, every other turn, its
    # personal history to itself; the doctor must do without that information.
    if demographics.strip() and fold(demographics.strip()) in fold(answer):
        out = _WHY
    elif turn % 2 == 0 and question_topics(question):
        out = _WITHHOLD
    else:
        out = answer
    return f"{_PATIENT_DISTRUST[short]} {out}" if turn == 0 else out


def offline_doctor_adjustment(name: str) -> DoctorAdjustment:
    """How the offline doctor changes under ``name``; :data:`NEUTRAL` for none/patient biases."""
    split = split_name(name)
    if split is None or split[0] != "doctor":
        return NEUTRAL
    return _DOCTOR_OFFLINE[split[1]][0]


def adjust_plan(steps: Sequence[str], adjustment: DoctorAdjustment) -> list[str]:
    """Apply ``adjustment`` to the offline doctor's plan (questions, then ``REQUEST ...``s).

    Questions on a skipped topic are dropped, then ``ceil(n * fraction)`` of the questions and
    of the requests (``REQUEST TEST:``, ``REQUEST IMAGES``) are kept, in order. A shorter plan
    means an earlier diagnosis.
    """
    tests = [s for s in steps if s.startswith("REQUEST")]
    questions = [s for s in steps if not s.startswith("REQUEST")
                 and not question_topics(s) & adjustment.skip_topics]
    return [*questions[:math.ceil(len(questions) * adjustment.question_fraction)],
            *tests[:math.ceil(len(tests) * adjustment.test_fraction)]]


def anchored_choice(scores: Mapping[str, float], anchor: str | None, weight: float) -> str:
    """The best candidate after adding ``weight`` to ``anchor``'s score; ties alphabetical."""
    if not scores:
        raise ValueError("no candidates to choose from")
    return min(sorted(scores), key=lambda c: -(scores[c] + (weight if c == anchor else 0.0)))
