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
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import yaml
from adversarial_spellings import sibling_of, slip_forms, slipped, typography_forms

from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.judging.rules import conditions_asked
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.readings import expansions, names_a_disease

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


@cache
def suite() -> Suite:
    """The fixture, read once."""
    raw: dict[str, Any] = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    scoring = {CONTROL: raw["control"], **(raw.get("must_score") or {})}
    return Suite(raw["wrappers"], {**scoring, **raw["strategies"]}, frozenset(scoring),
                 float(raw["minimum_control"]), float(raw["maximum_share"]),
                 raw.get("allowed_hits") or {}, tuple(raw.get("states") or ()),
                 raw.get("known_gaps") or {})


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
                self.word_counts.update(set(_words(name)))
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


def _words(name: str) -> list[str]:
    return re.findall(r"\w+", name.lower())


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


def _disease_form(name: str) -> bool:
    return any(w.endswith(_CONDITION_ENDINGS + _DISEASE_HEADS) for w in _words(name))


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
              "truth_upper": case.diagnosis.upper(), "truth_lower": case.diagnosis.lower()}
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
    sibling = sibling_of(case.diagnosis)
    if sibling is not None:
        values["sibling"] = sibling
    states = suite().states
    if states:
        values["state"] = states[_digest(case.diagnosis)[1] % len(states)]
    return values


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
    words = _words(re.sub(r"\([^()]*\)", " ", case.diagnosis))  # not "(BPPV)"
    if len(words) < 2 or set(words) & _NOT_MODIFIERS or not words[-1].isalpha() \
            or len(words[-1]) < 4 or set(words[:-1]) <= _PLAIN or words[-2] == "s":
        return None
    if any(_identifying(n) == [words[-1]] for n in case.accepted_diagnoses):
        return None
    return words[-1]


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
_OPTIONAL = ("word", "abbr", "slip", "head", "abbr3", "sibling", "state", "abbr3s",
             "slip_drop", "slip_swap", "slip_add", "truth_curly", "truth_nbsp", "truth_zwsp",
             "truth_endash", "truth_hyphen_break")


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


# --- a larger set of truths, read at run time ----------------------------------------------

#: The upstream data beside the checkout (never copied into it).
SHARED = ROOT.parent / "shared" / "datasets"
#: The truth sets :func:`held_out_truths` reads: name -> files under :data:`SHARED`.
TRUTH_SOURCES: dict[str, tuple[str, ...]] = {
    # CRAFT-MD's 2,004 vignettes (MedQA and dermatology), each with its four choices
    "craftmd": ("craftmd/usmle_and_derm_dataset.csv",),
    # AgentClinic's MedQA OSCE cases (no choices) and NEJM image cases (with choices)
    "agentclinic": ("agentclinic/agentclinic_medqa.jsonl",
                    "agentclinic/agentclinic_nejm.jsonl",
                    "agentclinic/agentclinic_nejm_extended.jsonl"),
    # MediQ's MedQA questions and dermatology cases (read through its extension), less the
    # truths of the two sets above: the third set, that no rule was studied on
    "mediq": ("mediq/all_dev_good.jsonl", "mediq/all_craft_md.jsonl"),
}
#: The sets whose truths a source leaves out ("repeated elsewhere"), so that it is new.
_NEW_AGAINST = {"mediq": ("craftmd", "agentclinic")}


@dataclass(frozen=True)
class Truths:
    """A pool of distinct truths read from a dataset, split in two halves by a stable hash
    of each truth: study failures on half A, report both (a fix that helps A only is a fit)."""

    source: str
    pool: Pool
    #: Cases read, and those left out: a truth seen before, a truth that is no condition
    #: (a question that asks for a next step, a test, a mechanism; a truth that names a drug
    #: or a test), a truth garbled in the data.
    read: int
    duplicates: int
    not_conditions: int
    garbled: int
    #: Truths left out as already in another set (:data:`_NEW_AGAINST`).
    elsewhere: int = 0

    def half(self, case: Case) -> str:
        """``A`` or ``B``: the half ``case``'s truth falls in."""
        return half_of(case.diagnosis)


def truth_key(name: str) -> str:
    """The form two truths are compared in to deduplicate them (case, spaces, punctuation)."""
    return " ".join(_words(name))


def _digest(name: str) -> bytes:
    return hashlib.sha256(truth_key(name).encode()).digest()


def half_of(name: str) -> str:
    """``A`` or ``B`` by a stable hash of the truth: the same on every machine and run."""
    return "A" if _digest(name)[0] % 2 == 0 else "B"


def held_out_truths(source: str, shared: Path = SHARED) -> Truths | str:
    """The distinct condition truths of ``source`` (:data:`TRUTH_SOURCES`) as a pool in a
    stable pseudo-random order (a hash of each truth), each case with its choices where the
    data has them; or, when a file is absent, the one-line reason why not."""
    others = _NEW_AGAINST.get(source, ())
    paths = [shared / name for name in TRUTH_SOURCES[source]]
    missing = [str(p) for p in paths if not p.is_file()] + [
        str(shared / n) for o in others for n in TRUTH_SOURCES[o] if not (shared / n).is_file()]
    if missing:
        return f"{source} truths: {', '.join(missing)} not found (../shared is absent)"
    if source == "mediq" and find_spec("agentclinic_mediq") is None:
        return "mediq truths: the MediQ extension is not installed (pip install extensions/mediq)"
    before = {_loose(c.diagnosis) for o in others for n in TRUTH_SOURCES[o]
              for _line, c in load_case_file(shared / n).cases}
    condition = _mediq_condition if source == "mediq" else _diagnosis_condition
    seen: set[str] = set()
    kept: list[Case] = []
    read = duplicates = not_conditions = garbled = elsewhere = 0
    for path in paths:
        for _line, case in load_case_file(path).cases:
            read += 1
            case = _cleaned(case)
            truth = truth_key(case.diagnosis)
            if truth in seen:
                duplicates += 1
            elif re.search(r"[\n\"]", case.diagnosis) or not truth:
                garbled += 1
            elif not condition(case):
                not_conditions += 1
            elif _loose(case.diagnosis) in before:
                seen.add(truth)
                elsewhere += 1
            else:
                seen.add(truth)
                kept.append(case)
    kept.sort(key=lambda c: _digest(c.diagnosis))
    return Truths(source, Pool(tuple(kept)), read, duplicates, not_conditions, garbled,
                  elsewhere)


def _loose(name: str) -> str:
    """:func:`truth_key` without a possessive: a truth looked up among another set's."""
    return " ".join(_words(re.sub(r"['\u2019](?:s\b)?", "", name)))


#: A question that asks for the diagnosis ("Which of the following is the most likely
#: diagnosis?"), not for a next step, a test that confirms it or a mechanism.
_DIAGNOSIS_ASKED = re.compile(r"\b(?:likely|probable)\s+(?:underlying\s+|clinical\s+)?"
                              r"diagnos[ie]s\b", re.I)


def _asks_diagnosis(case: Case) -> bool:
    """Whether ``case`` asks for a diagnosis: its question says so, or it has none (the
    dermatology vignettes and AgentClinic's OSCE cases ask to diagnose)."""
    return not case.question or _DIAGNOSIS_ASKED.search(case.question) is not None


def _diagnosis_condition(case: Case) -> bool:
    """CRAFT-MD's and AgentClinic's filter: a diagnosis asked for, a condition its answer."""
    return _asks_diagnosis(case) and conditions_asked(case.diagnosis, case.choices)


#: A MediQ question that asks for something the terminology may file under a disease but
#: that is none: an organism ("Treponema pallidum", filed as syphilis), an organ or a site
#: ("Spleen", as spleen disease), a gene, a mechanism, a mode of inheritance, a drug, a test.
_ASKS_NO_DIAGNOSIS = re.compile(
    r"organism|pathogen|\bagent|microb|bacteri|\bvir(?:us|al)|\borgans?\b|\bnerves?\b|arter"
    r"|vessel|structure|locat|\bsites?\b|\bparts?\b|segment|\bgenes?\b|chromosom|enzyme|karyotype"
    r"|mechanism|pathogenesis|pathophysiolog|\bcells?\b|inheritance|drug|medication|hormone"
    r"|receptor|\blab|\btests?\b", re.I)


def _mediq_condition(case: Case) -> bool:
    """MediQ's filter (its diagnosis questions are nearly all CRAFT-MD's too): a diagnosis
    asked for, or a condition under another name ("the most likely cause of this patient's
    symptoms") the terminology reads as a disease (a known disease concept, no symptom), if
    nothing :data:`_ASKS_NO_DIAGNOSIS` names is asked; answer and choices conditions."""
    if not conditions_asked(case.diagnosis, case.choices):
        return False
    if _asks_diagnosis(case):
        return True
    terms = default_terminology()
    return (terms.known(case.diagnosis) and names_a_disease(case.diagnosis, terms)
            and not terms.symptom(case.diagnosis)
            and not _ASKS_NO_DIAGNOSIS.search(case.question))


def _cleaned(case: Case) -> Case:
    """``case`` without the stray quote a few rows of the CRAFT-MD table end their answer
    with ("Osteosarcoma\\n\""), in the truth and in the choice that is the truth."""
    truth = case.diagnosis.rstrip('"').strip()
    if truth == case.diagnosis:
        return case
    choices = [truth if c == case.diagnosis else c for c in case.choices]
    return case.model_copy(update={"diagnosis": truth, "choices": choices})
