"""How a name given beside the main diagnosis relates to it: a refinement, another name of
it, or another diagnosis.

Extraction (:mod:`.extract`) reads the answer's shape; some shapes are read only with the
terminology's help: "X, possibly Y" (a kind of X, or another disease), "X (Y)" and "X (or Y)"
(another name of X, or another disease) and "X/Y" (two names of one condition, or two).
"""

from __future__ import annotations

import re
from typing import Literal

from ..terminology import FILLER, tokens
from ..terms.concepts import Terminology, default_terminology
from ..terms.equivalence import compare
from ..terms.kinds import INJURIES_AND_STATES
from ..terms.readings import expansions, given_names
from ..wording import head

__all__ = ["abbreviates", "glosses_main", "hedged_role", "one_condition",
           "parenthesized_role", "restating_role", "slashed", "two_possible"]

#: What a companion name turns out to be.
CompanionRole = Literal["refinement", "alternative", "alias", "beside", "claimed"]


# "X/Y overlap (syndrome)": the features of two diseases together, two diagnoses present
# (the paper's step 1: "more than one diagnoses present" is multiple), unless the
# terminology knows the overlap whole (red team round 7)
_OVERLAP = re.compile(r"(.+/.+?)\s+overlap(?:\s+(?:syndrome|disorder))?", re.I)


def slashed(phrase: str) -> list[str]:
    """The names a slash joins: one condition named twice stays one phrase ("chronic
    prostatitis/chronic pelvic pain syndrome", "whooping cough/pertussis"); names that share
    no word and are no synonyms, or that the terminology surely tells apart, are two
    ("rosacea/lupus"), and so are two names of an overlap ("X/Y overlap")."""
    overlap = _OVERLAP.fullmatch(phrase.strip())
    if overlap is not None and not default_terminology().known(phrase):
        return [p.strip() for p in overlap.group(1).split("/")]
    names = given_names(phrase)[1:]
    apart = any(_apart(a, b) for i, a in enumerate(names) for b in names[i + 1:])
    parts = [p.strip() for p in phrase.split("/")]
    words = [_written(p) for p in parts]
    if apart or _written_apart(parts, words):
        return names
    return parts if _not_shared(phrase, parts, words, names) else [phrase]


def _not_shared(phrase: str, parts: list[str], words: list[set[str]], names: list[str]) -> bool:
    """Whether two names a slash joins, sharing no written word, are two though a word of
    one side was read as shared by the other: the one-word side names a disease alone
    ("lung cancer/toxoplasmosis": no "lung toxoplasmosis" was meant), or the name it makes
    with the shared word is one the terminology does not know ("vitamin B12
    deficiency/ulnar", "melanonychia/Boerhaave syndrome"). A slash names one condition
    twice only where the shared word makes a known name of a word that is none alone
    (DSM-5's "depersonalization/derealization disorder"), or where the phrase is known
    whole."""
    terms = default_terminology()
    if len(parts) != 2 or not all(words) or words[0] & words[1] or terms.known(phrase):
        return False
    completed = [n for n in names if n not in parts]
    single = [p for p in parts if len(p.split()) == 1]
    if not completed or compare(parts[0], parts[1]).kind in ("same", "synonym"):
        return False
    return (any(terms.one_word_name(p.lower()) for p in single)
            or not all(terms.known(n) for n in completed))


def _written_apart(parts: list[str], words: list[set[str]]) -> bool:
    """Whether a slash joins names each written whole, of two words or more, that share no
    written word and are no synonyms ("phyllodes tumor/lung cancer"): the normaliser reads
    "tumor" and "cancer" alike, but each name has its own head; one head written once
    ("depersonalization/derealization disorder") joins one condition's names."""
    # two words or more on each side, as written ("attention-deficit/hyperactivity disorder"
    # joins one word to a name)
    if len(parts) != 2 or any(len(p.split()) < 2 for p in parts):
        return False
    if words[0] & words[1] and not _state_beside(parts):
        return False
    return compare(parts[0], parts[1]).kind not in ("same", "synonym")


def _written(name: str) -> set[str]:
    """A name's words as written, without linking words ("of the" is no shared word)."""
    return {w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in FILLER}


def _state_beside(parts: list[str]) -> bool:
    """Whether one name is an injury or a state like pregnancy by its head word and the other
    is not ("twin pregnancy/atopic eruption of pregnancy"): a second condition beside a
    disease, as docs/grading.md reads it after a comma, though a word is shared."""
    states = [head(p) in INJURIES_AND_STATES for p in parts]
    return states[0] != states[1]


def _apart(a: str, b: str) -> bool:
    # Two names of one condition share a word ("depersonalization/derealization disorder")
    # or are synonyms ("whooping cough/pertussis").
    relation = compare(a, b)
    if relation.kind in ("same", "synonym"):
        return False
    if not set(tokens(a)) & set(tokens(b)):
        return True
    return relation.kind in _APART and relation.sure and _known(a) and _known(b)


def _known(name: str) -> bool:
    return default_terminology().known(name)


_APART = frozenset({"different", "sibling", "qualifier-flip"})
_DANGLING = re.compile(r"\b(?:or|nor|and/or|vs\.?|versus)\s*$", re.I)


def one_condition(a: str, b: str) -> bool:
    """Whether two labelled answers name one condition: the same name, a synonym, or one a kind
    of the other ("Most likely diagnosis: viral conjunctivitis / Final diagnosis: adenoviral
    conjunctivitis")."""
    return any(compare(x, y).kind in ("same", "synonym", "broader") for x, y in ((a, b), (b, a)))


def hedged_role(name: str, main: str) -> CompanionRole:
    """A hedged companion is a refinement when it is a kind of the main diagnosis ("IBD,
    possibly Crohn disease": IBD, perhaps of that kind), else an alternative to it ("anxiety,
    possibly hyperthyroidism")."""
    # "X or possibly Y" is a disjunction whatever Y is.
    below = (bool(main) and not _DANGLING.search(main)
             and compare(name, main).kind == "narrower")
    return "refinement" if below else "alternative"


def two_possible(name: str, main: str) -> bool:
    """Whether "``main``, probably ``name``" hedges between two diseases: both known, no
    written word shared, surely told apart (different, siblings), and classified apart by
    every source (:func:`_classed_together`): "Anterior cord syndrome, most likely IgA
    deficiency", an injury of the spinal cord and a disorder of immunity. The paper's step 1
    grades "more than one possible diagnosis" as multiple. Within one class a likelihood
    word narrows the first name more often than it offers a second ("Pituitary tumor, likely
    a craniopharyngioma", "Lung cancer (most likely squamous cell carcinoma)"), which the
    recorded grader accepted: read as a refinement, as round 18 of docs/grading.md
    measured."""
    if not main or _DANGLING.search(main) or _written(name) & _written(main):
        return False
    relation = compare(name, main)
    return (relation.kind in _APART and relation.sure and _known(name) and _known(main)
            and not _classed_together(name, main))


#: How far below its source's top a shared class must be to class two diseases together:
#: ICD-10-CM's blocks ("Mood [affective] disorders", F30-F39) are one level below its
#: chapters; the other sources open with classes of every disease ("disease", "human
#: disease", "disease of anatomical entity") before an organ's or a process's.
_CLASS_DEPTH = {"ICD": 1}
_OTHER_DEPTH = 3


def _classed_together(a: str, b: str) -> bool:
    """Whether some source files the two names' diseases under one class below its top
    levels (:data:`_CLASS_DEPTH`): "Lung Diseases" for pneumonia and bronchitis."""
    terms = default_terminology()
    return not _classes(a, terms).isdisjoint(_classes(b, terms))


def _classes(name: str, terms: Terminology) -> set[str]:
    found: set[str] = set()
    for ident in terms.concepts(name)[1]:
        for member in terms.backend.members_of(terms.cluster(ident)) or (ident,):
            for ancestor in (member, *terms.ancestors(member)):
                depth = max(terms.ancestors(ancestor).values(), default=0)
                if depth >= _CLASS_DEPTH.get(ancestor.partition(":")[0], _OTHER_DEPTH):
                    found.add(terms.cluster(ancestor))
    return found


def parenthesized_role(name: str, main: str, named: str, *, offered: bool) -> CompanionRole:
    """A name in parentheses is an alias when it surely names the main diagnosis again (same
    name, synonym, or an abbreviation of it or of ``named``, the statement it follows); else
    one ``offered`` with "or" is an alternative to it, and a bare one another condition named
    beside it ("rosacea (lupus)")."""
    relation = compare(name, main) if main else None
    if ((relation is not None and relation.sure and relation.kind in ("same", "synonym"))
            or abbreviates(name, main) or abbreviates(name, named) or expands(name, main)):
        return "alias"
    return "alternative" if offered else "beside"


def expands(name: str, short: str) -> bool:
    """Whether ``name`` in a bracket after ``short`` writes out the abbreviation ``short`` is,
    in capitals ("GBM (glioblastoma)"): the letters spell the name (:func:`abbreviates`), or
    the sources give them for it ("MC (cryoglobulinemic vasculitis)": their list, or a name
    of its concept). The usual way to define an abbreviation (the bracket gives its long
    form), read as "T (ABBR)" is (red team round 20)."""
    short = short.strip()
    if (re.fullmatch(r"[A-Z][A-Za-z0-9]{1,7}", short) is None
            or sum(c.isupper() for c in short) < 2):
        return False
    return abbreviates(short, name) or any(
        (relation := compare(name, given)).sure and relation.kind in ("same", "synonym")
        for given in (*expansions(short), *_known_as(short)))


def _known_as(short: str) -> list[str]:
    """The preferred names of the concepts a source names ``short`` (as written)."""
    terms = default_terminology()
    return [terms.backend.label_of(i) for i in terms.concepts(short)[1]]


def abbreviates(short: str, name: str) -> bool:
    """Whether ``short`` is an abbreviation of ``name``: one word of 2 to 8 letters or digits
    that starts as the name does and spells some of its letters in order ("EGPA" of
    eosinophilic granulomatosis with polyangiitis, "DRESS", "IC")."""
    letters, spelled = short.strip().lower(), name.lower()
    if not re.fullmatch(r"[a-z][a-z0-9]{1,7}", letters) or not spelled.startswith(letters[0]):
        return False
    rest = iter(spelled)
    return all(c in rest for c in letters)


#: How a name said to restate the main diagnosis may relate to it (by the terminology).
_RESTATES = frozenset({"same", "synonym", "broader", "narrower"})


def restating_role(name: str, main: str, named: str, role: CompanionRole) -> CompanionRole:
    """A name the answer says is the main diagnosis again ("also known as Y", "i.e. Y", "a
    subtype of Y", "specifically Y") keeps ``role`` only when the terminology surely links
    the two (or it abbreviates them). Otherwise another name or class (``alias``: "also
    known as", "i.e.", "a subtype of") is only *claimed*: the answer says it names X again,
    so it is no second diagnosis, and since the terminology does not confirm it, no match
    either ("mucormycosis (also known as black fungus)": the paper's step 1 returns the one
    diagnosis the answer gives). A kind named with "specifically" (``refinement``) that the
    terminology does not place is another condition named beside X."""
    # The answer claims the link, so one source stating it will do; the statement's whole
    # body may be the name ("Granulomatosis with polyangiitis (also known as ...)").
    for other in {main, named} - {""}:
        relation = compare(name, other)
        if ((relation.sure and relation.kind in _RESTATES and not relation.family)
                or abbreviates(name, other)):
            return role
    return "claimed" if role == "alias" else "beside"


# What may stand between the main name and another name the answer gives it: a bracket, a
# comma, "also known as", "i.e." ("X (Y)", "X, also known as Y"); any other word makes Y a
# gloss of another name ("W with features of T (ABBR)", "W due to T (lay name)").
_GLOSS_GAP = re.compile(r"[\s,(\[]*(?:(?:also\s+)?(?:known|referred\s+to)\s+as|aka|a\.k\.a\.?|"
                        r"i\.e\.?|that\s+is)?[\s,:(\[]*(?:(?:an?|the)\s+)?", re.I)
_GLOSS_GAP_CHARS = 40


def glosses_main(statement: str, main: str, gloss: str) -> bool:
    """Whether ``gloss`` stands right after the main diagnosis ``main`` in ``statement``, as
    another name of it ("X (Y)", "X, also known as Y"), not of a name after it."""
    statement = statement.lower()
    main_at = statement.find(main.lower())
    end, at = main_at + len(main), statement.find(gloss.lower(), max(main_at, 0))
    # (a gap longer than any of those words is no gloss's: the pattern's two runs of spaces
    # would try every split of a long one)
    return (main_at >= 0 and 0 <= at - end <= _GLOSS_GAP_CHARS
            and _GLOSS_GAP.fullmatch(statement, end, at) is not None)
