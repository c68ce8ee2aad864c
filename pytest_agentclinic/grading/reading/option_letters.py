"""An option's letter before a name written in lower case ("C. eosinophilic gastritis").

The reader takes a letter and a full stop before a capital for an option's label ("C.
Asthma", round 4 of docs/grading.md) and before a lower-case word for a genus's initial ("C.
difficile colitis", "H. pylori gastritis"), since the two are written alike. A disease name
in lower case, as the Disease Ontology, MONDO and many clinicians write it, is the third
case: the words after the letter are then a name the terminology knows as it stands, which a
species epithet never opens ("difficile colitis", "pylori gastritis", "coli infection" name
nothing). So the letter labels the option when a known disease name follows it.
"""

from __future__ import annotations

import re

from ...core.text import bounded_cache
from ..terminology import CONDITION_SUFFIXES
from ..terms.concepts import default_terminology

# "C. eosinophilic gastritis": a capital letter of an option (A to E), a full stop, a space,
# then a lower-case word
_LETTER = re.compile(r"^\s*[A-E]\.\s+(?=[a-z])")
# Where a name ends inside the sentence: a join, a bracket or a clause after it.
_NAME_END = re.compile(r"\s*(?:[,;:()\[\]]|\s(?:with|and|or|due|secondary|vs\.?|versus|in|on"
                       r"|complicated|likely|given|as|from)\s|\.(?:\s|$)|$)")


def without_option_letter(text: str) -> str:
    """``text`` without an option's letter that labels a lower-case disease name after it
    ("C. eosinophilic gastritis"); unchanged when the letter is a genus's initial ("C.
    difficile colitis") or when what follows names no disease the terminology knows."""
    found = _LETTER.match(text)
    if found is None:
        return text
    rest = text[found.end():]
    # the name to the sentence's end or its first bracket or comma, else to its first join
    # ("microphthalmia with limb anomalies" is one name, "T with leukocytosis" a name and a
    # finding)
    whole = re.split(r"[,;:()\[\]\n]|\.(?:\s|$)", rest, maxsplit=1)[0].strip()
    end = _NAME_END.search(rest)
    first = rest[: end.start() if end is not None else len(rest)]
    return rest if _known_name(whole) or _known_name(first) else text


#: How a species epithet ends, as a Latin genitive or adjective does ("pneumoniae", "tetani",
#: "pertussis", "pyogenes", "aureus", "pallidum"): one such word after a letter is a species.
_EPITHET = ("ae", "i", "is", "es", "us", "um")


@bounded_cache
def _known_name(name: str) -> bool:
    """Whether ``name`` is a disease name of the terminology as written: a genus's initial is
    followed by one species epithet, never by a whole name. One word that ends as an epithet
    must also be a disease by its ending ("sarcoidosis"): some epithets are names of their
    disease too ("B. pertussis", "C. tetani")."""
    words = name.split()
    if len(words) == 1 and words[0].endswith(_EPITHET) \
            and not words[0].endswith(CONDITION_SUFFIXES):
        return False
    return bool(words) and default_terminology().known(name)
