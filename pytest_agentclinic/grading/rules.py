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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Literal

from ..core.case import Case
from .concepts import default_terminology
from .equivalence import Judgement, RelationKind, given_names, judge, relate, truth_forms
from .kinds import kind
from .parse import Extraction, Mention
from .terminology import CONDITION_SUFFIXES, GENERIC, key, tokens

#: ``decided_by`` of a verdict the rules were sure of.
OFFLINE = "offline"
#: ``decided_by`` of a verdict the rules were unsure of, with no model to ask.
OFFLINE_UNSURE = "offline (unsure)"

# The forms of a name (with and without its parentheticals), asked for again and again.
_forms = lru_cache(maxsize=65536)(truth_forms)

# Roles whose match makes the answer right. Concurrent conditions and causes count too: the
# paper's grader returns "main, minor" for such answers and accepts either (measured on its
# recorded verdicts), so a match there is right but not sure.
_PRIMARY_ROLES = frozenset({"main", "alias", "refinement"})
_SECONDARY_ROLES = frozenset({"concurrent", "listed", "cause", "beside"})


@dataclass(frozen=True)
class Decision:
    """The rules' verdict on an extraction; ``sure`` False leaves it to a model."""

    correct: bool
    sure: bool
    reason: str
    #: How the diagnosis relates to the truth (None when no single diagnosis was named).
    relation: RelationKind | None = None
    #: A broader name of a family of diseases (the strict policy rejects it).
    family: bool = False


#: How broader answers are graded: ``strict`` (the default) accepts a broader name only when
#: it names one disease with its variants; ``paper`` applies CRAFT-MD's rule literally (any
#: broader name counts), for replicating the paper.
Policy = Literal["strict", "paper"]
POLICIES: tuple[Policy, ...] = ("strict", "paper")


@dataclass
class _Answer:
    """What the table's rows ask about one single answer, each worked out once, when first
    asked (the terminology calls cost)."""

    extraction: Extraction
    accepted: Sequence[str]
    choices: Sequence[str]
    policy: Policy

    @property
    def name(self) -> str:
        return self.extraction.diagnosis

    @cached_property
    def body(self) -> str:
        """The statement without its parentheses, when it holds more than its main name."""
        return self.extraction.body if len(self.extraction.mentions) > 1 else ""

    @cached_property
    def whole(self) -> str:
        # Names joined by a comma, a bracket or a sentence of their own are never one name.
        joined = any(m.role in ("listed", "after", "beside") for m in self.extraction.mentions)
        return "" if joined else self.body

    @cached_property
    def named(self) -> str | None:
        """The accepted name the whole statement names ("Granulomatosis with polyangiitis")."""
        return next((t for t in self.accepted if self.whole and _same(self.whole, t)), None)

    @cached_property
    def one_name(self) -> bool:
        """Whether the statement is one name whole ("constitutional delay of growth and
        puberty"), its "with" and "and" included."""
        return self.named is not None or bool(self.body and default_terminology().known(
            self.body))

    @cached_property
    def chosen(self) -> list[str]:
        return _choices_named(self.extraction, self.choices)

    @cached_property
    def best(self) -> Decision:
        """How the main diagnosis (or a name restating it) relates to the truth."""
        strict = self.policy == "strict"
        return max((_match(self.extraction, name) for name in self.accepted),
                   key=lambda d: (d.correct and not (d.family and strict), d.correct, d.sure))


Row = Callable[[_Answer], "Decision | None"]


def _beside(a: _Answer) -> Decision | None:
    beside = _another_disease(a.extraction, (a.whole or a.body) if a.one_name else "")
    return None if beside is None else Decision(
        False, True, f"names another disease beside the main diagnosis: {beside!r} (several "
        "diagnoses)", "different")


def _whole_name(a: _Answer) -> Decision | None:
    if a.named is None or len(a.chosen) > 1:
        return None
    return Decision(True, True, f"the statement names {a.named!r}", "same")


def _two_choices(a: _Answer) -> Decision | None:
    # The case's choices are distinct diagnoses: naming two of them commits to neither.
    return None if len(a.chosen) < 2 else Decision(
        False, True, f"names {len(a.chosen)} of the case's answer choices: "
        f"{', '.join(map(repr, a.chosen))}", "different")


def _family(a: _Answer) -> Decision | None:
    best = a.best
    if not (best.correct and best.family and a.policy == "strict"):
        return None
    # "arthritis" for rheumatoid arthritis: the family, not the disease
    return replace(best, correct=False, sure=True, reason=f"{best.reason}: a family of "
                   "diseases above the truth, not one disease with its variants (strict policy)")


def _same_or_synonym(a: _Answer) -> Decision | None:
    best = a.best
    return best if best.correct and best.sure and best.relation != "broader" else None


def _other_choice(a: _Answer) -> Decision | None:
    # The case's author offered the other choices as other diagnoses: a hierarchy placing
    # one above the truth ("gestational hypertension" over preeclampsia) does not make it right.
    found = (_distractor(a.name, a.accepted, a.choices)
             or (_distractor(a.whole, a.accepted, a.choices) if a.whole else None))
    return None if found is None else Decision(
        False, True, f"names another answer choice of the case: {found!r}", "different")


def _broader(a: _Answer) -> Decision | None:
    return a.best if a.best.correct and a.best.sure else None


def _fragment_of_truth(a: _Answer) -> Decision | None:
    return Decision(False, True, f"{a.name!r} is a fragment of the true name, not a condition "
                    "of its own", "different") if _fragment(a.name, a.accepted) else None


def _likely_right(a: _Answer) -> Decision | None:
    return a.best if a.best.correct else None  # unsure: the moderator decides


def _symptom(a: _Answer) -> Decision | None:
    return Decision(False, True, f"{a.name!r} is a symptom or a sign, not a diagnosis",
                    "different") if default_terminology().symptom(a.name) else None


def _elsewhere(a: _Answer) -> Decision:
    """Wrong; sure when the terminology places the name (or the statement known whole) in
    another branch than the truth, else unsure."""
    best, name = a.best, a.name
    placed = a.body if a.one_name and a.body else name
    apart = (best.sure or placed != name) and (
        _known_apart(placed, a.accepted) or _head_apart(placed, a.accepted))
    if placed != name and apart:
        apart = all(not judge(placed, truth).correct for truth in a.accepted)
    return Decision(False, apart, best.reason, best.relation)


#: The table of docs/grading.md, in order: the first row with a verdict decides.
TABLE: tuple[Row, ...] = (_beside, _whole_name, _two_choices, _family, _same_or_synonym,
                          _other_choice, _broader, _fragment_of_truth, _likely_right, _symptom)


def decide(extraction: Extraction, accepted: Sequence[str],
           choices: Sequence[str] = (), policy: Policy = "strict") -> Decision:
    """Judge ``extraction`` against the case's accepted names and its answer choices: several
    diagnoses or none score 0; otherwise the rows of :data:`TABLE` in order (another disease
    beside the main one, the statement naming the truth whole, the case's choices, a family,
    the same name or a synonym, another choice, a broader name, a fragment, a symptom), and
    last :func:`_elsewhere`. The truth in a secondary role never scores (:func:`_match`)."""
    if extraction.category != "single":
        return Decision(False, True, f"{extraction.category}: {extraction.reason}")
    answer = _Answer(extraction, accepted, choices, policy)
    return next((d for row in TABLE for d in [row(answer)] if d is not None),
                None) or _elsewhere(answer)


def _match(extraction: Extraction, truth: str) -> Decision:
    """The equivalence of the extraction's main diagnosis (or a name restating it) with one
    accepted name. The truth named only in a secondary role is decided wrong."""
    matched = _best_match(extraction, truth)
    if matched is None:
        return Decision(False, True, "no diagnosis named matches the correct answer",
                        "different")
    mention, judgement = matched
    if mention.role not in _PRIMARY_ROLES:
        return Decision(False, True, f"the truth is named only in a secondary role "
                        f"({mention.role} {mention.text!r}); the main diagnosis is "
                        f"{extraction.diagnosis!r}", "different")
    reason = f"{mention.role} {mention.text!r}: {judgement.relation} ({judgement.reason})"
    return Decision(judgement.correct, judgement.sure, reason, judgement.relation,
                    judgement.family)


def _best_match(extraction: Extraction, truth: str) -> tuple[Mention, Judgement] | None:
    """The mention that matches the truth (a primary one first), else the closest primary."""
    judged = [(m, judge(m.text, truth)) for m in extraction.mentions
              if m.role in _PRIMARY_ROLES or m.role in _SECONDARY_ROLES]
    for roles in (_PRIMARY_ROLES, _SECONDARY_ROLES):
        for mention, judgement in judged:
            if mention.role in roles and judgement.correct and judgement.sure:
                return mention, judgement
    primary = [(m, j) for m, j in judged if m.role in _PRIMARY_ROLES]
    right = [(m, j) for m, j in primary if j.correct]
    unsure = [(m, j) for m, j in primary if not j.sure]
    return (right or unsure or primary)[0] if primary else None


#: Roles of a name named beside the main diagnosis rather than restating or causing it.
_BESIDE_ROLES = frozenset({"concurrent", "listed", "beside", "after"})
_KIN = frozenset({"same", "synonym", "broader", "narrower"})


def _another_disease(extraction: Extraction, whole: str) -> str | None:
    """A disease other than the main diagnosis named beside it (with, and, a comma, a dash,
    brackets, a line break, a sentence of its own), or None. Findings and symptoms beside a
    diagnosis ("X with nail pitting"), a cause ("X due to Y") and another name or a kind of
    the main diagnosis the terminology confirms do not count; nor do the words of a name
    the statement gives whole (``whole``: "Granulomatosis with polyangiitis")."""
    terms = default_terminology()
    names = [m.text for m in extraction.mentions
             if m.role in _BESIDE_ROLES and not (whole and m.text.lower() in whole.lower())
             and kind(m.text) == "condition" and not terms.symptom(m.text)
             # a qualifier or a finding ("chronic plaque type") is no disease of its own; a
             # name in brackets that the terminology does not know may be a lay name of the
             # main one ("frozen shoulder (adhesive capsulitis)", "(canker sores)")
             and (terms.known(m.text) if m.role == "beside"
                  else terms.disease_like(m.text) or _has_condition_word(m.text))]
    # The main diagnosis and the names that restate it, each linked to one before it
    # ("Parvovirus B19 infection (fifth disease or erythema infectiosum)").
    same = [extraction.diagnosis, *(m.text for m in extraction.mentions
                                    if m.role in ("alias", "refinement"))]
    bracketed = {m.text for m in extraction.mentions if m.role == "beside"}
    for _ in range(len(names)):
        linked = [n for n in names if n not in same
                  and any(_restates(n, s, loosely=n in bracketed) for s in same)]
        if not linked:
            break
        same.extend(linked)
    return next((n for n in names if n not in same), None)


def _restates(name: str, other: str, *, loosely: bool = False) -> bool:
    """Whether the terminology links two names: a synonym (of any scope), or a hierarchy two
    sources state; ``loosely`` (a name in brackets after the other, where doctors put
    another name of it: "primary hyperaldosteronism (Conn's syndrome)"), one source's
    hierarchy either way will do."""
    relations = (relate(name, other), relate(other, name)) if loosely else (
        relate(name, other),)
    return any(r.kind in ("same", "synonym") or (r.kind in _KIN and r.sure and r.curated)
               or (loosely and (r.kind in _KIN or not r.curated)) for r in relations)


def _has_condition_word(name: str) -> bool:
    return any(w.endswith(CONDITION_SUFFIXES) for w in tokens(name))


def _same(given: str, other: str, kinds: tuple[str, ...] = ("same", "synonym")) -> bool:
    return any(relate(given, form).kind in kinds for form in _forms(other))


def _contains(truth: str, choice: str) -> bool:
    """Whether the truth's words include all the choice's ("gastric peptic ulcer" of
    "perforated gastric peptic ulcer"): a broader name by its very words, not a distractor."""
    words = key(choice)
    return bool(words) and any(words < key(form) for form in _forms(truth))


def _distractor(name: str, accepted: Sequence[str], choices: Sequence[str]) -> str | None:
    """The answer choice (other than the truth) that ``name`` names, if any."""
    for choice in choices:
        if any(_same(choice, truth) or _contains(truth, choice) for truth in accepted):
            continue  # the correct option itself, a name of it, or its words without a qualifier
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
    # The truth's head noun (its last word) names what it is: an answer keeping it is broader.
    return any(words < key(form) and tokens(form)[-1] not in tokens(name)
               for truth in accepted for form in _forms(truth) if tokens(form))


def _choices_named(extraction: Extraction, choices: Sequence[str]) -> list[str]:
    """The answer choices that the extraction's mentions name, each name of a slash apart.

    Another name, a kind or a class of the main diagnosis ("morphea, also called localized
    scleroderma", "equestrian perniosis (chilblains)") only restates it, whatever choice it
    resembles.
    """
    if not choices:
        return []
    main = extraction.diagnosis
    names = {n for m in extraction.mentions
             if m.role not in _RESTATING or not _kin(m.text, main)
             for n in (given_names(m.text)[1:] or [m.text])}
    # A slash between whole names ("Microscopic polyangiitis/Granulomatosis with
    # polyangiitis") joins them before "with" splits either.
    names.update(given_names(extraction.body)[1:])
    named: dict[str, str] = {}  # choice -> the name naming it
    for name in sorted(names):
        matches = [c for c in choices if _same(name, c)]
        # A name that several choices share ("preeclampsia" of "severe preeclampsia") names
        # the one it spells, else none of them for sure.
        exact = [c for c in matches if any(key(name) == key(f) for f in _forms(c))]
        for choice in exact if len(matches) > 1 else matches:
            named.setdefault(choice, name)
    # Two choices named by two different names: one name is one diagnosis.
    return sorted(named) if len(set(named.values())) > 1 else []


#: Roles of a name that may restate the main diagnosis rather than add one.
_RESTATING = frozenset({"alias", "refinement", "beside"})


def _kin(name: str, main: str) -> bool:
    return relate(name, main).kind in ("same", "synonym", "broader", "narrower")


def _known_apart(name: str, accepted: Sequence[str]) -> bool:
    """Whether the terminology knows ``name`` and a name of the truth, and so places them in
    other branches (then "unrelated" is sure, and no moderator is asked)."""
    terms = default_terminology()
    return terms.known(name) and any(
        terms.known(form) for truth in accepted for form in _forms(truth)[:1])


def _head_apart(name: str, accepted: Sequence[str]) -> bool:
    """Whether a name the terminology does not know has a head noun it knows that it places
    in another branch than the truth ("papulopustular rosacea" for plaque psoriasis)."""
    words = tokens(name)
    terms = default_terminology()
    if not words or terms.known(name) or not terms.known(words[-1]):
        return False
    judged = [judge(words[-1], truth) for truth in accepted]
    return all(j.relation == "different" and j.sure for j in judged) and _known_apart(
        words[-1], accepted)


def asks_for_a_condition(case: Case) -> bool:
    """Whether the case asks for a diagnosis: not when its answer or one of its choices is a
    test, treatment, drug or finding (some NEJM questions ask for those, and then a test or a
    treatment is an answer, not "no diagnosis")."""
    return all(kind(name) == "condition" for name in (case.diagnosis, *case.choices))
