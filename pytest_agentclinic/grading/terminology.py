"""Clinical terminology for the CRAFT-MD grader: normalised names, ICD-10-CM synonyms and hierarchy.

Names are compared as *keys*: the set of their normalised content words (accents and British
spellings folded, possessives and plurals dropped, abbreviations expanded, Roman numerals made
Arabic). Knowledge of synonyms and of the disease hierarchy comes from ICD-10-CM: every code's
description, its bracketed alternative names and its inclusion terms name that code, and a
code's ancestors are broader conditions. The table is generated at build time from the
``simple-icd-10-cm`` package (see :mod:`.build_terminology`).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

from .normalize import ABBREVIATIONS, fold

DATA_FILE = Path(__file__).with_name("data") / "icd10cm_terms.tsv.gz"

Key = frozenset[str]

#: Words that never identify a condition.
FILLER = frozenset({
    "a", "an", "the", "of", "and", "or", "with", "without", "in", "on", "to", "for", "from",
    "by", "at", "as", "is", "are", "be", "was", "were", "this", "that", "it", "its", "their",
    "his", "her", "your", "my", "our", "which", "who", "also", "known", "called", "aka",
    "patient", "s", "nos", "unspecified", "site", "specified",
})
#: Head words so generic that they only count when nothing else names the condition.
GENERIC = frozenset({"disease", "disorder", "syndrome", "condition", "type", "form", "state",
                     "illness", "problem", "process"})
#: Uncertainty words around a name; they never belong to it.
HEDGES = frozenset({"possible", "possibly", "probable", "probably", "likely", "suspected",
                    "presumed", "presumptive", "potential", "potentially", "suggestive",
                    "consistent", "most", "diagnosis", "final", "definitive", "clinical"})

_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6"}
# Acronyms that are also ordinary words are never expanded from lower-case text.
_AMBIGUOUS = frozenset({"all", "us", "cat", "pe", "ms", "ra", "hr", "temp", "echo"})
_WORD = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"(?<=[a-z])['\u2019]s?(?![a-z])")


def _stem(word: str) -> str:
    # Plural folding only: "ulcers"/"ulcer", "bodies"/"body"; Latin "-is"/"-us" are kept.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "xis")):
        return word[:-1]
    return word


@lru_cache(maxsize=262144)
def tokens(text: str) -> tuple[str, ...]:
    """The normalised word sequence of ``text`` (abbreviations expanded, plurals folded)."""
    folded = _POSSESSIVE.sub("", fold(text).replace("-", " "))
    out: list[str] = []
    for word in _WORD.findall(folded):
        word = _ROMAN.get(word, word)
        expansion = ABBREVIATIONS.get(word) if word not in _AMBIGUOUS else None
        out.extend(_stem(w) for w in (expansion or word).split())
    return tuple(out)


@lru_cache(maxsize=262144)
def content(text: str) -> tuple[str, ...]:
    """The identifying words of a name, in order (filler, hedges, generic heads dropped)."""
    words = [w for w in tokens(text) if w not in FILLER and w not in HEDGES]
    specific = [w for w in words if w not in GENERIC]
    return tuple(specific or words)


def key(text: str) -> Key:
    """The order-free comparison key of a name."""
    return frozenset(content(text))


def compact(text: str) -> str:
    """The content words run together: "post-streptococcal" and "poststreptococcal" agree."""
    return "".join(content(text))


_BRACKET = re.compile(r"\[([^\]]*)\]")
_PAREN = re.compile(r"\(([^)]*)\)")
_RANGE = re.compile(r"\([A-Z]\d\d(\.\d+)?-[A-Z]\d\d(\.\d+)?\)\s*$")


def icd_name_forms(name: str) -> Iterator[str]:
    """The names an ICD-10-CM description stands for.

    Square brackets hold alternative names ("Osteitis deformans [Paget's disease of bone]");
    parentheses hold non-essential words, so the name is given with and without them.
    Residual categories ("Other ...") name no single condition and give nothing.
    """
    name = _RANGE.sub("", name).strip()
    if name.lower().startswith(("other ", "unspecified ")):
        return
    for alt in _BRACKET.findall(name):
        if alt.strip():
            yield alt
    bare = _BRACKET.sub(" ", name)
    yield _PAREN.sub(" ", bare)
    yield _PAREN.sub(r" \1 ", bare)


class Terminology:
    """ICD-10-CM names indexed by key, with the code hierarchy."""

    def __init__(self, rows: Iterable[tuple[str, str, list[str]]]) -> None:
        self._codes: dict[Key, set[str]] = {}
        self._parent: dict[str, str] = {}
        for code, parent, names in rows:
            if parent:
                self._parent[code] = parent
            for name in names:
                for form in icd_name_forms(name):
                    form_key = key(form)
                    if form_key:
                        self._codes.setdefault(form_key, set()).add(code)

    @classmethod
    def load(cls, path: Path = DATA_FILE) -> Terminology:
        """Read the bundled table (empty terminology when the file is absent)."""
        if not path.exists():
            return cls(())
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return cls(_parse(handle))

    def codes(self, name: str | Key) -> frozenset[str]:
        """The ICD-10-CM codes a name denotes (empty when unknown)."""
        name_key = name if isinstance(name, frozenset) else key(name)
        return frozenset(self._codes.get(name_key, ()))

    def ancestors(self, code: str) -> list[str]:
        """The codes above ``code``, nearest first."""
        out: list[str] = []
        while code in self._parent:
            code = self._parent[code]
            out.append(code)
        return out

    def relation(self, given: Key, truth: Key) -> str | None:
        """"same", "broader" or "narrower" (``given`` against ``truth``), or None if unrelated."""
        given_codes, truth_codes = self.codes(given), self.codes(truth)
        if not given_codes or not truth_codes:
            return None
        if given_codes & truth_codes:
            return "same"
        if any(g in self.ancestors(t) for t in truth_codes for g in given_codes):
            return "broader"
        if any(t in self.ancestors(g) for g in given_codes for t in truth_codes):
            return "narrower"
        return None

    def known(self, name: str | Key) -> bool:
        """Whether ICD-10-CM names this condition."""
        return bool(self.codes(name))


def _parse(lines: Iterable[str]) -> Iterator[tuple[str, str, list[str]]]:
    for line in lines:
        code, parent, names = line.rstrip("\n").split("\t")
        yield code, parent, names.split(" | ")


@lru_cache(maxsize=1)
def default_terminology() -> Terminology:
    """The bundled ICD-10-CM terminology, loaded once per process."""
    return Terminology.load()


# --- what kind of thing a name denotes ------------------------------------------------------

#: Head words of tests and investigations.
_TEST_HEADS = frozenset({
    "test", "testing", "assay", "titer", "titre", "level", "count", "panel", "screen",
    "screening", "study", "scan", "imaging", "ultrasound", "sonography", "tomography", "x",
    "ray", "radiograph", "radiography", "biopsy", "culture", "smear", "stain", "staining",
    "electrophoresis", "cytometry", "analysis", "measurement", "monitoring", "aspiration",
    "puncture", "lavage", "sampling", "evaluation", "examination", "exam", "workup", "enema",
    "series", "swallow", "serology", "sequencing", "karyotype", "karyotyping", "profile",
    "microscopy", "work", "collection", "challenge", "stimulation", "suppression",
    "electrocardiogram", "echocardiogram", "urinalysis", "spirometry", "manometry",
    "angiography", "angiogram", "arteriography", "venography", "mammography", "mammogram",
    "colonoscopy", "endoscopy", "laparoscopy", "cystoscopy", "bronchoscopy", "amniocentesis",
    "paracentesis", "thoracentesis", "arthrocentesis", "electromyography", "pcr", "ercp",
})
#: Head words of treatments, procedures and management steps.
_TREATMENT_HEADS = frozenset({
    "therapy", "treatment", "administration", "infusion", "injection", "transfusion",
    "surgery", "repair", "resection", "excision", "drainage", "removal", "replacement",
    "reduction", "repositioning", "decompression", "cessation", "counseling", "counselling",
    "reassurance", "observation", "management", "vaccination", "vaccine", "medication",
    "supplementation", "supplement", "cream", "ointment", "antibiotic", "antihistamine",
    "steroid", "corticosteroid", "diuretic", "inhibitor", "blocker", "agonist", "antagonist",
    "dialysis", "chemotherapy", "radiotherapy", "immunotherapy", "evacuation", "referral",
    "admission", "consultation", "follow", "plasmapheresis", "ligation", "transplant",
    "transplantation", "intubation", "cardioversion", "incision", "debridement", "splinting",
    "casting", "fixation", "irrigation", "hydration", "fluid", "tablet", "dose", "agent",
    "drug", "regimen", "procedure", "operation", "thymectomy", "cholecystectomy",
})
_PROCEDURE_SUFFIXES = ("scopy", "graphy", "gram", "metry", "centesis", "ectomy", "otomy",
                       "ostomy", "plasty", "pexy", "pheresis", "therapy")
# United States Adopted Names stems: a word ending so is a drug, not a condition.
_DRUG_SUFFIXES = ("mab", "tinib", "pril", "sartan", "olol", "alol", "dipine", "azole",
                  "cillin", "mycin", "micin", "cycline", "floxacin", "statin", "prazole",
                  "tidine", "setron", "triptan", "parin", "xaban", "gatran", "zepam", "zolam",
                  "barbital", "caine", "profen", "fenac", "ciclovir", "clovir", "navir",
                  "semide", "thiazide", "tadine", "oxetine", "xetine", "traline", "azine",
                  "idone", "apine", "iramine", "pramine", "triptyline", "lukast", "terol",
                  "sone", "olone", "nisone", "glitazone", "gliptin", "gliflozin", "formin",
                  "tropium", "curium", "conazole", "fungin", "penem", "bactam", "cef", "sulfa",
                  "amide", "zosin", "osin", "onium", "platin", "rubicin", "taxel", "mustine",
                  "trexate", "dronate", "parib", "limus", "sporin", "stigmine")
_CONDITION_SUFFIXES = ("itis", "osis", "oma", "emia", "aemia", "pathy", "plasia", "trophy",
                       "algia", "ism", "iasis", "ectasis", "ectasia", "cele", "uria", "rrhea",
                       "rrhoea", "penia", "cytosis", "megaly", "plegia", "paresis", "phobia",
                       "mania", "philia", "oses", "ulcer", "fracture", "syndrome", "disease",
                       "disorder", "deficiency", "infection", "cancer", "tumor", "carcinoma")
_KIND_CACHE: dict[str, str] = {}


def kind(name: str) -> str:
    """"condition", "test", "treatment" or "drug": what a short name denotes.

    Decided by the head word (the last content word, or the one before "of"): tests and
    treatments by their head nouns and procedure suffixes, drugs by USAN stems. Anything
    else is taken for a condition, since the grader only needs to tell conditions from
    the investigations and treatments some questions ask for.
    """
    cached = _KIND_CACHE.get(name)
    if cached is None:
        cached = _KIND_CACHE[name] = _kind(name)
    return cached


def _kind(name: str) -> str:
    words = tokens(name)
    if not words:
        return "condition"
    head = _head(words)
    if any(w.endswith(_CONDITION_SUFFIXES) for w in words if len(w) > 4):
        # "Biopsy-proven melanoma" is a condition; "anemia workup" is not.
        if head in _TEST_HEADS:
            return "test"
        return "condition"
    if head in _TEST_HEADS or (head.endswith(_PROCEDURE_SUFFIXES) and head != "therapy"):
        return "test" if not head.endswith(("ectomy", "otomy", "ostomy", "plasty", "pexy",
                                            "pheresis")) else "treatment"
    if head in _TREATMENT_HEADS or head.endswith("therapy"):
        return "treatment"
    if all(len(w) > 5 and w.endswith(_DRUG_SUFFIXES) for w in words[:1]) and len(words) <= 3:
        return "drug"
    return "condition"


def _head(words: tuple[str, ...]) -> str:
    content_words = [w for w in words if w not in FILLER]
    if "of" in words:
        before = [w for w in words[: words.index("of")] if w not in FILLER]
        if before:
            return before[-1]
    return content_words[-1] if content_words else words[-1]
