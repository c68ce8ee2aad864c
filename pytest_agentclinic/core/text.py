"""The one text normaliser, shared by the grader, the deterministic agents and the metrics.

:func:`tokens` is the only tokenizer: it folds accents and spellings, drops possessives, joins
"non-" to its word, marks subtype letters, expands abbreviations
(:data:`.lexicon.ABBREVIATIONS`), folds plurals (:func:`stem`) and, for names, makes Roman
numerals Arabic, splits compound tumour names and unifies word forms. Everything else is a
view over it:

- prose and test names, for the agents and metrics: :func:`words`, :func:`content_words`,
  :func:`key_words`;
- disease names, for the grader and the bundled terminology: :func:`content`, :func:`key`,
  :func:`compact`.

The two readings differ only by the options of :func:`tokens`: the agents expand ambiguous
abbreviations (``expand_ambiguous``: in a test name "echo", "hr" and "temp" can only be the
test; in a diagnosis name "MS" may be mitral stenosis) and leave out the forms of disease
names (``name_forms``: "type II" is "type 2", "renal" is "kidney", "carcinoma" is "cancer"),
which only pay off when two names are compared.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import unicodedata
import weakref
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from functools import _lru_cache_wrapper

from .lexicon import (
    ABBREVIATIONS,
    AMBIGUOUS,
    CANCER,
    COMPOUND_HEADS,
    FILLER,
    GENERIC,
    GREEK,
    HEDGES,
    INDUCED,
    LETTER_HEADS,
    ROMAN,
    SOFT_HEADS,
    SPELLINGS,
    STOPWORDS,
    WORD_FORMS,
    WORDLIKE,
)

#: Entries each cache of per-text work keeps (here, in the grader and in the metrics): the
#: texts of the items in flight, which ask again and again, and the names every case shares.
#: Unbounded (or 262,144 entries), each cache grew with every new case's text: ~7 KB an item,
#: more than pytest's own items and reports, in an 8,000-item run. (:func:`tokens` and
#: :func:`content` are bounded at the end of this module: their source, decorators included,
#: is part of :func:`normaliser_fingerprint`, which the shipped terminology's keys carry.)
CACHE_ENTRIES = 2048
#: Entries of :func:`tokens`' and :func:`content`'s caches. Their texts are mostly one-off
#: (an encounter's utterances, a case's sentences), asked again only within the encounter:
#: replayed (``benchmarks/bench_10k.py --probe caches`` with ``MEM_PROBE_KEYS=1``), offline
#: 16-turn encounters hit :func:`tokens` 88.2% at 64 entries as at 2,048, and the grader on
#: the recorded GPT-4 CRAFT-MD run 0.0% at 256 as at 2,048 (:func:`content`: 1.0% at 2,048,
#: 0.0% at 256). At 2,048, :func:`tokens` filled in each xdist worker of a 10,000-encounter
#: run with texts nothing asked for again (~0.4 KB an entry).
TEXT_ENTRIES = 256

_T = TypeVar("_T")
#: Every cache made by :func:`bounded_cache` (weakly: an index's own caches go with it).
_CACHES: weakref.WeakSet[_lru_cache_wrapper[Any]] = weakref.WeakSet()


def bounded_cache(func: Callable[..., _T], maxsize: int = CACHE_ENTRIES) -> _lru_cache_wrapper[_T]:
    """``func`` memoised in ``maxsize`` entries, in a cache that :func:`clear_caches`
    empties."""
    cached = lru_cache(maxsize=maxsize)(func)
    _CACHES.add(cached)
    return cached


def clear_caches() -> None:
    """Empty every cache of per-text work. Once a run's encounters are over, nothing asks
    again; the final reports, which read every record back, reuse the memory (at 8,000
    items, the caches' entries were ~1 KB an item of the run's peak)."""
    for cache in list(_CACHES):
        cache.cache_clear()

__all__ = ["ABBREVIATIONS", "FILLER", "GENERIC", "HEDGES", "STOPWORDS", "Key", "compact",
           "content", "content_words", "fold", "key", "key_words", "normaliser_fingerprint",
           "sentences", "stem", "terminal_safe", "tokens", "variants", "words"]

#: A name's order-free comparison key: the set of its identifying words.
Key = frozenset[str]

_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_WORD = re.compile(r"[a-z0-9]+")
_CASED_WORD = re.compile(r"[A-Za-z0-9]+")
_POSSESSIVE = re.compile(r"(?<=[A-Za-z])'[sS]?(?![A-Za-z])")
_PAREN_WORD = re.compile(r"\(\s*[A-Za-z]+\s*\)")
_GREEK = re.compile(f"[{''.join(GREEK)}{''.join(GREEK).upper()}\u00b5]")
# A numbered subtype with its letter ("type IIa", "MEN 2A"): the number, then the letter.
# "ic" and "id" are words of their own (interstitial cystitis, the id reaction).
_NUMBERED = re.compile(r"(\d{1,2}|i{1,3})([a-d])")
# "non-Hodgkin" is one word: split, "non" would leave "Hodgkin" to match Hodgkin.
_NON = re.compile(r"\bnon[\s-]+(?=[a-z])", re.IGNORECASE)


def _ascii(text: str) -> str:
    # Dashes outside ASCII would vanish in the ASCII fold and glue words together; so would
    # Greek letters, which name subtypes.
    text = _DASHES.sub("-", text)
    if not text.isascii():
        text = _GREEK.sub(_greek, text)
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _greek(letter: re.Match[str]) -> str:
    # NFKC makes the micro sign the Greek mu.
    return f" {GREEK[unicodedata.normalize('NFKC', letter.group(0)).lower()]} "


def _spell(text: str) -> str:
    for variant, unified in SPELLINGS.items():
        text = text.replace(variant, unified)
    return text


def fold(text: str) -> str:
    """Lower-case, strip accents and unify spelling variants (for substring comparisons;
    word comparisons go through :func:`tokens`)."""
    return _spell(_ascii(text).lower().replace("'s ", " "))


def stem(word: str) -> str:
    """Plural folding: English ("ulcers", "bodies") and Latin ("bullae", "nevi", "emboli")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "xis")):
        return word[:-1]
    if len(word) > 4 and word.endswith("ae"):
        return word[:-1]
    if len(word) > 4 and word.endswith("i") and word[-2] not in "aeiou":
        return word[:-1] + "us"
    return word


@lru_cache(maxsize=262144)
def tokens(text: str, *, expand_ambiguous: bool = False,
           name_forms: bool = True) -> tuple[str, ...]:
    """The normalised word sequence of ``text``: the one tokenizer every view reads.

    Always: accents and spellings folded, possessives dropped, "non-" joined to its word, a
    letter after a subtype head marked ("hepatitis B": "b_"), abbreviations expanded, plurals
    folded (:func:`stem`). Two options:

    ``expand_ambiguous``: also expand the abbreviations that read two ways
    (:data:`.lexicon.AMBIGUOUS`: "echo", "hr", "temp", "pe", "ms"), whatever their case.
    Right for text about tests, where they can only be the test; off for diagnosis names,
    where "MS" may be mitral stenosis and "PE" a physical examination. Acronyms spelled like
    an ordinary word (:data:`.lexicon.WORDLIKE`: "TEN", "HIT") count only in capitals or
    alone in parentheses, whichever the option.

    ``name_forms``: unify the forms of disease names: Roman numerals made Arabic ("type II"),
    word forms unified (:data:`.lexicon.WORD_FORMS`: "renal" is "kidney", "infant"
    "newborn"), every word for a malignant tumour made "cancer" and compound tumour names
    split ("adenocarcinoma": "adeno cancer"). Right for comparing two diagnosis names; the
    agents match names against prose, where the pronoun "I" would become a 1 and "no tumour
    seen" or "lungs clear" would count as evidence of a cancer or of a pulmonary disease
    (measured: the offline doctor gets fewer cases right), so they read without it.
    """
    out: list[str] = []
    for raw, word in _folded_words(text):
        if name_forms:
            word = ROMAN.get(word, word)
            numbered = _NUMBERED.fullmatch(word)
            if numbered and word not in ("ic", "id"):
                out += [ROMAN.get(numbered[1], numbered[1]), numbered[2] + "_"]
                continue
        if len(word) == 1 and word.isalpha() and out and out[-1] in LETTER_HEADS:
            out.append(word + "_")  # a subtype letter, not the article "a"
            continue
        for part in _expand(word, raw, expand_ambiguous).split():
            if not name_forms:
                out.append(stem(part))
                continue
            for piece in _split_compound(part):
                _append(out, WORD_FORMS.get(stem(piece), stem(piece)))
    return tuple(out)


def _folded_words(text: str) -> list[tuple[str, str]]:
    """Each word of ``text`` twice: as written (capitals tell an acronym from a word) and
    folded (lower case, possessive dropped, spelling unified)."""
    cased = _NON.sub("non", _POSSESSIVE.sub("", _ascii(text)))
    # A lone word in parentheses after a name is its abbreviation, even where a dataset
    # lower-cased it ("toxic epidermal necrolysis (ten)").
    cased = _PAREN_WORD.sub(lambda m: m.group(0).upper(), cased)
    # Spelling variants live inside words, so the two lists align.
    return list(zip(_CASED_WORD.findall(cased), _WORD.findall(_spell(cased.lower())),
                    strict=True))


def _expand(word: str, raw: str, expand_ambiguous: bool) -> str:
    if word in AMBIGUOUS and not expand_ambiguous:
        return word
    if word in WORDLIKE and not raw.isupper():
        return word  # "ten days", not toxic epidermal necrolysis
    return ABBREVIATIONS.get(word, word)


def _split_compound(word: str) -> tuple[str, ...]:
    # "adenocarcinoma" is a carcinoma, "rhabdomyosarcoma" a sarcoma: the head is its own word
    # so that "lung cancer" is found broader than "adenocarcinoma of the lung".
    for head in COMPOUND_HEADS:
        if word.endswith(head) and len(word) > len(head) + 2:
            return word[: -len(head)], head
    return (word,)


def _append(out: list[str], word: str) -> None:
    if word in CANCER:
        # "malignant neoplasm", "carcinoma", "tumour": one word for a malignant tumour
        if out and out[-1] == "malignant":
            out.pop()
        word = "cancer"
    out.append(word)


# --- prose and test names (agents, metrics) ------------------------------------------------

def words(text: str) -> tuple[str, ...]:
    """The agents' reading of ``text``: :func:`tokens` with ambiguous abbreviations expanded
    ("echo" is the echocardiogram a doctor asks for) and without the disease-name forms."""
    return tokens(text, expand_ambiguous=True, name_forms=False)


def content_words(text: str) -> frozenset[str]:
    """The meaningful words of ``text`` (stopwords dropped), as the agents read it."""
    return frozenset(w for w in words(text) if w not in STOPWORDS)


def key_words(name: str) -> Key:
    """The words that identify a diagnosis name, as the agents read it (soft heads such as
    "disease" dropped when other words remain)."""
    kept = frozenset(w for w in words(name) if w not in STOPWORDS or w in SOFT_HEADS)
    return (kept - SOFT_HEADS) or kept


# --- disease names (grader, terminology) ---------------------------------------------------

@lru_cache(maxsize=262144)
def content(name: str) -> tuple[str, ...]:
    """The identifying words of a name, in order (filler, hedges, generic heads dropped).

    What induced a condition is not part of its name: "lithium-induced nephrogenic diabetes
    insipidus" names nephrogenic diabetes insipidus, "age-related macular degeneration"
    macular degeneration. A generic head ("disease", "syndrome") counts only when nothing
    else is left.
    """
    kept = [w for w in _drop_inducers(tokens(name)) if w not in FILLER and w not in HEDGES]
    specific = [w for w in kept if w not in GENERIC]
    return tuple(specific or kept)


def _drop_inducers(name_words: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for word in name_words:
        if word in INDUCED and out:
            out.pop()  # the inducing agent before "induced" / "related"
            continue
        out.append(word)
    return out


def key(name: str) -> Key:
    """The order-free comparison key of a name (see :func:`content`)."""
    return frozenset(content(name))


def compact(name: str) -> str:
    """The content words run together: "post-streptococcal" and "poststreptococcal" agree."""
    return "".join(content(name))


def normaliser_fingerprint() -> str:
    """A digest of everything :func:`key` depends on (code and tables): keys stored with one
    fingerprint are valid while it matches."""
    parts: list[object] = [inspect.getsource(f) for f in (
        _ascii, _spell, stem, tokens, _folded_words, _expand, _split_compound, _append,
        content, _drop_inducers)]
    parts += [p.pattern for p in (_DASHES, _WORD, _CASED_WORD, _POSSESSIVE, _PAREN_WORD, _NON,
                                  _GREEK, _NUMBERED)]
    parts += [sorted(GREEK.items()), sorted(SPELLINGS.items()),
              sorted(ABBREVIATIONS.items()), sorted(AMBIGUOUS), sorted(WORDLIKE),
              sorted(WORD_FORMS.items()), sorted(ROMAN.items()), sorted(LETTER_HEADS),
              sorted(CANCER), COMPOUND_HEADS, sorted(FILLER), sorted(GENERIC),
              sorted(HEDGES), sorted(INDUCED)]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


# --- other text helpers --------------------------------------------------------------------

_PAREN = re.compile(r"\(([^)]*)\)")


def variants(name: str) -> list[str]:
    """A name, its form without parentheticals, and each parenthetical on its own."""
    inner = [m.strip() for m in _PAREN.findall(name) if m.strip()]
    bare = _PAREN.sub(" ", name).strip()
    return [v for v in dict.fromkeys([name, bare, *inner]) if v]


_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'])")


def sentences(text: str) -> list[str]:
    """Split prose into sentences (good enough for case text, not for general prose)."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


# Control characters (C0 but tab and newline, DEL, C1) and the bidirectional overrides: an
# ESC starts an ANSI sequence that recolours, moves the cursor or retitles the terminal, a CR
# overwrites the line already printed, and a bidi override reorders what follows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return {10: "\\n", 13: "\\r"}.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_safe(text: str, *, newlines: bool = True) -> str:
    """``text`` fit to print on a terminal: control characters shown as escapes (``\\x1b``,
    ``\\r``), so case text cannot recolour, overwrite or forge the lines around it. With
    ``newlines=False`` a newline is escaped too (a value printed inside one line).
    The text stored in records stays as it was; only what is printed is escaped."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(_escaped, text) if pattern.search(text) else text


# Bounded here, not in their decorators: see CACHE_ENTRIES and TEXT_ENTRIES.
# inspect.getsource still reads the functions as written, so the normaliser's fingerprint
# is unchanged.
tokens = bounded_cache(tokens.__wrapped__, maxsize=TEXT_ENTRIES)
content = bounded_cache(content.__wrapped__, maxsize=TEXT_ENTRIES)
