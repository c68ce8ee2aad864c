"""How two disease names compare word by word: spelling slips, shared roots, head words and
qualifiers that split a disease into kinds.

The word-level half of :mod:`.equivalence`, which adds the terminology's knowledge on top.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import combinations

from ..core.lexicon import GREEK_SUBTYPES
from ..core.text import bounded_cache
from .terminology import Key, content

__all__ = [
    "LATIN_ADJECTIVES",
    "OPPOSITES",
    "SLIP_LENGTH",
    "Vocabulary",
    "covered",
    "head",
    "keeps_head",
    "letters",
    "listed",
    "lone_slip",
    "neighbours",
    "numbers",
    "qualifier_flip",
    "root",
    "similar",
    "slipped",
    "subtypes",
    "two_names",
]


#: Whether a normalised word is a word of some disease name the terminology knows.
Vocabulary = Callable[[str], bool]


def _knows_nothing(word: str) -> bool:
    return False


def similar(a: str, b: str, known: Vocabulary = _knows_nothing) -> bool:
    """Two normalised words are the same word, allowing a slip or an adjectival ending.

    A slip makes a word that is no word: two words the ``known`` vocabulary both knows are
    two words, however close ("entropion" / "ectropion", "esotropia" / "exotropia").
    """
    if a == b:
        return True
    if min(len(a), len(b)) < 5:
        return False
    if root(a) == root(b):
        return True  # "myeloid"/"myelogenous", "placenta"/"placental"
    # One slip ("occulsion", "scholein") in a long word; short words are too close to others
    # ("rubeola", "rubella"), and a digit is never a slip (type 1 / type 2, HIV1 / HIV2).
    # The lengths first (a word under 8 letters, or two lengths more than one letter apart,
    # is no slip): most pairs end there, before the scan of their letters for a digit, which
    # was ~5% of the grader's CPU under the profiler.
    if min(len(a), len(b)) < 8 or abs(len(a) - len(b)) > 1:
        return False
    if any(c.isdigit() for c in a + b):
        return False
    return _one_edit(a, b) and not (known(a) and known(b))


# Endings that turn one root into its adjective or noun without changing what it names.
# Latin nouns in "-is", "-ix" and "-ex" and adjectives in "-ional" too: the sources name one
# disease "Neoplasm, Pelvis" and "Pelvic Neoplasms", "carcinoma of the exocervix" and
# "exocervical carcinoma", "inhalation anthrax" and "inhalational anthrax".
_ENDINGS = ("ogenous", "genous", "ional", "ical", "ism", "ive", "ion", "ous", "oid", "eal",
            "ial", "ic", "al", "ar", "ary", "ia", "is", "ix", "ex", "a", "us", "um", "y", "e")


@bounded_cache
def root(word: str) -> str:
    """The word without an adjectival or noun ending, if a root of four letters is left."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            if ending == "is" and word.endswith(("sis", "tis")):
                # A disease ("nephritis", "psoriasis") is no noun of its adjective: a
                # "nephritic syndrome" is a disease of its own.
                continue
            return word[: -len(ending)]
    return word


def _one_edit(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (  # one substitution or one transposition
            i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:])
    return a[i:] == b[i + 1:]  # one insertion


#: A name this long (its content words run together) stays itself through a one-letter slip
#: in a short word ("pityriasis ruba pilaris"); shorter ones may become another.
SLIP_LENGTH = 15
#: The shortest word in which one slip is read as a slip of the pen (with no other known
#: word that close): shorter words are too close to others ("ileus", "ileum").
SLIP_WORD = 7


def slipped(g: Key, t: Key, known: Vocabulary = _knows_nothing) -> bool:
    """Two long names of the same words but one pair, a slip of one letter, of four letters or
    more and no digit or subtype letter, where one of the two is no known word."""
    g_only, t_only = g - t, t - g
    if len(g_only) != 1 or len(t_only) != 1 or not g & t:
        return False
    a, b = next(iter(g_only)), next(iter(t_only))
    return (sum(map(len, g)) >= SLIP_LENGTH and min(len(a), len(b)) >= 4 and a.isalpha()
            and b.isalpha() and _one_edit(a, b) and not (known(a) and known(b)))


@bounded_cache
def lone_slip(given: tuple[str, ...], truth: tuple[str, ...],
              known: Vocabulary = _knows_nothing) -> bool:
    """Whether ``given`` is the truth's words with a one-letter slip in one word of seven
    letters or more ("Achaeasia", "Graves disaase"), that slip being no known word, and no
    other known word one edit from it: exactly one known name is that close."""
    if len(given) != len(truth):
        return False
    diffs = [(a, b) for a, b in zip(given, truth, strict=True) if a != b]
    if len(diffs) != 1:
        return False
    a, b = diffs[0]
    if (len(b) < SLIP_WORD or not (a.isalpha() and b.isalpha()) or known(a)
            or not _one_edit(a, b)):
        return False
    return all(v == b or not known(v) for v in neighbours(a))


_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def neighbours(word: str) -> set[str]:
    """The words one edit from ``word``: a letter dropped, changed, added or two swapped."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1:] for a, b in splits if b}
            | {a + c + b[1:] for a, b in splits if b for c in _ALPHABET}
            | {a + c + b for a, b in splits for c in _ALPHABET}
            | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1})


def covered(words: Key, by: Key, known: Vocabulary = _knows_nothing) -> frozenset[str]:
    """The words of ``words`` that some word of ``by`` matches."""
    return frozenset(w for w in words if any(similar(w, v, known) for v in by))


def keeps_head(g: Key, truth: str, known: Vocabulary = _knows_nothing) -> bool:
    """Whether the answer's words keep the head word of the truth's name."""
    # A comma may close the name before a specifier ("social anxiety disorder, performance
    # only") or sit inside it ("chronic, non-bacterial prostatitis"): either head will do.
    heads = {head(truth), head(truth.split(",")[0])} - {""}
    return any(similar(h, w, known) for h in heads for w in g)


def head(name: str) -> str:
    """The head word of a disease name: its last content word before a post-modifier, or the
    noun before a Latin adjective or a subtype ("psoriasis vulgaris", "hemophilia A")."""
    before = re.split(r"\b(?:with|of|in|due to|secondary to|from|caused by)\b|[(;]",
                      name.lower(), maxsplit=1)[0]
    words = list(content(before) or content(name))
    while len(words) > 1 and (words[-1] in LATIN_ADJECTIVES or words[-1] in _COUNTERS
                              or subtypes(frozenset(words[-1:]))):
        words.pop()
    return words[-1] if words else ""


#: Words that count subtypes ("autism spectrum disorder, level 1"): never a head.
_COUNTERS = frozenset({"level", "type", "grade", "stage", "class", "group"})
#: Latin adjectives that follow the noun they qualify in disease names.
LATIN_ADJECTIVES = frozenset({
    "vulgaris", "vera", "pedis", "capitis", "corporis", "cruris", "manuum", "unguium", "faciei",
    "barbae", "versicolor", "nodosum", "multiforme", "migrans", "gravis", "tarda", "perstans",
    "chronica", "acuta", "congenita", "neonatorum", "infantum", "gravidarum", "simplex",
    "annulare", "planus", "rubra", "alba", "nigricans", "areata", "universalis", "totalis",
    "cutanea", "cutis", "lata", "tropica", "minor", "major",
})


#: Qualifiers that split a disease into kinds that exclude each other: an answer stating one
#: where the truth states another names a different disease, however many words they share.
OPPOSITES: tuple[tuple[frozenset[str], ...], ...] = tuple(
    tuple(frozenset(side.split()) for side in pair) for pair in (
        ("primary vera essential", "secondary"), ("acute", "chronic"), ("left", "right"),
        ("benign", "malignant cancer"), ("congenital", "acquired"), ("upper", "lower"),
        ("anterior", "posterior"), ("proximal", "distal"), ("internal", "external"),
        ("superior", "inferior"), ("central", "peripheral nephrogenic obstructive"),
        ("open", "closed closure"), ("unilateral", "bilateral"), ("active", "latent"),
        ("dry", "wet"), ("systolic", "diastolic"), ("ischemic", "hemorrhagic"),
        ("complete", "incomplete partial"), ("small", "nonsmall large"),
    )
)


def qualifier_flip(g: Key, t: Key) -> str | None:
    """The qualifier the answer flips against the truth ("secondary" for "primary"), if any.

    Numbers and subtype letters count as qualifiers too: type 1 is not type 2, hepatitis A
    is not hepatitis B.
    """
    for side_a, side_b in OPPOSITES:
        for mine, theirs in ((side_a, side_b), (side_b, side_a)):
            if g & mine and t & theirs and not (g & theirs):
                return f"the answer says {listed(g & mine)} where the truth says " \
                       f"{listed(t & theirs)}"
    # "Without" negates what follows: "X without Y" is not "X with Y" (whose key is X, Y).
    for mine, theirs, who in ((g, t, "the answer"), (t, g, "the truth")):
        if "without" in mine and "without" not in theirs and mine - {"without"} <= theirs:
            return f"{who} says without what the other name has"
    # Numbers and letters apart: type 2A is not type 2B, though both are type 2.
    for g_sub, t_sub in ((numbers(g), numbers(t)), (letters(g), letters(t))):
        if g_sub and t_sub and not g_sub & t_sub:
            return (f"the answer names subtype {listed(g_sub)} where the truth names "
                    f"{listed(t_sub)}")
    return None


def subtypes(words: Key) -> frozenset[str]:
    """The words of a key that number or letter a subtype ("2", "b_", "beta")."""
    return numbers(words) | letters(words)


def numbers(words: Key) -> frozenset[str]:
    """The numbers of a key ("type II" is 2)."""
    return frozenset(w for w in words if w.isdigit())


def letters(words: Key) -> frozenset[str]:
    """The subtype letters of a key, Latin ("hepatitis B": "b_") or Greek ("beta")."""
    return frozenset(w for w in words if (w.endswith("_") and len(w) == 2)
                     or w in GREEK_SUBTYPES)


def listed(words: Key) -> str:
    """Words of a key in a stable order, for reasons."""
    return " ".join(sorted(words))


def two_names(g: Key, tier_of: Callable[[Key], int | None]) -> int | None:
    """Whether the answer's words are two names of the truth's disease run together, each of
    two words or more: "epidermal inclusion cyst" is "epidermal cyst" and "inclusion cyst",
    both names the sources give the epidermoid cyst. ``tier_of`` gives the tier of a key's
    synonym link to the truth (None when it is no name of it); the result is the weaker tier
    of the best such pair, or None."""
    if not 3 <= len(g) <= 5:
        return None
    parts = [frozenset(p) for n in range(2, len(g)) for p in combinations(sorted(g), n)]
    tiers = {p: t for p in parts if (t := tier_of(p)) is not None}
    pairs = [max(tiers[a], tiers[b]) for a, b in combinations(tiers, 2) if a | b == g]
    return min(pairs, default=None)
