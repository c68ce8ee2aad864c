"""What a short name denotes: a condition, or a test, treatment, drug, finding, health or
an event (an external cause, "a fall").

The paper's grader extracts *diagnoses*: an answer naming only an investigation ("MRI of the
lumbar spine"), a treatment ("laparoscopy"), a drug ("methylphenidate") or a laboratory
finding ("elevated troponin") names none, and neither does a patient said to be healthy
("in good health", "asymptomatic"). This is decided from the words alone: head nouns of
tests and treatments, procedure endings, the United States Adopted Names stems of drugs.
"""

from __future__ import annotations

import re

from ...core.text import bounded_cache
from ..terminology import CONDITION_SUFFIXES, FILLER, tokens

#: Words of an injury or a physiological state like pregnancy: a second condition an answer
#: gives beside its diagnosis, never a finding of it ("T, rib fracture", "T, menopause").
INJURIES_AND_STATES = frozenset({
    "sprain", "strain", "concussion", "laceration", "contusion", "dislocation", "burn",
    "injury", "trauma", "tear", "dissection", "torsion", "pregnancy", "gestation",
    # issue 31, round 3: more injuries, and the physiological states like pregnancy
    "whiplash", "bite", "bites", "sting", "wound", "abrasion", "avulsion", "amputation",
    "frostbite", "menopause", "perimenopause", "postmenopause", "puerperium", "lactation",
    "postpartum"})
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
                  "trexate", "dronate", "parib", "limus", "sporin", "stigmine", "phenidate",
                  "benzamine", "renone", "lactone", "fetamine", "phetamine")
#: Words that open a laboratory or examination finding rather than a diagnosis.
_FINDING_LEADS = frozenset({"elevated", "increased", "decreased", "raised", "reduced",
                            "positive", "negative", "presence", "detection", "identification"})
#: Head words of findings: what a test shows, not what the patient has.
_FINDING_HEADS = frozenset({"antibody", "antigen", "troponin", "marker", "enzyme", "crystal",
                            "cast", "band", "titer", "ratio", "value", "result", "finding"})
# An event that brought the patient in, not a condition of theirs: ICD-10-CM codes it in
# chapter 20, "External causes of morbidity" (V00-Y99), whose codes its Official Guidelines
# never let be the first-listed diagnosis (Section I.C.20). The whole name only: "a fall",
# "fall from a ladder", "assault", "motor vehicle accident"; not what it caused ("hip
# fracture after a fall") nor a disease named like it ("cerebrovascular accident").
_EVENT = re.compile(r"(?:(?:accidental|mechanical|ground\s+level|recent)\s+)?falls?"
                    r"(?:\s+(?:from|down|off|onto|on)(?:\s+[a-z]+){1,3})?|assault"
                    r"|(?:motor\s+vehicle|road\s+traffic|traffic|car|road|bicycle|motorcycle)"
                    r"\s+(?:accident|collision|crash)")
# The patient has no disease: a statement of health, which names no diagnosis.
_HEALTH = re.compile(r"(?:(?:currently|otherwise|completely|generally|apparently|likely)\s+)*"
                     r"(?:(?:healthy|in\s+good\s+health|asymptomatic|disease\s+free)"
                     r"(?:\s+(?:patient|individual|person|adult|child|infant|woman|man))?"
                     r"|normal\s+(?:patient|individual|person|adult|child|infant|newborn|woman|man))")


#: A generic head as an index's main term, before a comma ("Syndrome, meconium aspiration",
#: "Disorders, fibroblastic"): the name of a condition, whatever its last word (a generic
#: head alone is no name, so it cannot decide by itself).
_GENERIC_MAIN_TERM = re.compile(r"\s*(?:disease|disorder|syndrome|infection|illness)(?:s|es)?,",
                                re.I)


#: A disease's name by its ending, for an inverted heading's main term ("Pneumonia, ...").
_DISEASE_ENDS = (*CONDITION_SUFFIXES, "ia")


@bounded_cache
def kind(name: str) -> str:
    """"condition", "test", "treatment", "drug", "finding", "health" or "event": what a
    short name denotes.

    Decided by the head word (the last content word, or the one before "of"): tests and
    treatments by their head nouns and procedure suffixes, drugs by USAN stems. Anything
    else is taken for a condition, since the grader only needs to tell conditions from
    the investigations and treatments some questions ask for.
    """
    words = tokens(name)
    if not words or _GENERIC_MAIN_TERM.match(name):
        return "condition"
    main_term, comma, modifiers = name.partition(",")
    if (comma and "," not in modifiers and main_term.strip().lower().endswith(_DISEASE_ENDS)
            and kind(modifiers) in ("test", "treatment")):
        # an inverted heading read whole ("Pneumonia, Aspiration", MeSH): its head is the
        # disease before the comma, not a procedure's word after it
        return "condition"
    if _HEALTH.fullmatch(" ".join(words)):
        return "health"
    if _EVENT.fullmatch(" ".join(w for w in words if w not in ("a", "an", "the"))):
        return "event"
    if words[0] in _FINDING_LEADS or re.fullmatch(r"[\d.,/%]+", " ".join(words)):
        return "finding"  # "elevated troponin", "positive ANA", "70%"
    head = _head(words)
    if head in _FINDING_HEADS or (head.endswith("cyte") and len(head) > 6):
        return "finding"  # "schistocytes", "anti-dsDNA antibodies"
    if any(w.endswith(CONDITION_SUFFIXES) for w in words if len(w) > 4):
        # "Biopsy-proven melanoma" is a condition; "anemia workup" is not.
        if head in _TEST_HEADS:
            return "test"
        return "condition"
    if head in _TEST_HEADS or (head.endswith(_PROCEDURE_SUFFIXES) and head != "therapy"):
        return "test" if not head.endswith(("ectomy", "otomy", "ostomy", "plasty", "pexy",
                                            "pheresis")) else "treatment"
    if head in _TREATMENT_HEADS or head.endswith("therapy"):
        return "treatment"
    if len(head) > 5 and head.endswith(_DRUG_SUFFIXES) and len(words) <= 3:
        return "drug"  # "minocycline", not "minocycline-induced hyperpigmentation"
    return "condition"


def _head(words: tuple[str, ...]) -> str:
    content_words = [w for w in words if w not in FILLER]
    if "of" in words:
        before = [w for w in words[: words.index("of")] if w not in FILLER]
        if before:
            return before[-1]
    # A step of the plan before "to" is the head: "referral to dermatology", "admission to
    # hospital" name no condition after their destination (red team round 16); not "data
    # to determine the most appropriate test", where "to" opens a clause.
    if "to" in words:
        before = [w for w in words[: words.index("to")] if w not in FILLER]
        if before and before[-1] in _TREATMENT_HEADS:
            return before[-1]
    return content_words[-1] if content_words else words[-1]
