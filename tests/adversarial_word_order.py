"""The truth in another word order, for the adversarial fixture's slots (``adversarial.py``):
as an index writes it ("Gastritis, eosinophilic"), an organ's adjective as "of the" and its
noun ("Torsion of the testis") and back, a hyphen written open, an eponym's possessive
written otherwise, the head noun's number; and the same shapes naming a sibling (another
organ, another answer choice). Issue 31: a truth written in another word order must score,
its siblings so written must not.

The organ table is the generator's own (standard anatomy), not the grader's: the grader reads
the words by its terminology's word forms and rules."""

from __future__ import annotations

import re

from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.terms.eponym_words import eponyms

__all__ = ["word_order_forms"]

#: An organ's or a site's adjective and its noun, as anatomy writes them.
ORGANS = {
    "testicular": "testis", "ovarian": "ovary", "gastric": "stomach", "hepatic": "liver",
    "renal": "kidney", "pulmonary": "lung", "cardiac": "heart", "cerebral": "brain",
    "pancreatic": "pancreas", "splenic": "spleen", "colonic": "colon", "rectal": "rectum",
    "anal": "anus", "duodenal": "duodenum", "esophageal": "esophagus", "cecal": "cecum",
    "appendiceal": "appendix", "laryngeal": "larynx", "pharyngeal": "pharynx",
    "tracheal": "trachea", "bronchial": "bronchus", "pleural": "pleura",
    "prostatic": "prostate", "penile": "penis", "vaginal": "vagina", "vulvar": "vulva",
    "uterine": "uterus", "endometrial": "endometrium", "placental": "placenta",
    "vertebral": "vertebra", "ulnar": "ulna", "humeral": "humerus", "tibial": "tibia",
    "fibular": "fibula", "clavicular": "clavicle", "scapular": "scapula",
    "patellar": "patella", "pelvic": "pelvis", "sacral": "sacrum", "mandibular": "mandible",
    "maxillary": "maxilla", "gingival": "gingiva", "tonsillar": "tonsil", "aortic": "aorta",
    "pericardial": "pericardium", "umbilical": "umbilicus", "axillary": "axilla",
    "ureteral": "ureter", "urethral": "urethra", "retinal": "retina", "corneal": "cornea",
    "scleral": "sclera", "conjunctival": "conjunctiva", "cochlear": "cochlea",
    "thalamic": "thalamus", "cerebellar": "cerebellum", "synovial": "synovium",
    "cutaneous": "skin", "intestinal": "intestine", "nasal": "nose", "ocular": "eye",
    "spinal": "spine", "sternal": "sternum",
}
#: Another organ of the same kind for each: the sibling a wrong answer names.
_OTHER = {"testis": "ovary", "ovary": "testis", "stomach": "colon", "colon": "stomach",
          "liver": "spleen", "spleen": "liver", "kidney": "liver", "lung": "liver",
          "heart": "lung", "brain": "spine", "pancreas": "liver", "rectum": "colon",
          "anus": "rectum", "duodenum": "stomach", "esophagus": "stomach", "cecum": "stomach",
          "appendix": "colon", "larynx": "pharynx", "pharynx": "larynx", "trachea": "esophagus",
          "bronchus": "esophagus", "pleura": "pericardium", "prostate": "uterus",
          "penis": "vulva", "vagina": "penis", "vulva": "penis", "uterus": "prostate",
          "endometrium": "ovary", "placenta": "uterus", "vertebra": "sternum", "ulna": "tibia",
          "humerus": "tibia", "tibia": "ulna", "fibula": "ulna", "clavicle": "sternum",
          "scapula": "sternum", "patella": "humerus", "pelvis": "sternum", "sacrum": "sternum",
          "mandible": "maxilla", "maxilla": "mandible", "gingiva": "tonsil",
          "tonsil": "gingiva", "aorta": "urethra", "pericardium": "pleura",
          "umbilicus": "axilla", "axilla": "umbilicus", "ureter": "urethra",
          "urethra": "ureter", "retina": "cornea", "cornea": "retina", "sclera": "retina",
          "conjunctiva": "retina", "cochlea": "retina", "thalamus": "cerebellum",
          "cerebellum": "thalamus", "synovium": "pleura", "skin": "lung",
          "intestine": "stomach", "nose": "eye", "eye": "nose", "spine": "brain",
          "sternum": "sacrum"}
_NOUNS = {noun: adjective for adjective, noun in ORGANS.items()}
#: A part of an organ after its adjective: "Slipped capital femoral epiphysis" is no
#: epiphysis of a femur written "of the femur" by a clinician; left alone.
_PARTS = frozenset({"valve", "duct", "artery", "vein", "nerve", "arch", "sinus", "canal",
                    "lobe", "hilum", "junction", "tube", "gland", "root", "septum", "wall",
                    "cord", "bone", "cell", "tract", "joint", "ligament", "tendon", "muscle",
                    "space", "region", "epiphysis", "fossa"})
_JOINS = re.compile(r"\b(?:of|with|due|to|in|on|at|for|by|from|and|or|without|associated|"
                    r"type)\b|[(),/]", re.I)
#: A Latin epithet after its noun ("otitis externa", "diabetes insipidus"): no index order.
_LATIN = re.compile(r"(?:um|ae|orum|arum|alis|aris|ica|icus|ans|ens|osa|osum|ata|atum|iva|"
                    r"ina|us|ex)$", re.I)
#: Heads a clinician writes in the plural for several lesions ("gallstones", "cysts").
_COUNTABLE = ("cyst", "tumor", "nodule", "polyp", "fracture", "ulcer", "abscess", "aneurysm",
              "wart", "stone", "hemangioma", "xanthoma", "adenoma", "lipoma", "fibroma",
              "papilloma", "carbuncle")


def word_order_forms(case: Case) -> dict[str, str]:
    """The slots of ``case``'s truth in another word order (each absent where the truth has
    no such form): ``{truth_index}``, ``{truth_of_organ}``, ``{truth_organ_first}``,
    ``{truth_hyphen_open}``, ``{truth_possessive}``, ``{truth_number}``, and the siblings
    ``{other_organ_of}``, ``{other_organ_index}``, ``{choice_index}``."""
    truth = case.diagnosis
    forms: dict[str, str] = {}
    index = index_form(truth)
    if index is not None:
        forms["truth_index"] = index
    organ = _organ(truth)
    if organ is not None:
        head, noun, at = organ
        other = _OTHER[noun]
        forms["truth_of_organ"] = _cap(f"{head} of the {noun}")
        forms["other_organ_of"] = _cap(f"{head} of the {other}")
        words = truth.split()
        swapped = " ".join([*words[:at], _NOUNS[other], *words[at + 1:]])
        other_index = index_form(swapped)
        if other_index is not None:
            forms["other_organ_index"] = other_index
    first = _organ_first(truth)
    if first is not None:
        forms["truth_organ_first"] = first
    if re.search(r"[^\W\d_]-[^\W\d_]", truth):
        forms["truth_hyphen_open"] = re.sub(r"(?<=[^\W\d_])-(?=[^\W\d_])", " ", truth)
    possessive = _possessive(truth)
    if possessive is not None:
        forms["truth_possessive"] = possessive
    number = _number(truth)
    if number is not None:
        forms["truth_number"] = number
    choice = next((index_form(c) for c in case.choices if c != truth and index_form(c)), None)
    if choice is not None:
        forms["choice_index"] = choice
    return forms


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def index_form(name: str) -> str | None:
    """``name`` as an index writes it, its head noun first and its modifiers after a comma
    ("Gastritis, eosinophilic"), or None: a name with a join, a bracket or a hyphen, one word,
    a head of a letter or a number, or a Latin epithet after its noun."""
    words = name.split()
    if len(words) < 2 or _JOINS.search(name) or "-" in name:
        return None
    head, modifiers = words[-1], words[:-1]
    # an epithet after its noun ("polycythemia vera", "otitis externa", "pityriasis
    # versicolor"): the word before the head names the disease
    latin = (_LATIN.search(head) or (head.lower().endswith("is")
                                     and not head.lower().endswith(("itis", "sis")))
             or modifiers[-1].lower().endswith(("itis", "osis", "sis", "oma", "emia", "ia")))
    if not head.isalpha() or len(head) < 4 or head.isupper() or latin:
        return None
    first = modifiers[0]
    if first[1:].islower() and first.lower().rstrip("'\u2019s") not in eponyms():
        first = first.lower()
    return f"{_cap(head.lower())}, {' '.join([first, *modifiers[1:]])}"


def _organ(name: str) -> tuple[str, str, int] | None:
    """(the name without its organ adjective, the organ's noun, the adjective's place) where
    an organ's adjective stands before the head noun, or a word and the head."""
    words = name.split()
    if _JOINS.search(name) or len(words) < 2:
        return None
    for at, word in enumerate(words[:-1]):
        noun = ORGANS.get(word.lower())
        after = [w.lower() for w in words[at + 1:]]
        if noun is None:
            continue
        if len(after) > 2 or set(after) & _PARTS or "-" in name:
            return None
        rest = [*words[:at], *words[at + 1:]]
        if at == 0:
            rest[0] = rest[0] if not rest[0][1:].islower() else rest[0].lower()
        return " ".join(rest), noun, at
    return None


def _organ_first(name: str) -> str | None:
    """"X of the organ" written with the organ's adjective first ("Aortic coarctation")."""
    found = re.fullmatch(r"(\w+(?: \w+)?) of (?:the )?(\w+)", name, re.I)
    if found is None or found.group(2).lower() not in _NOUNS:
        return None
    head = found.group(1)
    head = head if not head[1:].islower() else head.lower()
    return _cap(f"{_NOUNS[found.group(2).lower()]} {head}")


def _possessive(name: str) -> str | None:
    """An eponym's possessive dropped ("Bowen disease"), or added where a known eponym stands
    before its head without it ("Parkinson's disease")."""
    found = re.search(r"\b(\w+)['\u2019]s\b", name)
    if found is not None:
        return name[:found.start()] + found.group(1) + name[found.end():]
    for found in re.finditer(r"\b([A-Z][a-z]+)(?= (?:disease|syndrome|palsy|tumor|ulcer))",
                             name):
        if found.group(1).lower() in eponyms():
            return name[:found.end()] + "'s" + name[found.end():]
    return None


def _number(name: str) -> str | None:
    """The head noun's number changed where it names a lesion that comes one or several
    ("Epidermoid cyst" / "Epidermoid cysts", "Eruptive xanthomas" / "Eruptive xanthoma")."""
    if _JOINS.search(name):
        return None
    words = name.split()
    last = words[-1]
    if last.lower().endswith(_COUNTABLE):
        return " ".join([*words[:-1], last + "s"])
    if last.lower().endswith(tuple(c + "s" for c in _COUNTABLE)):
        return " ".join([*words[:-1], last[:-1]])
    return None
