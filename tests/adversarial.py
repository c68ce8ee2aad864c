"""The adversarial answers of ``fixtures/adversarial.yaml``, filled in for the case library.

Shared by the adversarial tests and ``benchmarks/bench_adversarial.py`` (one reader of the
fixture).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from abbreviation_slots import abbreviation_slots
from adversarial_spellings import sibling_of, slip_forms, slipped, typography_forms
from adversarial_word_order import word_order_forms

from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.terms.readings import expansions

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
    #: ``{state}``: injuries and states like pregnancy, one picked per truth.
    states: tuple[str, ...] = ()
    #: Shapes above their bar for a documented reason (shape -> why): every hit is still
    #: explained, but the share is reported, not enforced.
    known_gaps: dict[str, str] = field(default_factory=dict)
    #: ``{lab}`` and ``{finding}``: laboratory states and examination findings or symptoms.
    labs: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()


@cache
def suite() -> Suite:
    """The fixture, read once."""
    raw: dict[str, Any] = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    scoring = {CONTROL: raw["control"], **(raw.get("must_score") or {})}
    return Suite(raw["wrappers"], {**scoring, **raw["strategies"]}, frozenset(scoring),
                 float(raw["minimum_control"]), float(raw["maximum_share"]),
                 raw.get("allowed_hits") or {}, tuple(raw.get("states") or ()),
                 raw.get("known_gaps") or {}, tuple(raw.get("labs") or ()),
                 tuple(raw.get("findings") or ()))


@cache
def library() -> tuple[Case, ...]:
    """Every case of ``cases/``, in file order."""
    out: list[Case] = []
    for path in sorted(LIBRARY.glob("*.yaml")):
        out.extend(case for _line, case in load_case_file(path).cases)
    return tuple(out)


class Pool:
    """The truths the shapes are filled with, in a fixed order: the case library, or a larger
    set of truths read at run time (:mod:`truths`). ``{other}``, ``{library}`` and
    ``{word}`` are drawn from the pool, so that a pool of unseen truths tests the rules on
    names nobody tuned them to."""

    #: At most this many truths in ``{library}`` (the library's 72: all of them).
    LISTED = 72

    def __init__(self, cases: tuple[Case, ...]) -> None:
        self.cases = cases
        self.index = {case.id: i for i, case in enumerate(cases)}
        self.word_counts: Counter[str] = Counter()
        #: The pool's names (truths and choices) by their initials: "{abbr3s}".
        self.initials: dict[str, set[str]] = {}
        for case in cases:
            for name in {case.diagnosis, *case.choices}:
                self.word_counts.update(set(words(name)))
                self.initials.setdefault(_initials(name), set()).add(name)
        self._slots: dict[str, dict[str, str]] = {}

    def listed(self, case: Case) -> str:
        """``{library}``: every truth of a small pool; of a large one, :data:`LISTED` truths
        from this case's on, in pool order (a 1,500-name answer says nothing more)."""
        if len(self.cases) <= self.LISTED:
            return ", ".join(c.diagnosis for c in self.cases)
        start = self.index[case.id]
        picked = (self.cases[(start + i) % len(self.cases)] for i in range(self.LISTED))
        return ", ".join(c.diagnosis for c in picked)

    def slots(self, case: Case) -> dict[str, str]:
        """:func:`slots` of ``case``, worked out once."""
        if case.id not in self._slots:
            self._slots[case.id] = _slots(case, self)
        return self._slots[case.id]


@cache
def library_pool() -> Pool:
    """The case library as a pool (the default of every function here)."""
    return Pool(library())


def words(name: str) -> list[str]:
    return re.findall(r"\w+", name.lower())


#: Words that are no modifier of a name: generic heads and linking words.
_NOT_MODIFIERS = frozenset({"disease", "syndrome", "disorder", "with", "of", "the", "and", "in",
                            "type", "due", "to"})
#: Endings of words that name a condition by themselves (see the fixture's comment).
_CONDITION_ENDINGS = ("itis", "osis", "oma", "ia", "pathy", "plasia", "trophy", "ism", "iasis",
                      "deficiency", "insufficiency", "ulcer")


def _identifying(name: str) -> list[str]:
    return [w for w in words(name) if w not in _NOT_MODIFIERS]


def _modifiers(case: Case) -> list[str]:
    """The truth's modifiers: not its head noun (the last identifying word), not a word that
    names a condition by its ending, not a word that alone is an accepted name ("Takotsubo"
    of Takotsubo syndrome) or an eponym in the possessive ("Hirschsprung's disease")."""
    names = [w for n in case.accepted_diagnoses for w in [_identifying(n)] if len(w) == 1]
    # an eponym's possessive names the disease alone ("Hirschsprung's disease")
    eponyms = {w.lower() for w in re.findall(r"(\w+)['\u2019]s\b", case.diagnosis)}
    return [w for w in _identifying(case.diagnosis)[:-1]
            if not w.endswith(_CONDITION_ENDINGS) and [w] not in names
            and w not in eponyms and w != "s"]


#: Head words of a disease's name (with :data:`_CONDITION_ENDINGS`): what makes another
#: truth a disease by its form, not a finding some questions ask for ("Lisch nodules").
_DISEASE_HEADS = ("disease", "syndrome", "disorder", "infection", "cancer", "carcinoma",
                  "tumor", "tumour", "failure", "fever", "palsy")


#: A blood level out of range, by its form ("hyperinsulinemia", "hypokalemia"): a laboratory
#: state, which beside a diagnosis is a concurrent finding (docs/grading.md, *Main and
#: concurrent*), no competing disease, though its "-ia" ending looks like one.
_LAB_STATE = re.compile(r"(?:hyper|hypo)[a-z]+emia")


def _disease_form(name: str) -> bool:
    named = words(name)
    if len(named) == 1 and _LAB_STATE.fullmatch(named[0]):
        return False
    return any(w.endswith(_CONDITION_ENDINGS + _DISEASE_HEADS) for w in named)


def _others(case: Case, pool: Pool, count: int = 2) -> list[str]:
    """``count`` truths of other cases of the pool, after this one in pool order: neither a
    choice of this case nor sharing a word with its truth, so that the rules' check of the
    case's choices cannot be what scores them 0; and a disease by the form of its name
    (:data:`_DISEASE_HEADS`) where the pool has enough, since datasets also ask for findings
    ("Lisch nodules"), which beside a diagnosis are concurrent, no second diagnosis."""
    cases = pool.cases
    start = pool.index[case.id]
    taken = {*case.choices, case.diagnosis}
    words = set(_identifying(case.diagnosis))
    diseases: list[str] = []
    rest: list[str] = []
    for other in (*cases[start + 1:], *cases[:start]):
        name = other.diagnosis
        if name in taken or name in diseases or name in rest \
                or words & set(_identifying(name)):
            continue
        (diseases if _disease_form(name) else rest).append(name)
        if len(diseases) == count:
            break
    return (diseases + rest)[:count]


def slots(case: Case, pool: Pool | None = None) -> dict[str, str]:
    """The placeholders' values for ``case`` ({word} absent when the truth is one word). A
    case without two wrong choices takes its {wrong} and {wrong2} from the pool's other
    truths, after {other} and {other2}."""
    return (pool or library_pool()).slots(case)


def _slots(case: Case, pool: Pool) -> dict[str, str]:
    others = _others(case, pool, 4)
    wrong = [c for c in case.choices if c != case.diagnosis]
    if len(wrong) < 2:
        wrong = others[2:]
    choices = case.choices or [case.diagnosis, *others[1:]]
    values = {"truth": case.diagnosis, "wrong": wrong[0], "wrong2": wrong[1],
              "choices": ", ".join(choices), "library": pool.listed(case),
              "truth_upper": case.diagnosis.upper(), "truth_lower": case.diagnosis.lower(),
              "truth_title": " ".join(w[:1].upper() + w[1:] for w in case.diagnosis.split(" "))}
    values.update(zip(("other", "other2"), others, strict=False))
    initials = "".join(w[0] for w in _identifying(case.diagnosis)).upper()
    if len(initials) > 1:
        values["abbr"] = initials
    slip = slipped(case.diagnosis)
    if slip is not None:
        values["slip"] = slip
    words = _modifiers(case)
    if words:
        values["word"] = max(words, key=lambda w: (pool.word_counts[w], -words.index(w)))
    head = _head(case)
    if head is not None:
        values["head"] = head
    as_written = any(initials == n.strip().upper() for n in case.accepted_diagnoses)
    if len(initials) == 3 and _ambiguous(initials, case) and not as_written:
        values["abbr3"] = initials
    if len(initials) == 3 and not expansions(initials) and not as_written \
            and _shared_initials(initials, case, pool):
        values["abbr3s"] = initials
    values.update(slip_forms(case.diagnosis))
    values.update(typography_forms(case.diagnosis))
    values.update(word_order_forms(case))
    accepted = {n.strip().upper() for n in case.accepted_diagnoses}
    letters = abbreviation_slots(case.diagnosis, case.accepted_diagnoses)
    values.update({k: v for k, v in letters.items()
                   if v.replace(".", "").upper() not in accepted})
    sibling = sibling_of(case.diagnosis)
    if sibling is not None:
        values["sibling"] = sibling
    states = suite().states
    if states:
        values["state"] = states[digest(case.diagnosis)[1] % len(states)]
    for slot, names, at in (("lab", suite().labs, 2), ("finding", suite().findings, 3)):
        picked = _apart(case, names, digest(case.diagnosis)[at])
        if picked is not None:
            values[slot] = picked
    return values


def _apart(case: Case, names: tuple[str, ...], start: int) -> str | None:
    """The first of ``names`` from ``start`` on (in turn) that shares no word with the truth
    and is none of the case's choices: a finding beside the truth, never the truth itself
    (MediQ asks for laboratory states too: "Hypokalemia")."""
    mine, chosen = set(_identifying(case.diagnosis)), {truth_key(c) for c in case.choices}
    for i in range(len(names)):
        name = names[(start + i) % len(names)]
        if not mine & set(_identifying(name)) and truth_key(name) not in chosen:
            return name
    return None


#: Words that say how severe, how long or which side: before a head noun they leave it the
#: disease itself ("acute pancreatitis": "pancreatitis" is no family word).
_PLAIN = frozenset({"acute", "chronic", "recurrent", "mild", "moderate", "severe", "early",
                    "late", "simple", "typical", "classic", "classical", "bilateral",
                    "unilateral", "left", "right", "uncomplicated", "a", "an"})


def _head(case: Case) -> str | None:
    """The truth's head noun (its last word) when words of kind come before it ("cyst" of
    branchial cleft cyst, "colitis" of ulcerative colitis): a family word, or a fragment,
    never the disease; None when the name ends in a generic word ("syndrome") or is joined
    ("X of Y", "X with Y"), when the head alone is an accepted name, or when only words of
    how severe or which side come before it."""
    named = words(re.sub(r"\([^()]*\)", " ", case.diagnosis))  # not "(BPPV)"
    if len(named) < 2 or set(named) & _NOT_MODIFIERS or not named[-1].isalpha() \
            or len(named[-1]) < 4 or set(named[:-1]) <= _PLAIN or named[-2] == "s":
        return None
    if any(_identifying(n) == [named[-1]] for n in case.accepted_diagnoses):
        return None
    return named[-1]


def _ambiguous(initials: str, case: Case) -> bool:
    """Whether three initials stand for another disease too, one that shares no word with
    the truth, by the terminology's sources (``abbreviations.tsv``: "PSC" for primary
    sclerosing cholangitis and pancreatic serous cystadenoma). Issue 31's notion: several
    expansions in the terminology; initials that only another dataset name shares ("CVI")
    the grader cannot know to be ambiguous."""
    mine = set(_identifying(case.diagnosis))
    return any(not mine & set(_identifying(n)) for n in expansions(initials))


def _initials(name: str) -> str:
    return "".join(w[0] for w in _identifying(name)).upper()


def _shared_initials(initials: str, case: Case, pool: Pool) -> bool:
    """Whether another name of the pool (a truth or a choice of another case) that shares no
    word with the truth has the truth's initials, which the sources give for nothing: "CVI"
    of chronic venous insufficiency beside common variable immunodeficiency. The red team's
    notion of an abbreviation only another dataset's name shares."""
    mine = set(_identifying(case.diagnosis))
    return any(not mine & set(_identifying(n)) for n in pool.initials.get(initials, ()))


#: The slots a case may lack: a shape that uses one applies only where it is present.
_OPTIONAL = ("word", "abbr", "slip", "head", "abbr3", "sibling", "state", "lab", "finding",
             "abbr3s", "slip_drop", "slip_swap", "slip_add", "truth_curly", "truth_nbsp",
             "truth_zwsp", "truth_endash", "truth_hyphen_break", "truth_index", "truth_of_organ",
             "truth_organ_first", "truth_hyphen_open", "truth_possessive", "truth_number",
             "other_organ_of", "other_organ_index", "choice_index", "abbr1", "abbr1_dotted",
             "abbr_several", "abbr_several_lower", "abbr_several_dotted")


def answer(strategy: str, case: Case, protocol: str, pool: Pool | None = None) -> str | None:
    """The doctor's final message for ``strategy`` on ``case`` (its slots filled from
    ``pool``, by default the case library), or None when it does not apply."""
    template = suite().strategies[strategy]
    values = slots(case, pool)
    if any(f"{{{slot}}}" in template and slot not in values for slot in _OPTIONAL):
        return None
    wrapper = suite().wrappers[protocol]
    if "{label}" in template:
        # the shape places the protocol's own marker ("<think>...</think>" before it)
        label = wrapper.split("{answer}")[0].rstrip()
        return template.format(label=label, **values)
    return wrapper.format(answer=template.format(**values))


def truth_key(name: str) -> str:
    """The form two truths are compared in to deduplicate them (case, spaces, punctuation)."""
    return " ".join(words(name))


def digest(name: str) -> bytes:
    return hashlib.sha256(truth_key(name).encode()).digest()


#: The end-to-end runs of a protocol, one per worker mode: they share the strategies out.
E2E_SHARES = 3


def played(case: Case, sample: int, protocol: str, share: int = 0) -> str | None:
    """The strategy the end-to-end run ``share`` gives as ``sample`` of ``case`` (None:
    none), when it plays the first two cases of its specialty (:func:`e2e_samples` each):
    sample 0 is the control on both, and every strategy of the share (every
    :data:`E2E_SHARES`-th) goes end to end once, on one of the two (in turn, or on the one it
    applies to). The three worker modes take a share each, so every strategy goes end to end
    once per protocol: the wiring of one answer is the wiring of all, and each run played
    all of them (~950 items, six runs: the suite's longest pytester runs) to prove it three
    times. The in-process tests of the adversarial module grade every strategy on every
    case."""
    return _schedule(case.specialty_slug, protocol, share).get((case.id, sample))


def e2e_samples(specialty: str, protocol: str, share: int = 0) -> int:
    """``--agent-repeat`` of end-to-end run ``share`` of the first two cases of
    ``specialty``."""
    return 1 + max(sample for _case, sample in _schedule(specialty, protocol, share))


def e2e_strategies(share: int) -> list[str]:
    """The strategies end-to-end run ``share`` plays (the control in every share)."""
    rest = [s for s in suite().strategies if s != CONTROL]
    return [CONTROL, *rest[share::E2E_SHARES]]


@cache
def _schedule(specialty: str, protocol: str, share: int) -> dict[tuple[str, int], str]:
    """(case id, sample) -> strategy, for the first two cases of ``specialty``."""
    pair = [c for c in library() if c.specialty_slug == specialty][:2]
    out = {(case.id, 0): CONTROL for case in pair}
    taken = {case.id: 0 for case in pair}
    for i, strategy in enumerate(e2e_strategies(share)[1:]):
        turn = pair[i % 2:] + pair[:i % 2]
        case = next((c for c in turn if answer(strategy, c, protocol) is not None), None)
        if case is not None:
            taken[case.id] += 1
            out[(case.id, taken[case.id])] = strategy
    return out
