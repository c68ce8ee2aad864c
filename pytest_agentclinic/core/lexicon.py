"""The word tables of the one text normaliser (:mod:`.text`): spellings, abbreviations, word
forms and the word classes its views drop.

Data only: how the tables are applied is :func:`.text.tokens`. The two long tables, the
abbreviations and the word forms, are package data (``core/data/*.tsv``, read by
:mod:`.datafiles`). Every table here that :func:`.text.key` reads is covered by
:func:`.text.normaliser_fingerprint`, since the bundled disease terminology stores keys
computed with them.
"""

from __future__ import annotations

from .datafiles import data_file, read_pairs

#: British and variant spellings, unified inside words ("haemorrhage", "oesophagus").
SPELLINGS: dict[str, str] = {
    "haem": "hem", "anaem": "anem", "oesoph": "esoph", "leukaem": "leukem", "tumour": "tumor",
    "oedema": "edema", "paediatric": "pediatric", "faec": "fec", "diarrhoea": "diarrhea",
    "ischaem": "ischem", "coeliac": "celiac", "oestr": "estr",
    # the sulfur words' British "ph" ("sulphatase", "sulphonamide"; red team round 20)
    "sulph": "sulf",
}

#: Clinical abbreviations and acronyms, one table for tests and diagnoses alike, abbreviation
#: -> expansion (``data/abbreviations.tsv``). Ones that are also common words ("all", "us",
#: "cat") are left out; the entries that read two ways are marked in :data:`AMBIGUOUS` and
#: :data:`WORDLIKE`.
ABBREVIATIONS: dict[str, str] = read_pairs(data_file(__package__, "abbreviations.tsv"))

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
WORD_FORMS: dict[str, str] = read_pairs(data_file(__package__, "word_forms.tsv"))

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
