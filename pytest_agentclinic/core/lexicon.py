"""The word tables of the one text normaliser (:mod:`.text`): spellings, abbreviations, word
forms and the word classes its views drop.

Data only: how the tables are applied is :func:`.text.tokens`. Every table here that
:func:`.text.key` reads is covered by :func:`.text.normaliser_fingerprint`, since the bundled
disease terminology stores keys computed with them.
"""

from __future__ import annotations

#: British and variant spellings, unified inside words ("haemorrhage", "oesophagus").
SPELLINGS: dict[str, str] = {
    "haem": "hem", "anaem": "anem", "oesoph": "esoph", "leukaem": "leukem", "tumour": "tumor",
    "oedema": "edema", "paediatric": "pediatric", "faec": "fec", "diarrhoea": "diarrhea",
    "ischaem": "ischem", "coeliac": "celiac", "oestr": "estr",
}

#: Clinical abbreviations and acronyms, one table for tests and diagnoses alike. Ones that
#: are also common words ("all", "us", "cat") are left out; the entries that read two ways
#: are marked in :data:`AMBIGUOUS` and :data:`WORDLIKE`.
ABBREVIATIONS: dict[str, str] = {
    # tests, measurements and procedures
    "cbc": "complete blood count", "fbc": "complete blood count",
    "bmp": "basic metabolic panel", "cmp": "comprehensive metabolic panel",
    "lft": "liver function tests", "lfts": "liver function tests",
    "tft": "thyroid function tests", "tfts": "thyroid function tests",
    "ecg": "electrocardiogram", "ekg": "electrocardiogram", "eeg": "electroencephalogram",
    "emg": "electromyography", "cxr": "chest x ray", "xray": "x ray", "radiograph": "x ray",
    "ct": "computed tomography", "mri": "magnetic resonance imaging", "usg": "ultrasound",
    "ultrasonography": "ultrasound", "echo": "echocardiogram",
    "echocardiography": "echocardiogram", "ua": "urinalysis", "abg": "arterial blood gas",
    "csf": "cerebrospinal fluid", "lp": "lumbar puncture",
    "esr": "erythrocyte sedimentation rate", "crp": "c reactive protein",
    "bp": "blood pressure", "hr": "heart rate", "rr": "respiratory rate",
    "temp": "temperature", "spo2": "oxygen saturation", "hba1c": "hemoglobin a1c",
    "tsh": "thyroid stimulating hormone", "pft": "pulmonary function tests",
    "pfts": "pulmonary function tests", "bpp": "biophysical profile",
    # cardiovascular, respiratory, renal
    "mi": "myocardial infarction", "stemi": "st elevation myocardial infarction",
    "pe": "pulmonary embolism", "dvt": "deep vein thrombosis",
    "copd": "chronic obstructive pulmonary disease", "chf": "congestive heart failure",
    "hf": "heart failure", "cad": "coronary artery disease", "pad": "peripheral artery disease",
    "aaa": "abdominal aortic aneurysm", "htn": "hypertension", "vsd": "ventricular septal "
    "defect", "pda": "patent ductus arteriosus", "hcm": "hypertrophic cardiomyopathy",
    "svt": "supraventricular tachycardia", "psvt": "paroxysmal supraventricular tachycardia",
    "ards": "acute respiratory distress syndrome", "rds": "respiratory distress syndrome",
    "osa": "obstructive sleep apnea", "uti": "urinary tract infection",
    "ckd": "chronic kidney disease", "aki": "acute kidney injury",
    "esrd": "end stage renal disease", "hus": "hemolytic uremic syndrome",
    "bph": "benign prostatic hyperplasia",
    # endocrine, gastrointestinal, hepatic
    "dka": "diabetic ketoacidosis", "hhs": "hyperosmolar hyperglycemic state",
    "t2dm": "type 2 diabetes mellitus", "t1dm": "type 1 diabetes mellitus",
    "siadh": "syndrome of inappropriate antidiuretic hormone",
    "cah": "congenital adrenal hyperplasia", "pcos": "polycystic ovary syndrome",
    "gerd": "gastroesophageal reflux disease", "ibd": "inflammatory bowel disease",
    "ibs": "irritable bowel syndrome", "uc": "ulcerative colitis",
    "nafld": "nonalcoholic fatty liver disease", "pbc": "primary biliary cholangitis",
    "psc": "primary sclerosing cholangitis", "fap": "familial adenomatous polyposis",
    # rheumatology, immunology
    "sle": "systemic lupus erythematosus", "ra": "rheumatoid arthritis",
    "jia": "juvenile idiopathic arthritis", "gca": "giant cell arteritis",
    "pmr": "polymyalgia rheumatica", "cvid": "common variable immunodeficiency",
    "scid": "severe combined immunodeficiency", "xla": "x linked agammaglobulinemia",
    "gvhd": "graft versus host disease",
    # neurology, psychiatry
    "ms": "multiple sclerosis", "als": "amyotrophic lateral sclerosis",
    "pml": "progressive multifocal leukoencephalopathy", "sah": "subarachnoid hemorrhage",
    "tia": "transient ischemic attack", "cva": "stroke", "gbs": "guillain barre syndrome",
    "nms": "neuroleptic malignant syndrome", "nph": "normal pressure hydrocephalus",
    "cidp": "chronic inflammatory demyelinating polyneuropathy", "sdh": "subdural hematoma",
    "edh": "epidural hematoma", "ich": "intracerebral hemorrhage",
    "bppv": "benign paroxysmal positional vertigo", "sma": "spinal muscular atrophy",
    "dmd": "duchenne muscular dystrophy", "ftd": "frontotemporal dementia",
    "adhd": "attention deficit hyperactivity disorder",
    "ocd": "obsessive compulsive disorder", "ptsd": "post traumatic stress disorder",
    "gad": "generalized anxiety disorder", "mdd": "major depressive disorder",
    "odd": "oppositional defiant disorder",
    # infections
    "tb": "tuberculosis", "hiv": "human immunodeficiency virus", "cmv": "cytomegalovirus",
    "ebv": "epstein barr virus", "hsv": "herpes simplex virus",
    "vzv": "varicella zoster virus", "hpv": "human papillomavirus",
    "rsv": "respiratory syncytial virus", "pid": "pelvic inflammatory disease",
    "sti": "sexually transmitted infection", "std": "sexually transmitted disease",
    "bv": "bacterial vaginosis", "mrsa": "methicillin resistant staphylococcus aureus",
    "lgv": "lymphogranuloma venereum", "hfmd": "hand foot and mouth disease",
    # hematology, oncology
    "itp": "immune thrombocytopenia", "ttp": "thrombotic thrombocytopenic purpura",
    "dic": "disseminated intravascular coagulation", "hit": "heparin induced "
    "thrombocytopenia", "vwd": "von willebrand disease", "aml": "acute myeloid leukemia",
    "cll": "chronic lymphocytic leukemia", "cml": "chronic myeloid leukemia",
    "dlbcl": "diffuse large b cell lymphoma", "nhl": "nonhodgkin lymphoma",
    "mds": "myelodysplastic syndrome", "mgus": "monoclonal gammopathy of undetermined "
    "significance", "g6pd": "glucose 6 phosphate dehydrogenase",
    "hcc": "hepatocellular carcinoma", "rcc": "renal cell carcinoma",
    "nsclc": "nonsmall cell lung cancer", "sclc": "small cell lung cancer",
    "bcc": "basal cell carcinoma", "scc": "squamous cell carcinoma",
    "hnpcc": "hereditary nonpolyposis colorectal cancer",
    # skin, children
    "sjs": "stevens johnson syndrome", "ten": "toxic epidermal necrolysis",
    "dress": "drug reaction with eosinophilia and systemic symptoms",
    "ssss": "staphylococcal scalded skin syndrome", "sids": "sudden infant death syndrome",
    "scfe": "slipped capital femoral epiphysis", "pku": "phenylketonuria",
}

#: Abbreviations with several clinical readings: "pe" is a pulmonary embolism or a physical
#: examination, "ms" multiple sclerosis or mitral stenosis, "echo" and "temp" are words too.
#: Capitals do not settle them, so they are expanded only where the caller knows the context
#: (test names: ``expand_ambiguous``); a diagnosis name keeps them as written. ASD, BPD and
#: the like name two conditions and are not in the table at all.
AMBIGUOUS = frozenset({"pe", "ms", "ra", "hr", "temp", "echo"})

#: Acronyms spelled like an ordinary English word ("ten days", "hit by a car", "odd"): they
#: are expanded only when written in capitals ("TEN", "HIT", "DRESS"), whoever reads them.
WORDLIKE = frozenset({"ten", "hit", "odd", "dress", "pad", "cad", "gad"})

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

#: Greek letters spelled out, as names also write them ("β-thalassemia", "beta thalassemia"):
#: the ASCII fold would drop them and make alpha- and beta-thalassemia one name.
GREEK = {"\u03b1": "alpha", "\u03b2": "beta", "\u03b3": "gamma", "\u03b4": "delta",
         "\u03b5": "epsilon", "\u03ba": "kappa", "\u03bb": "lambda", "\u03bc": "mu"}
#: Greek letters as words: like a number, they name a subtype (alpha / beta thalassemia).
GREEK_SUBTYPES = frozenset(GREEK.values())
#: Roman numerals as they number types and classes ("type II", "factor V").
ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7",
         "viii": "8", "ix": "9", "xi": "11", "xii": "12", "xiii": "13"}  # "X" is a letter too
#: Words after which a single letter names a subtype ("hepatitis B", "hemophilia A").
LETTER_HEADS = frozenset({"hepatitis", "hemophilia", "influenza", "vitamin", "type", "group",
                          "factor", "class", "protein", "men", "c", "niemann", "pick"})
#: One name for the words that all say "malignant tumour" (ICD-10-CM: "malignant neoplasm").
CANCER = frozenset({"cancer", "carcinoma", "malignancy", "tumor", "neoplasm", "neoplasia"})
#: Heads of compound words that name a kind of tumour ("adenocarcinoma", "rhabdomyosarcoma").
COMPOUND_HEADS = ("carcinoma", "sarcoma")

#: Words that only link others, in names and in prose alike.
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "of", "and", "or", "with", "without", "in", "on", "to", "for", "from",
    "by", "at", "as", "is", "are", "be", "was", "were", "this", "that", "it", "its", "their",
    "his", "her", "your", "my", "our",
})
#: Head words so generic that they only count when nothing else names the condition.
GENERIC = frozenset({"disease", "disorder", "syndrome", "condition", "type", "form", "state",
                     "illness", "problem", "process", "infection"})
#: Words of a disease name that never identify the condition. Not "without": "panic disorder
#: without agoraphobia" is not panic disorder with agoraphobia.
FILLER = (FUNCTION_WORDS - {"without"}) | {"which", "who", "also", "known", "called", "aka",
                                           "patient", "s", "nos", "unspecified", "site",
                                           "specified"}
#: Uncertainty words around a name; they never belong to it.
HEDGES = frozenset({"possible", "possibly", "probable", "probably", "likely", "suspected",
                    "presumed", "presumptive", "potential", "potentially", "suggestive",
                    "consistent", "most", "diagnosis", "final", "definitive", "clinical"})
#: What induced a condition is not part of its name: the word before these goes with them.
INDUCED = frozenset({"induced", "related"})
#: Words of prose that carry no diagnostic meaning when comparing it with a name. Qualifiers
#: that change what a diagnosis names (primary/secondary, acute/chronic, type 1/2) are never
#: stopwords: "secondary X" is not "X" with a word dropped.
STOPWORDS = FUNCTION_WORDS | {"due", "likely", "most", "probable", "possible", "consistent",
                              "suggestive", "diagnosis", "diagnosed", "dx", "disease",
                              "disorder", "syndrome", "condition"}
#: The head words among :data:`STOPWORDS` that name a condition when nothing else does.
SOFT_HEADS = frozenset({"disease", "disorder", "syndrome", "condition"})
