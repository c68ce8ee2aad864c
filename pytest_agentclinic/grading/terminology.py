"""Clinical terminology for the grader: disease names as comparison keys.

A name's *key* is the set of its normalised content words: accents and British spellings
folded, possessives and plurals dropped, abbreviations expanded, Roman numerals made Arabic,
filler, hedges and generic head words left out. The bundled table of disease concepts
(:mod:`.concepts`) stores each name's key computed here, with :func:`normaliser_fingerprint`
to tell when they went stale.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Iterator
from functools import lru_cache

from ..core.text import ABBREVIATIONS, fold, stem

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
                     "illness", "problem", "process", "infection"})
#: Uncertainty words around a name; they never belong to it.
HEDGES = frozenset({"possible", "possibly", "probable", "probably", "likely", "suspected",
                    "presumed", "presumptive", "potential", "potentially", "suggestive",
                    "consistent", "most", "diagnosis", "final", "definitive", "clinical"})

_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6"}
# Acronyms that are also ordinary words are never expanded from lower-case text.
_AMBIGUOUS = frozenset({"all", "us", "cat", "pe", "ms", "ra", "hr", "temp", "echo"})
_WORD = re.compile(r"[a-z0-9]+")
_NON = re.compile(r"\bnon[\s-]+(?=[a-z])")
_POSSESSIVE = re.compile(r"(?<=[a-z])['\u2019]s?(?![a-z])")


#: Clinical acronyms beyond the shared table in :mod:`.normalize`; only unambiguous ones (ASD,
#: BPD, MS and the like name two conditions and are left alone).
ACRONYMS: dict[str, str] = {
    "cmv": "cytomegalovirus", "ebv": "epstein barr virus", "hsv": "herpes simplex virus",
    "vzv": "varicella zoster virus", "hpv": "human papillomavirus", "rsv": "respiratory "
    "syncytial virus", "adhd": "attention deficit hyperactivity disorder",
    "ocd": "obsessive compulsive disorder", "ptsd": "post traumatic stress disorder",
    "gad": "generalized anxiety disorder", "mdd": "major depressive disorder",
    "odd": "oppositional defiant disorder", "bph": "benign prostatic hyperplasia",
    "sids": "sudden infant death syndrome", "ards": "acute respiratory distress syndrome",
    "rds": "respiratory distress syndrome", "nph": "normal pressure hydrocephalus",
    "vsd": "ventricular septal defect", "pda": "patent ductus arteriosus",
    "hcm": "hypertrophic cardiomyopathy", "svt": "supraventricular tachycardia",
    "psvt": "paroxysmal supraventricular tachycardia", "cad": "coronary artery disease",
    "pad": "peripheral artery disease", "aaa": "abdominal aortic aneurysm",
    "htn": "hypertension", "esrd": "end stage renal disease",
    "nafld": "nonalcoholic fatty liver disease", "pbc": "primary biliary cholangitis",
    "psc": "primary sclerosing cholangitis", "hcc": "hepatocellular carcinoma",
    "rcc": "renal cell carcinoma", "nsclc": "nonsmall cell lung cancer",
    "sclc": "small cell lung cancer", "bcc": "basal cell carcinoma",
    "scc": "squamous cell carcinoma", "nhl": "nonhodgkin lymphoma",
    "mds": "myelodysplastic syndrome", "mgus": "monoclonal gammopathy of undetermined "
    "significance", "hus": "hemolytic uremic syndrome", "hit": "heparin induced "
    "thrombocytopenia", "vwd": "von willebrand disease", "jia": "juvenile idiopathic arthritis",
    "gca": "giant cell arteritis", "pmr": "polymyalgia rheumatica",
    "uc": "ulcerative colitis", "sti": "sexually transmitted infection",
    "std": "sexually transmitted disease", "bv": "bacterial vaginosis",
    "mrsa": "methicillin resistant staphylococcus aureus", "lgv": "lymphogranuloma venereum",
    "sjs": "stevens johnson syndrome", "ten": "toxic epidermal necrolysis",
    "dress": "drug reaction with eosinophilia and systemic symptoms",
    "scfe": "slipped capital femoral epiphysis", "bppv": "benign paroxysmal positional vertigo",
    "cidp": "chronic inflammatory demyelinating polyneuropathy", "sdh": "subdural hematoma",
    "edh": "epidural hematoma", "ich": "intracerebral hemorrhage",
    "hhs": "hyperosmolar hyperglycemic state", "siadh": "syndrome of inappropriate "
    "antidiuretic hormone", "cah": "congenital adrenal hyperplasia", "pku": "phenylketonuria",
    "sma": "spinal muscular atrophy", "dmd": "duchenne muscular dystrophy",
    "fap": "familial adenomatous polyposis", "hnpcc": "hereditary nonpolyposis colorectal "
    "cancer", "cvid": "common variable immunodeficiency", "scid": "severe combined "
    "immunodeficiency", "xla": "x linked agammaglobulinemia", "g6pd": "glucose 6 phosphate "
    "dehydrogenase", "hfmd": "hand foot and mouth disease", "gvhd": "graft versus host disease",
    "ssss": "staphylococcal scalded skin syndrome", "ftd": "frontotemporal dementia",
    "aki": "acute kidney injury", "osa": "obstructive sleep apnea", "bpp": "biophysical profile",
}
#: Word forms that name the same thing: adjectives of organs and a few plain variants.
#: Normalisation, not synonymy of conditions: "deep venous thrombosis" is "deep vein
#: thrombosis", "idiopathic facial paralysis" speaks of a facial palsy.
WORD_FORMS: dict[str, str] = {
    "venous": "vein", "paralysis": "palsy", "renal": "kidney", "nephric": "kidney",
    "hepatic": "liver", "pulmonary": "lung", "cerebral": "brain", "cutaneous": "skin",
    "dermal": "skin", "gastric": "stomach", "ocular": "eye", "osseous": "bone",
    "cardiac": "heart", "myocardial": "heart", "eczema": "dermatitis", "toxicity": "poisoning",
    "intoxication": "poisoning", "thromboembolism": "embolism", "fibroid": "leiomyoma",
    "rhinosinusitis": "sinusitis", "tendinitis": "tendinopathy", "tendonitis": "tendinopathy",
    "tendinosis": "tendinopathy", "infarct": "infarction", "gouty": "gout",
    "neonatal": "newborn", "neonate": "newborn", "neonatorum": "newborn", "infant": "newborn",
    "haemorrhage": "hemorrhage", "bleed": "hemorrhage", "bleeding": "hemorrhage",
    "hypothyroid": "hypothyroidism", "hyperthyroid": "hyperthyroidism",
}
#: Words after which a single letter names a subtype ("hepatitis B", "hemophilia A").
_LETTER_HEADS = frozenset({"hepatitis", "hemophilia", "influenza", "vitamin", "type", "group",
                           "factor", "class", "protein", "men", "c", "niemann", "pick"})
#: One name for the words that all say "malignant tumour" (ICD-10-CM: "malignant neoplasm").
_CANCER = frozenset({"cancer", "carcinoma", "malignancy", "tumor", "neoplasm", "neoplasia"})


def _split_compound(word: str) -> str:
    # "adenocarcinoma" is a carcinoma, "rhabdomyosarcoma" a sarcoma: the head is its own word
    # so that "lung cancer" is found broader than "adenocarcinoma of the lung".
    for head in ("carcinoma", "sarcoma"):
        if word.endswith(head) and len(word) > len(head) + 2:
            return f"{word[: -len(head)]} {head}"
    return word


@lru_cache(maxsize=262144)
def tokens(text: str) -> tuple[str, ...]:
    """The normalised word sequence of ``text`` (abbreviations expanded, plurals folded)."""
    # "non-Hodgkin" is one word: split, "non" would leave "Hodgkin" to match Hodgkin.
    folded = _NON.sub("non", _POSSESSIVE.sub("", fold(text))).replace("-", " ")
    out: list[str] = []
    for word in _WORD.findall(folded):
        word = _ROMAN.get(word, word)
        if len(word) == 1 and word.isalpha() and out and out[-1] in _LETTER_HEADS:
            out.append(word + "_")  # a subtype letter, not the article "a"
            continue
        expansion = None if word in _AMBIGUOUS else ABBREVIATIONS.get(word) or ACRONYMS.get(word)
        for part in " ".join(map(_split_compound, (expansion or word).split())).split():
            part = stem(part)
            part = WORD_FORMS.get(part, part)
            if part in _CANCER:
                if out and out[-1] == "malignant":
                    out.pop()
                part = "cancer"
            out.append(part)
    return tuple(out)


@lru_cache(maxsize=262144)
def content(text: str) -> tuple[str, ...]:
    """The identifying words of a name, in order (filler, hedges, generic heads dropped).

    What induced a condition is not part of its name: "lithium-induced nephrogenic diabetes
    insipidus" names nephrogenic diabetes insipidus, "age-related macular degeneration"
    macular degeneration.
    """
    words = [w for w in _drop_inducers(tokens(text)) if w not in FILLER and w not in HEDGES]
    specific = [w for w in words if w not in GENERIC]
    return tuple(specific or words)


def _drop_inducers(words: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for word in words:
        if word in _INDUCED and out:
            out.pop()  # the inducing agent before "induced" / "related"
            continue
        out.append(word)
    return out


_INDUCED = frozenset({"induced", "related"})


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


#: Word endings of conditions ("-itis", "-oma", ...), and head nouns that always name one.
CONDITION_SUFFIXES = ("itis", "osis", "oma", "emia", "aemia", "pathy", "plasia", "trophy",
                       "algia", "ism", "iasis", "ectasis", "ectasia", "cele", "uria", "rrhea",
                       "rrhoea", "penia", "cytosis", "megaly", "plegia", "paresis", "phobia",
                       "mania", "philia", "oses", "ulcer", "fracture", "syndrome", "disease",
                       "disorder", "deficiency", "infection", "cancer", "tumor", "carcinoma")


def normaliser_fingerprint() -> str:
    """A digest of everything :func:`key` depends on: keys in the table are valid while the
    fingerprint they were built with matches."""
    parts: list[object] = [inspect.getsource(f) for f in (
        tokens, content, _drop_inducers, _split_compound, fold, stem, icd_name_forms)]
    parts += [sorted(FILLER), sorted(GENERIC), sorted(HEDGES), sorted(ACRONYMS.items()),
              sorted(WORD_FORMS.items()), sorted(ABBREVIATIONS.items()), sorted(_ROMAN.items()),
              sorted(_AMBIGUOUS), sorted(_LETTER_HEADS), sorted(_CANCER), sorted(_INDUCED)]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]
