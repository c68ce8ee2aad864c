"""The adversarial answers of ``fixtures/adversarial.yaml``, filled in for the case library.

Shared by the adversarial tests and ``benchmarks/bench_adversarial.py`` (one reader of the
fixture).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.core.case import Case

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "adversarial.yaml"
LIBRARY = ROOT / "cases"
CONTROL = "control"


@dataclass(frozen=True)
class Suite:
    """The fixture: wrappers, the control, the strategies and the allowed hits."""

    wrappers: dict[str, str]
    #: The control, the answers that must score, then those that must not.
    strategies: dict[str, str]
    #: The strategies that must score (the control among them).
    must_score: frozenset[str]
    minimum_control: float
    maximum_share: float
    allowed_hits: dict[str, dict[str, str]]


@cache
def suite() -> Suite:
    """The fixture, read once."""
    raw: dict[str, Any] = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    scoring = {CONTROL: raw["control"], **(raw.get("must_score") or {})}
    return Suite(raw["wrappers"], {**scoring, **raw["strategies"]}, frozenset(scoring),
                 float(raw["minimum_control"]), float(raw["maximum_share"]),
                 raw.get("allowed_hits") or {})


@cache
def library() -> tuple[Case, ...]:
    """Every case of ``cases/``, in file order."""
    out: list[Case] = []
    for path in sorted(LIBRARY.glob("*.yaml")):
        out.extend(case for _line, case in load_case_file(path).cases)
    return tuple(out)


def _words(name: str) -> list[str]:
    return re.findall(r"\w+", name.lower())


@cache
def _word_counts() -> Counter[str]:
    counts: Counter[str] = Counter()
    for case in library():
        for name in {case.diagnosis, *case.choices}:
            counts.update(set(_words(name)))
    return counts


#: Words that are no modifier of a name: generic heads and linking words.
_NOT_MODIFIERS = frozenset({"disease", "syndrome", "disorder", "with", "of", "the", "and", "in",
                            "type", "due", "to"})
#: Endings of words that name a condition by themselves (see the fixture's comment).
_CONDITION_ENDINGS = ("itis", "osis", "oma", "ia", "pathy", "plasia", "trophy", "ism", "iasis",
                      "deficiency", "insufficiency", "ulcer")


def _identifying(name: str) -> list[str]:
    return [w for w in _words(name) if w not in _NOT_MODIFIERS]


def _modifiers(case: Case) -> list[str]:
    """The truth's modifiers: not its head noun (the last identifying word), not a word that
    names a condition by its ending, not a word that alone is an accepted name ("Takotsubo"
    of Takotsubo syndrome)."""
    names = [w for n in case.accepted_diagnoses for w in [_identifying(n)] if len(w) == 1]
    return [w for w in _identifying(case.diagnosis)[:-1]
            if not w.endswith(_CONDITION_ENDINGS) and [w] not in names]


def _others(case: Case) -> list[str]:
    """Two diagnoses of other cases of the library, after this one in file order: neither a
    choice of this case nor sharing a word with its truth, so that the rules' check of the
    case's choices cannot be what scores them 0."""
    cases = library()
    start = next(i for i, c in enumerate(cases) if c.id == case.id)
    taken = {*case.choices, case.diagnosis}
    words = set(_identifying(case.diagnosis))
    out: list[str] = []
    for other in (*cases[start + 1:], *cases[:start]):
        name = other.diagnosis
        if name not in taken and not words & set(_identifying(name)) and name not in out:
            out.append(name)
        if len(out) == 2:
            break
    return out


def slots(case: Case) -> dict[str, str]:
    """The placeholders' values for ``case`` ({word} absent when the truth is one word)."""
    wrong = [c for c in case.choices if c != case.diagnosis]
    values = {"truth": case.diagnosis, "wrong": wrong[0], "wrong2": wrong[1],
              "choices": ", ".join(case.choices),
              "library": ", ".join(c.diagnosis for c in library())}
    values.update(zip(("other", "other2"), _others(case), strict=False))
    initials = "".join(w[0] for w in _identifying(case.diagnosis)).upper()
    if len(initials) > 1:
        values["abbr"] = initials
    slip = _slipped(case.diagnosis)
    if slip is not None:
        values["slip"] = slip
    words = _modifiers(case)
    if words:
        values["word"] = max(words, key=lambda w: (_word_counts()[w], -words.index(w)))
    return values


def _slipped(name: str) -> str | None:
    """``name`` with one letter of its longest word (7 letters or more) changed, or None."""
    words = re.findall(r"[A-Za-z]+", name)
    longest = max(words, key=len, default="")
    if len(longest) < 7:
        return None
    i = len(longest) // 2
    swap = "e" if longest[i].lower() != "e" else "a"
    return name.replace(longest, longest[:i] + swap + longest[i + 1:], 1)


def answer(strategy: str, case: Case, protocol: str) -> str | None:
    """The doctor's final message for ``strategy`` on ``case``, or None when it does not apply."""
    template = suite().strategies[strategy]
    values = slots(case)
    if any(f"{{{slot}}}" in template and slot not in values for slot in ("word", "abbr", "slip")):
        return None
    return suite().wrappers[protocol].format(answer=template.format(**values))
