"""The terminology indexed in Python dicts: built from the table's rows in every process.

This is the reference backend of :class:`.concepts.Terminology`: :mod:`.terminology_index`
builds its SQLite index from one of these, so the two answer alike by construction. Loading
the whole bundled table this way costs about 0.6 s of CPU and 120 MB per process; it remains
the fallback when the index cannot be built or opened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

from ..core.heap import gc_paused
from .terminology import key, normaliser_fingerprint
from .terminology_table import Row, read_table
from .terminology_typos import Entry, source_typos

Tier = int
#: How firmly a grade of name denotes its concept; lower is firmer (see
#: :mod:`.terminology_table`): preferred names, curated synonyms, ICD-10-CM inclusion terms,
#: then synonyms of unknown scope (MONDO, EFO).
TIERS: dict[str, Tier] = {"p": 0, "s": 1, "i": 2, "r": 3}
#: The tier of a name no concept lists.
UNKNOWN: Tier = 4


class MemoryIndex:
    """The table's names, concepts and hierarchy as dicts (see :class:`.concepts.Terminology`
    for what each lookup means). The attributes are what :mod:`.terminology_index` stores."""

    def __init__(self, rows: Iterable[Row], site_words: frozenset[str] = frozenset(),
                 rekey: bool = False) -> None:
        # Indexed by the key as stored (sorted words, space-joined): building a frozenset for
        # each of the table's names would double the load time.
        #: key -> (firmest tier, the concepts that list the key at that tier).
        self.home: dict[str, tuple[Tier, list[str]]] = {}
        #: ICD-10-CM only: every code a key names, and the codes it describes (the rest are
        #: inclusion terms, which ICD-10-CM lists under a code without making them synonyms).
        self.codes: dict[str, set[str]] = {}
        self.described: dict[str, set[str]] = {}
        self.parents: dict[str, tuple[str, ...]] = {}
        self.clusters: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        #: Keys of names that are one word as written ("Malaria", not "kidney disease").
        self.single: set[str] = set()
        #: Every word of the preferred names' keys (see :meth:`is_word`).
        self.words: set[str] = set()
        #: Words ICD-10-CM mostly uses for *where* a condition is (see
        #: :attr:`.concepts.Terminology.site_words`).
        self.site_words = site_words
        # Built on first use: most processes never ask for a breadth.
        self._children: dict[str, list[str]] = {}
        self._members: dict[str, list[str]] = {}
        self._with_word: dict[str, list[str]] = {}
        entries: list[Entry] = []
        for row in rows:
            entries.append(self._add(row, rekey))
        self.home.pop("", None)
        # Of preferred names only: sources list misspellings among synonyms ("polycythemia
        # ruba vera" in MeSH), which would make a slip a word; and a source's own typo in a
        # preferred name ("deficency") is none either (:mod:`.terminology_typos`).
        self.words = {w for name_key, (tier, _) in self.home.items() if tier == 0
                      for w in name_key.split()}
        self.words -= source_typos(entries, self.parents, self.words)

    def _add(self, row: Row, rekey: bool) -> Entry:
        ident, home = row.id, self.home
        self.parents[ident] = row.parents
        self.clusters[ident] = row.cluster
        self.labels[ident] = row.names[0]
        keys = [joined(key(n)) for n in row.names] if rekey else row.keys
        is_icd = ident.startswith("ICD:")
        self.single.update(k for k, n in zip(keys, row.names, strict=True) if " " not in n)
        for grade, name_key in zip(row.grades, keys, strict=True):
            tier = TIERS[grade]
            best = home.get(name_key)
            if best is None or tier < best[0]:
                home[name_key] = (tier, [ident])
            elif tier == best[0]:
                best[1].append(ident)
            if is_icd:
                self.codes.setdefault(name_key, set()).add(ident)
                if tier == 0:
                    self.described.setdefault(name_key, set()).add(ident)
        return ident, row.grades, keys

    # --- the lookups of :class:`.concepts.Backend` ---------------------------------------

    def concepts_of(self, name_key: str) -> tuple[Tier, frozenset[str]]:
        """The firmest tier of a stored key and the concepts listing it there."""
        tier, idents = self.home.get(name_key, (UNKNOWN, []))
        return tier, frozenset(idents)

    def is_single(self, name_key: str) -> bool:
        """Whether some name with this key is one word as written."""
        return name_key in self.single

    def is_word(self, word: str) -> bool:
        """Whether the word is a word of some concept's preferred name."""
        return word in self.words

    def icd_codes(self, name_key: str) -> AbstractSet[str]:
        """The ICD-10-CM codes naming a key."""
        return self.codes.get(name_key, set())

    def icd_described(self, name_key: str) -> AbstractSet[str]:
        """The ICD-10-CM codes whose description names a key."""
        return self.described.get(name_key, set())

    def keys_with(self, word: str) -> tuple[str, ...]:
        """The stored keys of known names that have ``word`` among their words, sorted."""
        if not self._with_word:
            # Built on first use: only a short form or an eponym asks (a few in a run).
            for name_key in sorted(self.home):
                for w in name_key.split():
                    self._with_word.setdefault(w, []).append(name_key)
        return tuple(self._with_word.get(word, ()))

    def parents_of(self, ident: str) -> tuple[str, ...]:
        """A concept's parents in its own source, in the table's order."""
        return self.parents.get(ident, ())

    def cluster_of(self, ident: str) -> str:
        """A concept's cluster (itself when the table does not list it)."""
        return self.clusters.get(ident, ident)

    def label_of(self, ident: str) -> str:
        """A concept's preferred name (the identifier when the table does not list it)."""
        return self.labels.get(ident, ident)

    def members_of(self, cluster: str) -> tuple[str, ...]:
        """The concepts of a cluster (empty when none)."""
        self._build_reverse()
        return tuple(self._members.get(cluster, ()))

    def below(self, ident: str) -> int:
        """How many concepts lie below ``ident`` in its own source."""
        self._build_reverse()
        return len(reach(lambda c: self._children.get(c, ()), ident))

    def _build_reverse(self) -> None:
        if self._children:
            return
        for child, parents in self.parents.items():
            for parent in parents:
                self._children.setdefault(parent, []).append(child)
        for member, cluster in self.clusters.items():
            self._members.setdefault(cluster, []).append(member)

    # --- for the index build -------------------------------------------------------------

    def below_counts(self) -> dict[str, int]:
        """:meth:`below` of every concept that has some concept below it, at once.

        Counted upwards (each concept adds one to each of its ancestors): the same sets as
        walking down from every concept, with one walk per concept instead of per ancestor.
        """
        counts: dict[str, int] = {}
        for ident in self.parents:
            for ancestor in reach(self.parents_of, ident):
                counts[ancestor] = counts.get(ancestor, 0) + 1
        return counts


def load_memory(path: Path) -> MemoryIndex:
    """Read a table into a :class:`MemoryIndex` (empty when the file is absent).

    The keys were computed when the table was built; if the normaliser changed since, they
    are recomputed from the stored names (slower, never wrong).
    """
    if not path.exists():
        return MemoryIndex(())
    with gc_paused():
        header, rows = read_table(path)
        return MemoryIndex(rows, header.site_words,
                           rekey=header.normaliser != normaliser_fingerprint())


def joined(name_key: AbstractSet[str]) -> str:
    """A key as the table stores it."""
    return " ".join(sorted(name_key))


def reach(edges: Callable[[str], Sequence[str]], ident: str) -> dict[str, int]:
    """The concepts reachable from ``ident`` along ``edges`` (a concept's parents, or its
    children), each with its distance, breadth first."""
    out: dict[str, int] = {}
    frontier, distance = [ident], 0
    while frontier:
        distance += 1
        frontier = [p for c in frontier for p in edges(c) if p not in out]
        for parent in frontier:
            out.setdefault(parent, distance)
    return out
