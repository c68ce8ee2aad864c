"""Other readings of a name than its words as written, each confirmed by the terminology.

Case authors write truths the sources do not list word for word: "EBS-Dowling Meara",
"IgA-mediated small vessel vasculitis". A clinician reads the first as epidermolysis bullosa
simplex, Dowling-Meara type, and the second as a kind of IgA vasculitis. The grader reads a
name these ways, and a reading of a name the terminology does not know whole counts only
when the terminology knows the name it gives:

* :func:`spelled_out`: an abbreviation in one name that spells the initials of consecutive
  words of the other ("EBS" beside "epidermolysis bullosa simplex") stands for those words;
* :func:`agent_of`: an organism's name alone ("Toxoplasma infection") is the disease named
  after it with "-osis" or "-iasis" ("toxoplasmosis", "schistosomiasis");
* :func:`binomial`: a genus written as its capital initial ("H. pylori gastritis") is the
  genus the other name spells out before the same species ("Helicobacter pylori");
* :func:`cores`: the largest names made of a name's own words, its head word kept, that the
  terminology knows ("IgA vasculitis" in "IgA-mediated small vessel vasculitis"); the name is
  a kind of each;
* :func:`given_names`: the names a slash joins into one ("chronic prostatitis/chronic pelvic
  pain syndrome"), each a name of the whole.

An eponym's possessive, bare and apostrophe-less forms are one name (:mod:`.eponym_words`).

An abbreviation the sources give for several diseases (:func:`expansions`: "HSP" is
hereditary spastic paraplegia and Henoch-Schönlein purpura, "BPD" borderline personality
disorder and bronchopulmonary dysplasia) is never spelled out toward the other name: which
disease it means is the writer's to say.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import combinations
from pathlib import Path

from ...core.datafiles import read_pairs
from ...core.lexicon import AMBIGUOUS
from ...core.text import bounded_cache
from ..terminology import (
    ABBREVIATIONS_FILE,
    CONDITION_SUFFIXES,
    GENERIC,
    Key,
    compact,
    key,
    tokens,
)
from .acronyms import spelled_names
from .concepts import Terminology, default_terminology, witness

__all__ = ["ADJECTIVE_ENDINGS", "NOUN_ENDINGS", "agent_of", "all_expansions", "ambiguous",
           "binomial", "compact_prefix", "cores", "disease_concept", "expansions", "given_names",
           "names_a_disease", "noun_and_adjective", "singular_letters", "spelled_out"]

_WORD = re.compile(r"[A-Za-z]+")
#: An abbreviation shorter than this is too often two things ("AD", "MS") to be spelled out.
MIN_LETTERS = 3
#: A name of more words than this is not searched for its cores (2^n subsets).
MAX_WORDS = 8


def spelled_out(name: str, other: str, terms: Terminology) -> str | None:
    """``name`` with an abbreviation spelled out by the initials of ``other``'s words, when
    the terminology knows the name so written and does not know ``name``, and the sources
    give the abbreviation for no other disease; a name that is an abbreviation alone the
    sources give for one disease only, as that disease ("AIH": autoimmune hepatitis); else
    None."""
    if terms.known(name):
        # known only as a bare word, its class word dropped ("SLOS" is the key of MeSH's
        # "SLO syndrome", and "slo" names nothing alone): the letters in capitals are the
        # abbreviation the sources give, read as it is alone
        # (a word names a disease alone as :func:`.name_parts.names_a_disease` reads it)
        word = next(iter(key(name))) if len(key(name)) == 1 else ""
        if not word or terms.one_word_name(word) or word.endswith(CONDITION_SUFFIXES):
            return None
        alone = _alone(name, terms)
        return alone if alone is not None and terms.known(alone) else None
    words = _WORD.findall(other)
    initials = "".join(w[0] for w in words).lower()
    for part in _WORD.findall(name):
        letters = part.lower()
        # A word of the sources' names is read as itself, unless written in capitals as an
        # acronym is ("PRP" beside "pityriasis rubra pilaris", though "PRP" is a word too).
        if len(letters) < MIN_LETTERS or (terms.is_word(letters) and not part.isupper()):
            continue
        start = initials.find(letters)
        if start < 0:
            continue
        spelled = " ".join(words[start:start + len(letters)])
        written = _written(name, part, spelled)
        # Known to the terminology, or the other name itself once spelled out ("late
        # infantile NCL" beside "late infantile neuronal ceroid lipofuscinosis").
        if ((terms.known(written) or key(written) == key(other))
                and not ambiguous(part, spelled, terms)):
            return written
    alone = _alone(name, terms)
    return alone if alone is not None and terms.known(alone) else None


#: A binomial's genus shortened to its initial ("H. pylori", "E coli"): microbiology writes
#: the genus in full at first use and as its capital initial after (the rules of bacterial
#: and botanical nomenclature).
_GENUS_INITIAL = re.compile(r"\b([A-Z])\.?\s+([a-z]{3,})\b")


def binomial(name: str, other: str) -> str | None:
    """``name`` with each genus written as its initial spelled out as ``other`` spells it
    ("H. pylori gastritis" beside "Helicobacter pylori gastritis"): the same species after a
    genus of that initial; None when ``other`` names no such organism."""
    written, changed = name, False
    for match in _GENUS_INITIAL.finditer(name):
        initial, species = match.groups()
        if species in GENERIC:
            continue  # a letter naming a type ("C syndrome"), not a genus
        # the genus as a word, capitalised or not, never an acronym ("CHIME")
        genus = rf"\b([{initial}{initial.lower()}][a-z]{{2,}})\s+{species}\b"
        full = re.search(genus, other)
        # a genus, not the disease named after it ("Ehrlichiosis chaffeensis")
        if full is not None and not full.group(1).lower().endswith(CONDITION_SUFFIXES):
            written = written.replace(match.group(0), f"{full.group(1)} {species}", 1)
            changed = True
    return written if changed else None


@lru_cache(maxsize=1)
def _abbreviations(path: Path = ABBREVIATIONS_FILE) -> dict[str, tuple[str, ...]]:
    if not path.exists():
        return {}
    return {letters: tuple(names.split("|")) for letters, names in read_pairs(path).items()}


def all_expansions() -> dict[str, tuple[str, ...]]:
    """Every abbreviation the sources give (lower case), with the diseases it stands for."""
    return dict(_abbreviations())


def expansions(abbreviation: str) -> tuple[str, ...]:
    """The diseases the sources give ``abbreviation`` for, one name each (empty when none)."""
    return _abbreviations().get(abbreviation.lower(), ())


def ambiguous(abbreviation: str, reading: str, terms: Terminology) -> bool:
    """Whether ``abbreviation`` stands for more than one disease: the sources give it for
    several, or for one that ``reading`` is not. Names the terminology links (one a synonym
    or a kind of the other, as "acute lichenoid pityriasis" and its febrile ulceronecrotic
    kind) are one disease, and so is a name whose concept has a name the abbreviation spells
    that is linked so (:func:`.acronyms.spelled_names`); a reading that shares a word with the
    sources' disease is that disease (the terminology may not know its every name); a name
    of ICD-10-CM's chapters R to Z only (a finding, an injury, a health factor) is no
    second disease beside the one the terminology links to ``reading``."""
    senses: list[list[Key]] = []
    named = expansions(abbreviation)
    diseases = [n for n in named if names_a_disease(n, terms)]
    for name in diseases or named:
        name_key = key(name)
        spelled = [name_key, *(key(n) for n in spelled_names(abbreviation, name))]
        home = next((s for s in senses
                     if any(_one_sense(k, m, terms) for m in s for k in spelled)), None)
        if home is None:
            senses.append(spelled)
        else:
            home.extend(spelled)
    if len(senses) != 1:
        return len(senses) > 1
    read = key(reading)
    if any(_one_sense(read, m, terms) for m in senses[0]):
        return False
    # A word shared is no link: beside a name of no disease the letters read two ways, and
    # letters the sources give for a finding only ("CRP") are that finding's.
    return len(diseases) != len(named) or not any(read & m for m in senses[0])


def _one_sense(a: Key, b: Key, terms: Terminology) -> bool:
    if a == b:
        return True
    link = terms.link(a, b)
    return link is not None and link.kind != "sibling"


#: ICD-10-CM chapters that name no disease: symptoms and findings (R), injuries and
#: poisonings (S, T), external causes (V to Y) and factors influencing health (Z).
_NOT_DISEASE_CHAPTERS = tuple("RSTUVWXYZ")


def disease_concept(ident: str) -> bool:
    """Whether the concept ``ident`` names a disease: any but ICD-10-CM's chapters and blocks
    (``ICD:1``, ``ICD:A00-A09``: they group diseases and name none) and its codes of chapters
    R to Z (findings, injuries, external causes, factors influencing health)."""
    if not ident.startswith("ICD:"):
        return True
    code = ident[4:]
    return code[:1].isalpha() and "-" not in code and not code.startswith(_NOT_DISEASE_CHAPTERS)


def names_a_disease(name: str, terms: Terminology) -> bool:
    """Whether some concept of ``name`` is a disease (:func:`disease_concept`); a name the
    terminology does not know is taken at its word."""
    idents = terms.concepts(name)[1]
    return not idents or any(disease_concept(i) for i in idents)


#: An abbreviation alone: letters, then letters or digits ("SSc", "MG", "NF1", "A1ATD").
_ALONE = re.compile(r"[A-Za-z][A-Za-z0-9]{1,7}")


def singular_letters(part: str) -> str:
    """An initialism's plural written with a small "s" after its capitals ("AVMs", "UTIs"),
    the usual plural of an abbreviation in English typography, as the letters the sources
    list ("AVM"); anything else as it is."""
    if (_PLURAL.fullmatch(part) is not None and not expansions(part)
            and expansions(part[:-1])):
        return part[:-1]
    return part


_PLURAL = re.compile(r"[A-Z][A-Z0-9]{1,6}s")


def _alone(name: str, terms: Terminology) -> str | None:
    """The one disease the sources give a name for when the name is an abbreviation alone,
    written in capitals ("SSc", "AIH", "MG", "NF1"), and they give it for one disease only.
    Two capitals are enough here (not within a name, :data:`MIN_LETTERS`): written alone,
    the letters are the whole answer, and the sources' list says what they stand for."""
    part = singular_letters(name.strip())
    if (not _ALONE.fullmatch(part) or sum(c.isupper() for c in part) < 2
            or part.lower() in AMBIGUOUS):
        return None
    found = expansions(part)
    return found[0] if found and not ambiguous(part, found[0], terms) else None


def _written(name: str, part: str, spelled: str) -> str:
    # An abbreviation opening the name heads it; what follows says which kind ("EBS-Dowling
    # Meara": epidermolysis bullosa simplex, Dowling Meara), as a comma says in a name.
    rest = name.strip()
    if rest.startswith(part) and rest[len(part):].strip(" -"):
        return f"{spelled}, {rest[len(part):].strip(' -')}"
    return re.sub(rf"\b{re.escape(part)}\b", spelled, name, count=1)


@bounded_cache  # asked for each answer against one truth: up to 2^8 lookups
def cores(name: str, terms: Terminology) -> tuple[str, ...]:
    """The largest names of two or more of ``name``'s words, its head (last) word among them,
    that the terminology knows, when it does not know ``name`` itself; each is written in the
    name's own word order."""
    words = tokens(name)
    whole = key(name)
    if not words or len(whole) > MAX_WORDS or terms.known(whole):
        return ()
    head = words[-1]
    if head not in whole:
        return ()
    rest = sorted(whole - {head})
    found: list[Key] = []
    for size in range(len(rest) - 1, 0, -1):
        for chosen in combinations(rest, size):
            candidate = frozenset((head, *chosen))
            if not any(candidate < f for f in found) and terms.known(candidate):
                found.append(candidate)
    return tuple(" ".join(w for w in words if w in k) for k in found)


def given_names(given: str) -> list[str]:
    """The given name, then each name a slash joins into it.

    A slash names one condition twice ("chronic prostatitis/chronic pelvic pain syndrome",
    DSM-5's "depersonalization/derealization disorder"), so either name may match. A head
    word after single-word alternatives belongs to each ("depersonalization disorder"), as
    does a modifier before them ("thyroid nodule/cancer": "thyroid cancer").
    """
    parts = [p.strip() for p in given.split("/")]
    if len(parts) < 2 or not all(parts):
        return [given]
    words = [p.split() for p in parts]
    names = parts
    if len(words[-1]) > 1 and all(len(w) == 1 for w in words[:-1]):
        head = " ".join(words[-1][1:])
        names = [_shared(p, f"{p} {head}") for p in parts[:-1]] + [parts[-1]]
    elif len(words[0]) > 1 and all(len(w) == 1 for w in words[1:]):
        modifier = " ".join(words[0][:-1])
        names = [parts[0]] + [_shared(p, f"{modifier} {p}") for p in parts[1:]]
    # A fragment too short to name anything ("Anti-SSA/Ro") is not a name of its own.
    return [given, *(n for n in names if len(compact(n)) >= 4)]


def _shared(bare: str, completed: str) -> str:
    # The head or modifier is shared unless the word names a disease of its own and the
    # completed name none ("panic disorder/pheochromocytoma" is no "panic pheochromocytoma").
    terms = default_terminology()
    return bare if terms.known(bare) and not terms.known(completed) else completed


#: What a noun may end in beyond the stem its adjective keeps ("test-is", "ovar-y",
#: "uter-us", "laryn-x", "sple-en", "clavic-le", "umbilic-us"), and an adjective's endings
#: ("testicular", "ovarian", "uterine", "umbilical"). Shared with the build, which learns
#: the pairs many concepts show (``tools/terminology_mining.py``).
NOUN_ENDINGS = frozenset({"", "a", "e", "y", "s", "x", "us", "um", "is", "ix", "ex", "en", "on",
                          "le", "ia", "ea"})
ADJECTIVE_ENDINGS = ("al", "ic", "ar", "ine", "ian", "eal", "ial", "ous", "ary", "ile", "iac")


def noun_and_adjective(noun: str, adjective: str) -> bool:
    """Whether ``adjective`` is the adjective of ``noun`` by form: it keeps the noun's stem,
    all but a noun ending, and adds at most five letters of an adjective's ending ("clavicle"
    / "clavicular", "umbilicus" / "umbilical"); a disease's name ("lymphoma", "-itis") has no
    adjective here ("lymphatic" is no adjective of lymphoma)."""
    if not (noun.isalpha() and adjective.isalpha()) or min(len(noun), len(adjective)) < 4:
        return False
    if (not adjective.endswith(ADJECTIVE_ENDINGS) or len(noun) > len(adjective)
            or noun.endswith(CONDITION_SUFFIXES)):
        return False
    shared = len(compact_prefix(noun, adjective))
    return shared >= 3 and noun[shared:] in NOUN_ENDINGS and len(adjective) - shared <= 5


#: What a genus ends in beyond the stem its disease keeps ("Toxoplasm-a", "Cryptococc-us",
#: "Blastomyc-es", which the plural fold reads "blastomyce", "Leishmania"), and what the
#: disease adds to that stem ("toxoplasm-osis", "schistosom-iasis", "giardi-asis",
#: "coccidioid-omycosis", "leishmania-sis").
GENUS_ENDINGS = frozenset({"", "a", "ia", "us", "um", "e", "es", "is", "ides"})
AGENT_DISEASE_ENDINGS = frozenset({"osis", "iasis", "asis", "sis", "iosis", "mycosis",
                                   "omycosis"})
#: An adjective is no organism's name ("fibrous" and fibrosis, "amyloid" and amyloidosis).
_ADJECTIVE = (*ADJECTIVE_ENDINGS, "oid", "ed", "ing")
#: An organism written as one: its infection or infestation ("Schistosoma infection").
_AGENT_WRITTEN = re.compile(r"\b(?:infect|infest)", re.I)
#: A disease's own endings ("Schistosoma" and "Trypanosoma" end in "-oma" as genera).
_DISEASE_ENDS = ("osis", "iasis", "itis", "emia", "pathy")
#: The shortest stem a genus and its disease share.
MIN_STEM = 5


def agent_of(name: str, organism: Key, disease: Key, terms: Terminology | None = None, *,
             unjoined: bool = False) -> str | None:
    """The disease named after an organism, or None: one name (``name``, keyed
    ``organism``) is the organism alone, written with "infection" or "infestation" or as a
    word of the terminology's names ("Toxoplasma infection", "Strongyloides"; the key drops
    "infection"), and the other the disease the nomenclature derives from the organism's
    name with "-osis" or "-iasis" ("toxoplasmosis", "schistosomiasis", "blastomycosis"), a
    disease the terminology knows and does not tell apart from the organism's infection.
    A species is not read so: "Schistosoma mansoni infection" is one kind of
    schistosomiasis. ``unjoined``: two sources' concepts of the two that sit side by side
    (siblings, one from each source, not joined into one cluster) are one disease too."""
    if len(organism) != 1 or len(disease) != 1:
        return None
    genus, named = next(iter(organism)), next(iter(disease))
    if (genus.endswith(_DISEASE_ENDS) or genus.endswith(_ADJECTIVE)
            or not named.endswith(("osis", "iasis"))):
        return None
    stem = len(compact_prefix(genus, named))
    if (stem < MIN_STEM or genus[stem:] not in GENUS_ENDINGS
            or named[stem:] not in AGENT_DISEASE_ENDINGS):
        return None
    terms = terms or default_terminology()
    if not terms.known(disease) or not (_AGENT_WRITTEN.search(name) or terms.is_word(genus)):
        return None  # no disease is named, or no organism (a slip: "psoria")
    link = terms.link(organism, disease)
    # The sources may tell the two apart ("Borrelia infections" above Lyme borreliosis).
    if link is None or link.kind == "synonym":
        return named
    apart = {witness(link.given), witness(link.truth)}
    return named if unjoined and link.kind == "sibling" and len(apart) == 2 else None


def compact_prefix(a: str, b: str) -> str:
    """The longest start two words share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
