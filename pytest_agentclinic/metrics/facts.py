"""A case's facts as atomic items, and the word-coverage test that says one was conveyed.

Matching method (``elicit-1``), stated once here and pinned by ``tests/test_metrics_gathering.py``:

* A text becomes *concept tokens*: words folded and plural-stemmed as everywhere in the
  project (:func:`grading.normalize.words`), ``-ing``/``-ed``/``-er`` endings and a final
  ``e`` cut, stopwords and
  case-writing filler ("patient", "presents", "reports", ...) dropped, and each word of a
  small lay-language table mapped to one concept (``sores``, ``spots``, ``lesions`` -> one
  token; ``itchy``, ``pruritus`` -> another; "high blood pressure" -> ``hypertension``),
  because patients say in their words what vignettes say in clinical ones.
* The *coverage* of a fact by a text is the share of the fact's tokens present in the text.
* A fact is conveyed by one utterance when that utterance covers at least
  :data:`ONE_UTTERANCE` (half) of it, or by the dialogue so far when all the patient's and
  measurement agent's utterances up to that point together cover :data:`SPREAD` (also half)
  of it, a fact told in pieces. Facts of one or two tokens need all of them.

Known limits: polarity is not checked ("no fever" conveys "denies fever", and so would
"I have a fever"); synonyms outside the table are missed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..core.case import Case
from ..core.text import STOPWORDS, TEXT_ENTRIES, bounded_cache, sentences, words

METHOD = "elicit-1"
ONE_UTTERANCE = 0.5
SPREAD = 0.5

FactKind = Literal["history", "exam", "test"]

#: Concept groups: every word of a group stands for the group's first word.
_CONCEPTS: tuple[tuple[str, ...], ...] = (
    ("lesion", "sore", "spot", "bump", "papule", "nodule", "lump", "growth", "mark", "patch",
     "plaque", "macule", "blemish", "pimple"),
    ("rash", "eruption", "breakout", "hive", "urticaria", "wheal"),
    ("itch", "itchy", "itchiness", "pruritus", "pruritic", "scratch"),
    ("red", "redness", "erythema", "erythematous", "pink", "inflamed"),
    ("swell", "swelling", "swollen", "edema", "oedema", "puffy"),
    ("blister", "vesicle", "bulla", "vesicular", "bullous", "fluid-filled"),
    ("pus", "pustule", "pustular", "purulent"),
    ("scale", "scaly", "flaky", "flake", "peel", "scaling", "scab", "crust", "crusted"),
    ("pain", "painful", "hurt", "ache", "aching", "tender", "tenderness"),
    ("fever", "febrile", "temperature", "feverish"),
    ("genital", "penis", "penile", "scrotum", "scrotal", "vulva", "vulvar", "vagina", "private"),
    ("groin", "inguinal"),
    ("urinate", "urination", "urine", "dysuria", "pee", "peeing"),
    ("tired", "fatigue", "fatigued", "exhausted", "malaise", "weary"),
    ("breath", "dyspnea", "breathless", "breathing"),
    ("vomit", "emesis", "throw"),
    ("hair", "alopecia", "bald", "balding"),
    ("nail", "fingernail", "toenail"),
    ("dark", "hyperpigmented", "hyperpigmentation", "brown", "black"),
    ("light", "hypopigmented", "hypopigmentation", "pale", "white"),
    ("child", "boy", "girl", "son", "daughter", "infant", "baby", "kid"),
    ("woman", "female", "lady"),
    ("man", "male", "gentleman"),
    ("medicine", "medication", "drug", "pill", "tablet", "taking", "prescribed"),
    ("mother", "mom", "father", "dad", "parent", "sister", "brother", "sibling", "family"),
)
_CONCEPT = {w: group[0] for group in _CONCEPTS for w in group}
#: Words of case writing and conversation that carry no fact of their own.
_FILLER = frozenset({
    "patient", "present", "presents", "presented", "presenting", "complain", "complaint",
    "report", "reported", "reports", "describe", "described", "note", "noted", "also", "has",
    "have", "had", "having", "he", "she", "i", "me", "you", "we", "they", "him", "them", "been",
    "which", "who", "what", "when", "there", "these", "those", "any", "some", "very", "about",
    "clinic", "office", "visit", "physician", "doctor", "history", "since", "now", "currently",
    "but", "not", "no", "yes", "do", "does", "did", "would", "will", "can", "could", "being",
    "otherwise", "one", "following", "deny", "denies", "denied", "endorse", "endorses",
    "shown", "year", "old", "ago", "time", "states", "state", "evaluation", "evaluate",
    "evaluated", "check", "checked", "concern", "concerned", "think", "thinks", "thought",
    "may", "might", "recently", "recent", "noticed", "notice", "feel", "feels", "felt",
    "come", "came", "because", "into", "over", "after", "before", "while", "so", "just", "like",
    "well", "get", "got", "see", "seen", "am", "im", "ive", "haven", "hasn", "t", "s", "ve",
})
_CLINICAL = re.compile(
    r"examination|\bexam\b|laboratory|\blabs?\b|reveals?|shows?\b|showed|biopsy|mm ?hg|/mm3|"
    r"temperature is|pulse is|blood pressure|respirations|\bx-ray|\bct\b|\bmri\b|serum|smear|"
    r"culture|ultrasound|\becg\b|\bekg\b|\bfound\b|identified|observed|vital signs|"
    r"auscultation|palpation|palpable|dermoscopy|histolog|stain|on inspection|are seen|is seen",
    re.I)


def _cut(word: str) -> str:
    """A crude stem: ``-ing``/``-ed``/``-er`` and a final ``e`` cut, so "shaving" and "shave",
    "annoyed" and "annoying", "garden" and "gardener" meet."""
    for ending in ("ing", "ed", "er"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            word = word[: -len(ending)]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


#: Lay phrases replaced by the clinical word before tokenising (one concept, one token).
_PHRASES = tuple((re.compile(rf"\b{lay}\b", re.I), clinical) for lay, clinical in (
    ("high blood pressure", "hypertension"), ("high cholesterol", "hyperlipidemia"),
    ("heart attack", "myocardial infarction"), ("sugar diabetes", "diabetes"),
    ("short(?:ness)? of breath", "dyspnea"), ("throw(?:ing)? up", "vomit"),
    ("under ?arms?", "axilla"), ("arm ?pits?", "axilla"), ("belly", "abdomen"),
    ("stomach", "abdomen"), ("tummy", "abdomen"), ("cigarettes?", "smoke"),
    ("smok(?:es|ed|ing|er)", "smoke"), ("pounds", "weight"), ("lbs?", "weight")))


def _tokens(text: str) -> frozenset[str]:
    """The concept tokens of ``text`` (see the module docstring)."""
    for pattern, clinical in _PHRASES:
        text = pattern.sub(clinical, text)
    out = set()
    for word in words(text.replace("-", " ")):
        if word in STOPWORDS or word in _FILLER:
            continue
        concept = _CONCEPT.get(word) or _CONCEPT.get(_cut(word)) or _cut(word)
        out.add(concept)
    return frozenset(out)


#: The concept tokens of ``text`` (see the module docstring). Its texts are one encounter's
#: (its facts, its utterances): replayed at 10,000 encounters (``bench_10k.py --probe
#: caches``, ``MEM_PROBE_KEYS=1``) it hits 81.8% at 64 entries as at 2,048, offline 16-turn
#: encounters 90.1% at both (see ``core.text.TEXT_ENTRIES``).
tokens = bounded_cache(_tokens, maxsize=TEXT_ENTRIES)


def coverage(fact: frozenset[str], said: frozenset[str]) -> float:
    """The share of ``fact``'s tokens found in ``said`` (0 for an empty fact)."""
    return len(fact & said) / len(fact) if fact else 0.0


def conveys(fact: frozenset[str], said: frozenset[str], threshold: float) -> bool:
    """Whether ``said`` covers ``fact`` at ``threshold`` (all of it for 1-2 token facts)."""
    if len(fact) <= 2:
        return bool(fact) and fact <= said
    return coverage(fact, said) >= threshold


class Fact(BaseModel):
    """One atomic item of a case: a history answer, a symptom, an exam finding, a result."""

    model_config = ConfigDict(frozen=True)

    text: str
    kind: FactKind
    key: bool = False
    source: str = ""

    @property
    def tokens(self) -> frozenset[str]:
        """The fact's concept tokens."""
        return tokens(self.text)


def vignette_facts(vignette: str, key_facts: Iterable[str] = ()) -> list[Fact]:
    """A vignette's sentences as facts; the closing question ("Which of the following...?")
    is not a fact. Sentences with examination or test language are ``exam`` facts."""
    facts = [Fact(text=s, kind="exam" if _CLINICAL.search(s) else "history", source="vignette")
             for s in sentences(vignette) if not s.rstrip().endswith("?")]
    return mark_key(facts, key_facts)


def _leaves(tree: Any, path: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], str]]:
    if isinstance(tree, Mapping):
        for name, value in tree.items():
            yield from _leaves(value, (*path, str(name)))
    elif isinstance(tree, list):
        yield path, "; ".join(str(v) for v in tree)
    elif str(tree).strip():
        yield path, str(tree)


def _finding_facts(tree: Any, kind: FactKind, source: str) -> list[Fact]:
    out = []
    for path, value in _leaves(tree, ()):
        name = path[-1].replace("_", " ") if path else ""
        out.append(Fact(text=f"{name}: {value}" if name else value, kind=kind,
                        source="/".join([source, *path])))
    return out


def case_facts(case: Case) -> list[Fact]:
    """``case``'s facts: the patient's fields sentence by sentence (history, or exam when a
    sentence reads as an examination or test finding), each exam
    finding and each test result; a case with no patient fields uses its vignette's
    sentences. ``case.key_facts`` marks key facts (see :func:`mark_key`)."""
    p = case.patient
    fields = {"demographics": p.demographics, "history": p.history,
              "primary symptom": p.symptoms.primary,
              **{f"secondary symptom {i + 1}": s for i, s in enumerate(p.symptoms.secondary)},
              "past medical history": p.past_medical_history, "medications": p.medications,
              "social history": p.social_history, "family history": p.family_history,
              "review of systems": p.review_of_systems, **p.other}
    # Vignette-derived cases keep the whole story as history: its exam sentences stay exam.
    history = [Fact(text=s, kind="exam" if _CLINICAL.search(s) else "history", source=name)
               for name, text in fields.items() for s in sentences(text) if tokens(s)]
    if case.vignette and (not history or p.history.strip() in case.vignette):
        # A case converted from a vignette: its sentences are the facts, once each.
        history = vignette_facts(case.vignette)
    facts = [*history, *_finding_facts(case.physical_exam, "exam", "physical exam"),
             *_finding_facts(case.tests, "test", "tests")]
    return mark_key(facts, case.key_facts)


def mark_key(facts: list[Fact], key_facts: Iterable[str]) -> list[Fact]:
    """Mark as key every fact containing all the tokens of a ``key_facts`` entry; an entry
    matching no fact becomes a key history fact of its own."""
    out = list(facts)
    for entry in key_facts:
        wanted = tokens(entry)
        hits = [i for i, f in enumerate(out) if wanted and wanted <= f.tokens]
        for i in hits:
            out[i] = out[i].model_copy(update={"key": True})
        if not hits:
            out.append(Fact(text=entry, kind="history", key=True, source="key_facts"))
    return out
