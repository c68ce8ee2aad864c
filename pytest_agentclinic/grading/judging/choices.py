"""The case's answer choices an answer names (stage 2, for :mod:`.relate`).

An answer naming another of the case's options than the truth gives a distractor; one naming
two options by two different names gives two diagnoses. A name counts for a choice when the
terminology reads it as the same or a synonym of one of the choice's forms.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..reading.parse import Extraction
from ..terminology import key
from ..terms.equivalence import compare
from ..terms.readings import given_names
from ..terms.truth_forms import forms_of as _forms

#: Roles of a name that may restate the main diagnosis rather than add one.
RESTATING = frozenset({"alias", "refinement", "beside", "suggested", "claimed"})


def same_name(given: str, other: str, kinds: tuple[str, ...] = ("same", "synonym")) -> bool:
    return any(compare(given, form).kind in kinds for form in _forms(other))


def contains_words(truth: str, choice: str) -> bool:
    """Whether the truth's words include all the choice's ("gastric peptic ulcer" of
    "perforated gastric peptic ulcer"): a broader name by its very words, not a distractor."""
    words = key(choice)
    return bool(words) and any(words < key(form) for form in _forms(truth))


def distractor(name: str, accepted: Sequence[str], choices: Sequence[str]) -> str | None:
    """The answer choice (other than the truth) that ``name`` names, if any."""
    for choice in choices:
        if any(same_name(choice, truth) or contains_words(truth, choice) for truth in accepted):
            continue  # the correct option itself, a name of it, or its words without a qualifier
        if same_name(name, choice):
            return choice
    return None


def choices_named(extraction: Extraction, choices: Sequence[str]) -> list[str]:
    """The answer choices that the extraction's mentions name, each name of a slash apart.

    Another name, a kind or a class of the main diagnosis ("morphea, also called localized
    scleroderma", "equestrian perniosis (chilblains)") only restates it, whatever choice it
    resembles.
    """
    if not choices:
        return []
    main = extraction.diagnosis
    names = {n for m in extraction.mentions
             if m.role not in RESTATING or not _kin(m.text, main)
             for n in (given_names(m.text)[1:] or [m.text])}
    # A slash between whole names ("Microscopic polyangiitis/Granulomatosis with
    # polyangiitis") joins them before "with" splits either.
    names.update(given_names(extraction.body)[1:])
    named: dict[str, str] = {}  # choice -> the name naming it
    for name in sorted(names):
        matches = [c for c in choices if same_name(name, c)]
        # A name that several choices share ("preeclampsia" of "severe preeclampsia") names
        # the one it spells, else none of them for sure.
        exact = [c for c in matches if any(key(name) == key(f) for f in _forms(c))]
        for choice in exact if len(matches) > 1 else matches:
            named.setdefault(choice, name)
    # Two choices named by two different names: one name is one diagnosis.
    return sorted(named) if len(set(named.values())) > 1 else []


def _kin(name: str, main: str) -> bool:
    return compare(name, main).kind in ("same", "synonym", "broader", "narrower")
