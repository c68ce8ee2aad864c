"""Text normalisation shared by the deterministic agents and the diagnosis matcher."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Words that carry no diagnostic meaning when comparing names.
STOPWORDS = frozenset({
    "a", "an", "the", "of", "and", "or", "with", "without", "in", "on", "to", "for", "from",
    "by", "at", "as", "is", "are", "be", "was", "were", "this", "that", "it", "its", "their",
    "his", "her", "your", "my", "our", "due", "likely", "most", "probable",
    "possible", "consistent", "suggestive", "diagnosis", "diagnosed", "dx",
    "disease", "disorder", "syndrome", "condition",
})
# Qualifiers that change what a diagnosis names (primary/secondary, acute/chronic, type 1/2)
# are never stopwords: "secondary X" is not "X" with a word dropped.
# Head words that do not change what a diagnosis names, only how it is phrased.
_SOFT = frozenset({"disease", "disorder", "syndrome", "condition"})

#: Clinical abbreviations, expanded before comparison (tests and diagnoses alike).
#: Ones that are also common words ("all", "us", "cat") are left out on purpose.
ABBREVIATIONS: dict[str, str] = {
    "cbc": "complete blood count",
    "fbc": "complete blood count",
    "bmp": "basic metabolic panel",
    "cmp": "comprehensive metabolic panel",
    "lft": "liver function tests",
    "lfts": "liver function tests",
    "tft": "thyroid function tests",
    "tfts": "thyroid function tests",
    "ecg": "electrocardiogram",
    "ekg": "electrocardiogram",
    "eeg": "electroencephalogram",
    "emg": "electromyography",
    "cxr": "chest x ray",
    "xray": "x ray",
    "radiograph": "x ray",
    "ct": "computed tomography",
    "mri": "magnetic resonance imaging",
    "usg": "ultrasound",
    "ultrasonography": "ultrasound",
    "echo": "echocardiogram",
    "echocardiography": "echocardiogram",
    "ua": "urinalysis",
    "abg": "arterial blood gas",
    "csf": "cerebrospinal fluid",
    "lp": "lumbar puncture",
    "esr": "erythrocyte sedimentation rate",
    "crp": "c reactive protein",
    "bp": "blood pressure",
    "hr": "heart rate",
    "rr": "respiratory rate",
    "temp": "temperature",
    "spo2": "oxygen saturation",
    "hba1c": "hemoglobin a1c",
    "tsh": "thyroid stimulating hormone",
    "pft": "pulmonary function tests",
    "pfts": "pulmonary function tests",
    "mi": "myocardial infarction",
    "stemi": "st elevation myocardial infarction",
    "pe": "pulmonary embolism",
    "dvt": "deep vein thrombosis",
    "copd": "chronic obstructive pulmonary disease",
    "chf": "congestive heart failure",
    "hf": "heart failure",
    "uti": "urinary tract infection",
    "ckd": "chronic kidney disease",
    "aki": "acute kidney injury",
    "dka": "diabetic ketoacidosis",
    "sle": "systemic lupus erythematosus",
    "ra": "rheumatoid arthritis",
    "ms": "multiple sclerosis",
    "als": "amyotrophic lateral sclerosis",
    "gerd": "gastroesophageal reflux disease",
    "ibd": "inflammatory bowel disease",
    "ibs": "irritable bowel syndrome",
    "tb": "tuberculosis",
    "hiv": "human immunodeficiency virus",
    "pml": "progressive multifocal leukoencephalopathy",
    "itp": "immune thrombocytopenia",
    "ttp": "thrombotic thrombocytopenic purpura",
    "dic": "disseminated intravascular coagulation",
    "aml": "acute myeloid leukemia",
    "cll": "chronic lymphocytic leukemia",
    "cml": "chronic myeloid leukemia",
    "dlbcl": "diffuse large b cell lymphoma",
    "pcos": "polycystic ovary syndrome",
    "pid": "pelvic inflammatory disease",
    "sah": "subarachnoid hemorrhage",
    "tia": "transient ischemic attack",
    "cva": "stroke",
    "gbs": "guillain barre syndrome",
    "nms": "neuroleptic malignant syndrome",
    "t2dm": "type 2 diabetes mellitus",
    "t1dm": "type 1 diabetes mellitus",
}

# British / variant spellings mapped onto one form.
_SPELLINGS = {
    "haem": "hem",
    "anaem": "anem",
    "oesoph": "esoph",
    "leukaem": "leukem",
    "tumour": "tumor",
    "oedema": "edema",
    "paediatric": "pediatric",
    "faec": "fec",
    "diarrhoea": "diarrhea",
    "ischaem": "ischem",
    "coeliac": "celiac",
    "oestr": "estr",
}

_PAREN = re.compile(r"\(([^)]*)\)")
_WORD = re.compile(r"[a-z0-9]+")


def fold(text: str) -> str:
    """Lower-case, strip accents and unify spelling variants."""
    # Dashes and quotes outside ASCII would vanish in the ASCII fold and glue words together.
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    text = text.replace("'s ", " ").replace("\u2019s ", " ")
    for variant, unified in _SPELLINGS.items():
        text = text.replace(variant, unified)
    return text


@lru_cache(maxsize=65536)
def words(text: str) -> tuple[str, ...]:
    """The normalised word sequence of ``text``, abbreviations expanded."""
    out: list[str] = []
    for word in _WORD.findall(fold(text)):
        out.extend(ABBREVIATIONS.get(word, word).split())
    return tuple(stem(w) for w in out)


def stem(word: str) -> str:
    """Plural folding: English ("ulcers", "bodies") and Latin ("bullae", "nevi", "emboli")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "xis")):
        return word[:-1]
    if len(word) > 4 and word.endswith("ae"):
        return word[:-1]
    if len(word) > 4 and word.endswith("i") and word[-2] not in "aeiou":
        return word[:-1] + "us"
    return word


def content_words(text: str) -> frozenset[str]:
    """The meaningful words of ``text`` (stopwords dropped)."""
    return frozenset(w for w in words(text) if w not in STOPWORDS)


def variants(name: str) -> list[str]:
    """A name, its form without parentheticals, and each parenthetical on its own."""
    inner = [m.strip() for m in _PAREN.findall(name) if m.strip()]
    bare = _PAREN.sub(" ", name).strip()
    return [v for v in dict.fromkeys([name, bare, *inner]) if v]


def key_words(name: str) -> frozenset[str]:
    """The words that identify a diagnosis name (soft qualifiers removed when others remain)."""
    all_words = frozenset(w for w in words(name) if w not in STOPWORDS or w in _SOFT)
    hard = frozenset(w for w in all_words if w not in _SOFT)
    return hard or all_words


_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'])")


def sentences(text: str) -> list[str]:
    """Split prose into sentences (good enough for case text, not for general prose)."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]
