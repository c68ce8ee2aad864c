"""What the rules decide about an extracted diagnosis, and whether they are sure of it.

Both protocols grade through these rules (see :mod:`.pipeline`). The rules are *sure* of:

* **0** when the answer names several diagnoses or none (:mod:`.extract`);
* **correct** when the diagnosis is the truth, one of the case's accepted names, or a synonym
  or broader name that the terminology establishes (:mod:`.equivalence`);
* **0** when the diagnosis is another of the case's answer choices: a case's choices are
  distinct diagnoses by the case author's design, so naming a distractor is naming something
  else;
* **0** when the diagnosis is only a fragment of the true name that names no condition by
  itself ("primary" for primary adrenal insufficiency, "bullous" for bullous pemphigoid): a
  shared word is not a shared diagnosis;
* **0** when the terminology knows both names as conditions and relates them in no way, and
  they share no word.

Everything else (a partial overlap, a name the terminology does not know, an ICD-10-CM
relation that is as often a sibling as a synonym) is *unsure*: the moderator model decides
when one is configured; otherwise the rules' best guess stands, marked unsure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..cases.models import Case
from .craftmd_grader import CraftMDGrader
from .equivalence import relate, truth_forms
from .extract import Extraction
from .kinds import kind
from .terminology import CONDITION_SUFFIXES, GENERIC, default_terminology, key, tokens

#: ``decided_by`` of a verdict the rules were sure of.
OFFLINE = "offline"
#: ``decided_by`` of a verdict the rules were unsure of, with no model to ask.
OFFLINE_UNSURE = "offline (unsure)"

_GRADER = CraftMDGrader()


@dataclass(frozen=True)
class Decision:
    """The rules' verdict on an extraction; ``sure`` False leaves it to a model."""

    correct: bool
    sure: bool
    reason: str
    #: How the diagnosis relates to the truth (None when no single diagnosis was named).
    relation: str | None = None


def decide(extraction: Extraction, accepted: Sequence[str],
           choices: Sequence[str] = ()) -> Decision:
    """Judge ``extraction`` against the case's accepted names and its answer choices."""
    if extraction.category != "single":
        return Decision(False, True, f"{extraction.category}: {extraction.reason}")
    named = next((t for t in accepted if extraction.statement and _same(extraction.statement, t)),
                 None)
    if named is not None:  # "Granulomatosis with polyangiitis" is one name, "with" and all
        return Decision(True, True, f"the statement names {named!r}", "same")
    verdicts = [_GRADER.grade_extraction(extraction, name) for name in accepted]
    best = max(verdicts, key=lambda v: (v.verdict, v.sure))
    if best.verdict and best.sure:
        return Decision(True, True, best.reason, best.relation)
    name = extraction.diagnosis
    distractor = (_distractor(name, accepted, choices)
                  or _distractor(extraction.statement, accepted, choices))
    if distractor is not None:
        return Decision(False, True, f"names another answer choice of the case: {distractor!r}",
                        "different")
    if _fragment(name, accepted):
        return Decision(False, True, f"{name!r} is a fragment of the true name, not a "
                        "condition of its own", "different")
    if best.verdict:
        return Decision(True, False, best.reason, best.relation)
    return Decision(False, best.sure and _known_apart(name, accepted), best.reason,
                    best.relation)


def _same(given: str, other: str, kinds: tuple[str, ...] = ("same", "synonym")) -> bool:
    return any(relate(given, form).kind in kinds for form in truth_forms(other))


def _distractor(name: str, accepted: Sequence[str], choices: Sequence[str]) -> str | None:
    """The answer choice (other than the truth) that ``name`` names, if any."""
    for choice in choices:
        if any(_same(choice, truth, ("same", "synonym", "broader")) for truth in accepted):
            continue  # the correct option itself, a name of it, or a broader name
        if _same(name, choice):
            return choice
    return None


# Endings of words that name a condition ("-itis", "-oma", "pneumonia", "deficiency"...).
_CONDITION_ENDINGS = (*CONDITION_SUFFIXES, "ia", "ias", "iasis", "ema", "ism", "sis")


def _fragment(name: str, accepted: Sequence[str]) -> bool:
    """Whether ``name`` is only modifiers of an accepted name ("plaque" of plaque psoriasis,
    "drug reaction" of drug reaction with eosinophilia..., "IgA" of IgA nephropathy).

    A broader name keeps a word that names a condition ("psoriasis", "lymphoma",
    "pneumonia"); modifiers alone say which or where, not what.
    """
    words = key(name)
    if not words or any(w in GENERIC or w.endswith(_CONDITION_ENDINGS) for w in tokens(name)):
        return False
    if default_terminology().describes(words):
        return False  # "migraine" of migraine headache, "measles": a condition of its own
    # The truth's head noun (its last word) names what it is: an answer keeping it is broader.
    return any(words < key(form) and tokens(form)[-1] not in tokens(name)
               for truth in accepted for form in truth_forms(truth) if tokens(form))


def _known_apart(name: str, accepted: Sequence[str]) -> bool:
    """Whether the terminology knows ``name`` as a condition (then "no shared word" is sure)."""
    return default_terminology().known(name) and all(
        default_terminology().known(form) for truth in accepted for form in truth_forms(truth)[:1])


def asks_for_a_condition(case: Case) -> bool:
    """Whether the case asks for a diagnosis: not when its answer or one of its choices is a
    test, treatment, drug or finding (some NEJM questions ask for those, and then a test or a
    treatment is an answer, not "no diagnosis")."""
    return all(kind(name) == "condition" for name in (case.diagnosis, *case.choices))
