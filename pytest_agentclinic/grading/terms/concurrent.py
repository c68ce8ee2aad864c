"""Whether a name given beside the main diagnosis is a *concurrent* condition of it or another
diagnosis competing with it.

CRAFT-MD's grader was told: "if there is a main diagnosis with a concurrent minor diagnosis,
return the main diagnosis"; only "more than one possible diagnosis" is multiple. A name
joined to the main one by "with", "complicated by", "secondary", "and", a comma or a bracket
is concurrent (the main diagnosis is graded) when the terminology or the words say it
belongs to the main one (docs/grading.md, "Main and concurrent"):

* a **finding**: a sign or symptom (ICD-10-CM chapter R, MeSH's Signs and Symptoms), or an
  examination or laboratory finding by the clinical convention stated in docs/grading.md
  (an enlarged organ, an effusion, swelling, dehydration, a blood count or electrolyte out
  of range);
* a **linked concept**: a hierarchy of the terminology places one name under the other
  (diabetic ketoacidosis under diabetes mellitus), or the two names' words together are a
  name of one concept the terminology knows (ICD-10-CM's combination codes: "mumps
  orchitis", "measles complicated by pneumonia");
* a **secondary condition** the answer states as such ("secondary bacterial infection",
  "superinfection") that is no disease name of its own;
* a **complication** process named alone ("perforation", "abscess formation"), or a
  manifestation named after the main disease's own word ("diabetic ketoacidosis" beside
  diabetes mellitus, "pancreatic pseudocyst" beside pancreatitis).

Any other disease beside the main one (unrelated, or a sibling under the same parent, which
competes for the same presentation) is an alternative: the answer is then several diagnoses.
"""

from __future__ import annotations

import re

from ...core.text import bounded_cache
from ..terminology import FILLER, GENERIC, key, tokens
from ..wording import similar
from .concepts import default_terminology
from .equivalence import compare
from .qualifiers import NEUTRAL_QUALIFIERS, PLACES

__all__ = ["complication", "concurrent", "disease_by_words", "finding", "linked", "named_after",
           "stated_secondary"]

# The clinical convention of docs/grading.md: what an examination or a laboratory test finds
# beside a disease, named by its head word or the word's ending.
_FINDING_WORDS = frozenset({
    "effusion", "ascites", "edema", "oedema", "swelling", "dehydration", "hypovolemia",
    "lymphadenopathy", "adenopathy", "lymphadenitis", "organomegaly", "fever", "jaundice",
    "icterus", "hypoxemia", "hypoxia", "hypotension", "tachycardia", "bradycardia",
    "leukocytosis", "leukopenia", "neutropenia", "neutrophilia", "lymphopenia",
    "lymphocytosis", "thrombocytopenia", "thrombocytosis", "eosinophilia", "anemia",
    "acidosis", "alkalosis", "proteinuria", "hematuria", "pyuria", "azotemia",
    # what the patient shows: ICD-10-CM's chapter R files a rash as a sign (R21 "Rash and
    # other nonspecific skin eruption"), where the sources' names fail it ("rash" is MeSH's
    # Exanthema, filed under the skin diseases alone; red team round 10)
    "rash",
})
# An organ enlarged ("hepatomegaly") or a blood cell count out of range ("leukocytosis",
# "thrombocytopenia", "eosinophilia"): the ending after an organ's or a blood cell's combining
# form. The same endings after other roots name diseases of their own ("acromegaly",
# "hemophilia", "thrombophilia", "histiocytosis", "mastocytosis"), no finding.
_ORGAN_FORMS = ("hepato", "spleno", "hepatospleno", "cardio", "organo", "thyro", "nephro",
                "adeno", "lymphadeno")
_CELL_FORMS = ("leuko", "leuco", "lympho", "thrombo", "thrombocyto", "erythro", "neutro",
               "eosino", "baso", "mono", "granulo", "pancyto", "reticulo", "plasma")
_FINDING_FORM = re.compile(
    rf"^(?:(?:{'|'.join(_ORGAN_FORMS)})megaly"
    rf"|(?:{'|'.join(_CELL_FORMS)})(?:cytosis|cytopenia|penia)"
    rf"|(?:neutro|eosino|baso)philia)$")
# "hypokalemia", "hypernatremia", "hyperglycemia": a laboratory value out of range
_OUT_OF_RANGE = re.compile(r"^hyp(?:er|o)[a-z]+(?:emia|aemia|uria)$")
_AMOUNT = frozenset({"small", "large", "massive", "trace", "marked", "minimal", "mild",
                     "moderate", "severe", "generalized", "generalised", "localized", "diffuse",
                     "reactive", "tender", "painless", "persistent", "low", "high", "grade",
                     # where: the cavities and nodes an examination or imaging finds it in
                     "pleural", "pericardial", "peritoneal", "joint", "hilar", "mediastinal",
                     "axillary", "inguinal", "submandibular", "supraclavicular", "occipital",
                     "abdominal", "mesenteric", "retroperitoneal", "pedal", "peripheral",
                     "periorbital", "lower", "upper", "extremity", "limb", "leg", "ankle",
                     "posterior", "anterior", "hepatic", "splenic", "lymph", "node"})
# The words as the names' words are compared: normalised ("hilar" is "hilum", "ascites"
# "ascite", "oedema" "edema"), so that "bilateral hilar lymphadenopathy" is a finding too
# (red team round 10)
_FINDING_WORDS = frozenset(t for w in _FINDING_WORDS for t in (w, *tokens(w)))
_AMOUNT = frozenset(t for w in _AMOUNT for t in (w, *tokens(w)))
# The answer says the companion follows from the main diagnosis.
_SECONDARY = frozenset({"secondary", "superinfection", "superinfected", "superimposed",
                        "impetiginization", "impetiginisation", "impetiginized",
                        "impetiginised"})


@bounded_cache
def finding(name: str) -> bool:
    """Whether ``name`` is a sign, a symptom or an examination or laboratory finding."""
    terms = default_terminology()
    ids = terms.concepts(name)[1]
    if terms.symptom(name) or any(i.startswith("ICD:R") for i in ids):
        return True
    words = tokens(name)
    if not words:
        return False
    if not ids and _qualified_symptom(name):
        return True
    head, rest = words[-1], set(words[:-1]) - FILLER
    # only the finding with where, how much or which side ("small pericardial effusion",
    # "right inguinal lymphadenopathy"); a word of kind or cause makes a disease of it
    # ("iron deficiency anemia", "familial hypercholesterolemia", "aplastic anemia")
    plain = rest <= NEUTRAL_QUALIFIERS | PLACES | terms.site_words | _AMOUNT
    return plain and (head in _FINDING_WORDS or _FINDING_FORM.match(head) is not None
                      or _OUT_OF_RANGE.match(head) is not None)


# The words of a symptom's course, severity or site, which qualify it whatever else a source
# names with them alone ("acute", "chronic": MeSH's Acute Disease, Chronic Disease)
_COURSE = NEUTRAL_QUALIFIERS | _AMOUNT | frozenset({"chronic"})


# A possessive names whose disease it is, no qualifier ("traveler's diarrhea", "athlete's
# foot", "Bell's palsy"): a name of its own, whatever its head is
_POSSESSIVE = re.compile(r"['\u2019]s?$")


def _qualified_symptom(name: str) -> bool:
    """Whether ``name``, which no source knows, is a symptom or sign some source knows after
    words that qualify it ("thunderclap headache", "pleuritic chest pain", "productive
    cough"): ICD-10-CM's Alphabetic Index lists a symptom's qualifiers as subterms of its
    main term, and a qualifier it does not list is coded to the main term (chapter R). A
    word that is a condition's name of its own ("migraine headache"), or a possessive
    ("traveler's diarrhea"), is no qualifier."""
    terms = default_terminology()
    said = name.split()
    course = _COURSE | terms.site_words
    for cut in range(1, min(len(said), 4)):
        tail = " ".join(said[cut:])
        if terms.known(tail):
            lead = said[:cut]
            # (a generic head alone is no sign: ICD-10-CM's R69 "Illness, unspecified" is the
            # chapter's catch-all, and "viral illness" a diagnosis)
            return terms.symptom(tail) and not set(tokens(tail)) <= GENERIC and not any(
                (terms.known(w) and not set(tokens(w)) <= course) or disease_by_words(w)
                or _POSSESSIVE.search(w) is not None for w in lead)
    return False


@bounded_cache
def linked(name: str, main: str) -> bool:
    """Whether the terminology links ``name`` to the main diagnosis: one placed under the
    other by a hierarchy (not siblings: those compete), or their words together a name of
    one concept it knows."""
    if not name or not main:
        return False
    for a, b in ((name, main), (main, name)):
        found = compare(a, b)
        # one source's hierarchy alone is as often a slip as a link ("ankylosing
        # spondylitis" under rheumatoid arthritis by MONDO only): two sources must state it
        if found.kind in ("same", "synonym") or (
                found.kind in ("broader", "narrower") and found.sure and found.curated):
            return True
    mine, theirs = key(name), key(main)
    if not (mine and theirs) or mine <= theirs or theirs <= mine:
        return False
    terms = default_terminology()
    # ICD-10-CM names a combination "X complicated by Y" ("Measles complicated by pneumonia")
    return terms.known(mine | theirs) or terms.known(mine | theirs | {"complicated"})


# The endings of words that name a disease, not a finding (clinical naming convention: an
# inflammation "-itis", a condition "-osis", a tumour "-oma", an infestation "-iasis", a
# disease of an organ "-pathy"); "leukemia" and "-ectasia" too. Endings that also name signs
# ("-algia", "-megaly", "-penia", "-uria") are not among them.
_DISEASE_ENDINGS = ("itis", "osis", "oses", "oma", "omas", "iasis", "pathy", "ectasia",
                    "ectasis", "leukemia", "leukaemia")
# Head words that name a disease ("cervical insufficiency", "dysarthria-clumsy hand syndrome").
_DISEASE_HEADS = frozenset({"disease", "syndrome", "disorder", "infection", "insufficiency",
                            "deficiency", "cancer", "tumor", "tumour", "malignancy"})


@bounded_cache
def disease_by_words(name: str) -> bool:
    """Whether ``name`` names a disease by its words, where the terminology does not know it
    ("pyostomatitis vegetans", "leukemia cutis", "cervical insufficiency"): a word with a
    disease's ending or a disease's head word, and the name is no sign, symptom or
    finding."""
    words = tokens(name)
    if not (any(w.endswith(_DISEASE_ENDINGS) for w in words)
            or set(re.findall(r"[a-z]+", name.lower())) & _DISEASE_HEADS):
        return False
    return not (finding(name) or default_terminology().symptom(name))


def stated_secondary(name: str) -> bool:
    """Whether the answer calls the companion secondary ("secondary bacterial infection"),
    and it is no disease name of its own ("secondary syphilis" is one)."""
    return bool(_SECONDARY & set(tokens(name))) and not default_terminology().known(name)


# The clinical convention of docs/grading.md: what a disease does to the body, a complication
# by its head word, not a disease competing for the same presentation.
# Named alone (or with how much): a complication that names no organ is no other case's
# disease ("perforation", but "pulmonary embolism" is a diagnosis of its own).
_COMPLICATION_HEADS = frozenset({
    "abscess", "perforation", "rupture", "gangrene", "necrosis", "fistula", "stricture",
    "obstruction", "bleeding", "hemorrhage", "haemorrhage", "sepsis", "shock", "emboli",
    "metastasis", "metastases", "dissemination", "superinfection", "formation",
})


def complication(name: str) -> bool:
    """Whether ``name`` is a complication process named alone ("perforation", "abscess
    formation", "possible rupture")."""
    words = [w for w in tokens(name) if w not in FILLER]
    return (bool(words) and words[-1] in _COMPLICATION_HEADS
            and set(words[:-1]) <= NEUTRAL_QUALIFIERS | _AMOUNT | _COMPLICATION_HEADS)


@bounded_cache
def named_after(name: str, main: str) -> bool:
    """Whether a modifier of ``name`` is made from the main diagnosis's disease word, the
    head words differing: a manifestation named after the disease ("diabetic ketoacidosis"
    beside diabetes mellitus, "pancreatic pseudocyst" beside pancreatitis); not a sibling
    ("psoriatic arthritis" beside rheumatoid arthritis shares the head), nor a name sharing
    only an organ's adjective or a prefix ("aortic", "hyper-", "lymph-")."""
    words, others = tokens(name), tokens(main)
    if len(words) < 2 or not others or similar(words[-1], others[-1]):
        return False
    roots = {r for w in others for r in [_disease_root(w)] if len(r) >= 6}
    return any(w.startswith(r) for w in words[:-1] for r in roots)


_DISEASE_ENDING = re.compile(r"(?:itis|osis|oma|iasis|emia|aemia|(?<=et)es?)$")


def _disease_root(word: str) -> str:
    """The root of a word that names a disease by its ending ("pancreatitis": "pancreat",
    "diabetes", which the normaliser reads "diabete": "diabet"), else ""."""
    found = _DISEASE_ENDING.search(word)
    return word[: found.start()] if found is not None else ""


def concurrent(name: str, main: str) -> bool:
    """Whether ``name``, given beside ``main``, is a concurrent condition of it."""
    return (finding(name) or stated_secondary(name) or complication(name)
            or named_after(name, main) or linked(name, main))
