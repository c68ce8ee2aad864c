"""A source's own typo, told from the terminology itself: no word of the vocabulary.

The sources misspell a word now and then in a preferred name (MONDO's "... due to STAR
deficency", DOID's "intellectual disabillity"). Taken for a word, such a slip blocks the
reading of a reader's slip of the pen ("IgA deficency" for IgA deficiency): a slip that makes
a known word is no slip (docs/grading.md, "A source's own typo is no word").

The rule reads the sources' usage, no list of words: a word is one source's typo when

* it has :data:`~.wording.SLIP_WORD` letters or more (the slip rules read no shorter word);
* one source alone writes it, in any grade of name, and only in the names of one concept
  and the concepts below it (a word of its own has uses in names that are not one family);
* it is one edit from a word every main source (ICD-10-CM, MeSH, the Disease Ontology,
  MONDO) writes, in :data:`COMMON` preferred names or more;
* and the edit is inside the word: its first two and last two letters are the common
  word's. A word's ending and beginning carry its derivation ("paraplegic" beside
  "paraplegia", "afebrile" beside "febrile"); a slip of the pen falls inside a word.

On the bundled table this makes six words typos, each a misspelling: "deficency",
"disabillity", "famililal", "hemorragic", "infectous", "maligant"
(``tests/test_grading_reading_red_team20.py`` lists them).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from .wording import SLIP_WORD, neighbours

#: The sources whose common usage is the yardstick (EFO, MONDO's companion, is left out).
MAIN_SOURCES = frozenset({"ICD", "MESH", "DOID", "MONDO"})
#: How many preferred names a word must be written in to be a common word.
COMMON = 100

#: (concept id, grades, keys) of one concept's names, as the index stores them.
Entry = tuple[str, Sequence[str], Sequence[str]]


def source_typos(entries: Sequence[Entry], parents: Mapping[str, Sequence[str]],
                 words: Iterable[str]) -> frozenset[str]:
    """The words of ``words`` (the preferred names' words) that are one source's typo of a
    common word (see the module's docstring)."""
    count, written_by = _usage(entries)
    common = {w for w, n in count.items() if n >= COMMON and written_by[w] >= MAIN_SOURCES}
    vocabulary = set(words)
    # one source in the preferred names first (cheap): the scan of every name is for these
    candidates = {w for v in common for w in neighbours(v)
                  if w in vocabulary and len(w) >= SLIP_WORD and len(written_by[w]) == 1
                  and w.isalpha() and w[:2] == v[:2] and w[-2:] == v[-2:]}
    if not candidates:
        return frozenset()
    pattern = re.compile(r"\b(?:" + "|".join(sorted(candidates)) + r")\b")
    sources: dict[str, set[str]] = defaultdict(set)
    concepts: dict[str, set[str]] = defaultdict(set)
    for ident, _, keys in entries:
        for word in pattern.findall("|".join(keys)):  # one search a concept
            sources[word].add(_source(ident))
            concepts[word].add(ident)
    return frozenset(w for w in candidates
                     if len(sources[w]) == 1 and _one_family(concepts[w], parents))


def _usage(entries: Sequence[Entry]) -> tuple[Counter[str], dict[str, set[str]]]:
    """How many preferred names write each word, and which sources."""
    count: Counter[str] = Counter()
    sources: dict[str, set[str]] = defaultdict(set)
    for ident, grades, keys in entries:
        source = _source(ident)
        for grade, name_key in zip(grades, keys, strict=True):
            if grade == "p":
                for word in set(name_key.split()):
                    count[word] += 1
                    sources[word].add(source)
    return count, sources


def _source(ident: str) -> str:
    return ident.partition(":")[0]


def _one_family(idents: set[str], parents: Mapping[str, Sequence[str]]) -> bool:
    """Whether the concepts are one concept and concepts below it (one has no ancestor
    among them)."""
    return sum(1 for i in idents if not _ancestors(i, parents) & idents) == 1


def _ancestors(ident: str, parents: Mapping[str, Sequence[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(parents.get(ident, ()))
    while stack:
        parent = stack.pop()
        if parent not in seen:
            seen.add(parent)
            stack.extend(parents.get(parent, ()))
    return seen
