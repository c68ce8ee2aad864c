"""The grader's disease concepts: names, synonyms and hierarchies from the bundled table.

Names are compared as *keys* (see :mod:`.terminology`). Knowledge of synonyms and hierarchies
comes from the bundled table (:mod:`.terminology_table`, built by ``tools/build_terminology.py``):
ICD-10-CM codes with their descriptions and inclusion terms, MeSH disease descriptors with
entry terms and tree numbers, and the Disease Ontology, MONDO and EFO concepts with their
synonyms and ``is_a`` parents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..core.heap import gc_paused
from .terminology import Key, key, normaliser_fingerprint
from .terminology_table import DATA_FILE, Row, read_table

Tier = int
LinkKind = Literal["synonym", "broader", "narrower", "sibling"]
#: How firmly a grade of name denotes its concept; lower is firmer (see
#: :mod:`.terminology_table`): preferred names, curated synonyms, ICD-10-CM inclusion terms,
#: then synonyms of unknown scope (MONDO, EFO).
TIERS: dict[str, Tier] = {"p": 0, "s": 1, "i": 2, "r": 3}
#: Where a concept's breadth is counted: MeSH first, the clinicians' thesaurus.
BREADTH_ORDER = ("MESH:", "DOID:", "MONDO:", "EFO:")
SOURCES = {"ICD": "ICD-10-CM", "MESH": "MeSH", "DOID": "Disease Ontology", "MONDO": "MONDO",
           "EFO": "EFO"}


@dataclass(frozen=True)
class Link:
    """How the terminology relates two names: the kind, the concepts and the distance."""

    kind: LinkKind
    given: str
    truth: str
    #: The weakest tier of the two names (3: a synonym of unknown scope took part).
    tier: Tier = 0
    #: Levels between the concepts (1 for a parent; 0 for synonyms and siblings).
    distance: int = 0
    #: The sources whose hierarchy states it (empty for synonyms: one cluster).
    sources: tuple[str, ...] = ()

    @property
    def curated(self) -> bool:
        """Whether two sources state the relation (or it is a synonym)."""
        return self.kind == "synonym" or len(self.sources) >= 2


class Terminology:
    """Disease names indexed by key: their concepts, clusters and hierarchies.

    A name denotes the concepts that list it at its firmest tier only, so a related synonym
    of unknown scope ("schizoaffective disorder" among MONDO's names of schizophrenia) never
    outranks the concept that has the name as its own.
    """

    def __init__(self, rows: Iterable[Row], site_words: frozenset[str] = frozenset(),
                 rekey: bool = False) -> None:
        # Indexed by the key as stored (sorted words, space-joined): building a frozenset for
        # each of the table's names would double the load time.
        self._home: dict[str, tuple[Tier, list[str]]] = {}
        #: ICD-10-CM only: every code a key names, and the codes it describes (the rest are
        #: inclusion terms, which ICD-10-CM lists under a code without making them synonyms).
        self._codes: dict[str, set[str]] = {}
        self._described: dict[str, set[str]] = {}
        self._parents: dict[str, tuple[str, ...]] = {}
        self._cluster: dict[str, str] = {}
        self._label: dict[str, str] = {}
        #: Keys of names that are one word as written ("Malaria", not "kidney disease").
        self._single: set[str] = set()
        # Built on first use (see :meth:`breadth`).
        self._children: dict[str, list[str]] = {}
        self._cluster_members: dict[str, list[str]] = {}
        home = self._home
        for row in rows:
            ident = row.id
            self._parents[ident] = row.parents
            self._cluster[ident] = row.cluster
            self._label[ident] = row.names[0]
            keys = [_joined(key(n)) for n in row.names] if rekey else row.keys
            is_icd = ident.startswith("ICD:")
            self._single.update(k for k, n in zip(keys, row.names, strict=True)
                                if " " not in n)
            for grade, name_key in zip(row.grades, keys, strict=True):
                tier = TIERS[grade]
                best = home.get(name_key)
                if best is None or tier < best[0]:
                    home[name_key] = (tier, [ident])
                elif tier == best[0]:
                    best[1].append(ident)
                if is_icd:
                    self._codes.setdefault(name_key, set()).add(ident)
                    if tier == 0:
                        self._described.setdefault(name_key, set()).add(ident)
        home.pop("", None)
        #: Words ICD-10-CM mostly uses for *where* a condition is ("... of lip", "of knee"):
        #: an answer adding only such words to the truth names the truth at a site.
        self.site_words = site_words

    @classmethod
    def load(cls, path: Path = DATA_FILE) -> Terminology:
        """Read the bundled table (empty terminology when the file is absent).

        The keys were computed when the table was built; if the normaliser changed since,
        they are recomputed from the stored names (slower, never wrong).
        """
        if not path.exists():
            return cls(())
        with gc_paused():
            header, rows = read_table(path)
            return cls(rows, header.site_words,
                       rekey=header.normaliser != normaliser_fingerprint())

    def concepts(self, name: str | Key) -> tuple[Tier, frozenset[str]]:
        """The tier and the concepts a name denotes (empty when unknown)."""
        name_key = _joined(name if isinstance(name, frozenset) else key(name))
        tier, idents = self._home.get(name_key, (4, []))
        return tier, frozenset(idents)

    def one_word_name(self, word: str) -> bool:
        """Whether some source names a disease with this one (normalised) word alone."""
        return word in self._single

    def known(self, name: str | Key) -> bool:
        """Whether some source names this condition."""
        return bool(self.concepts(name)[1])

    def label(self, ident: str) -> str:
        """A concept's preferred name with its source ("MeSH: Measles")."""
        return f"{SOURCES.get(ident.split(':')[0], ident)}: {self._label.get(ident, ident)}"

    def cluster(self, ident: str) -> str:
        """The cluster of concepts of several sources that are one disease."""
        return self._cluster.get(ident, ident)

    def ancestors(self, ident: str) -> dict[str, int]:
        """The concepts above ``ident`` in its own source, with their distance."""
        return _ancestors(self._parents, ident)

    def breadth(self, ident: str) -> int:
        """How many concepts lie below a concept, counted in the first source of its cluster
        in :data:`BREADTH_ORDER` (sources split diseases unevenly: MONDO into hundreds of
        genetic subtypes, EFO hardly at all, ICD-10-CM by coding convention)."""
        if not self._children:
            for child, parents in self._parents.items():
                for parent in parents:
                    self._children.setdefault(parent, []).append(child)
            for member, cluster in self._cluster.items():
                self._cluster_members.setdefault(cluster, []).append(member)
        members = self._cluster_members.get(self.cluster(ident), [ident])
        for source in BREADTH_ORDER:
            counted = [m for m in members if m.startswith(source)]
            if counted:
                return min(len(_ancestors(self._children, m)) for m in counted)
        return 0

    def link(self, given: Key, truth: Key) -> Link | None:
        """Synonym, broader, narrower or sibling, and which sources' hierarchies say so.

        Names of one cluster are synonyms. Otherwise each source's hierarchy (ICD-10-CM's
        included) is asked about the two clusters' concepts in it; a relation is
        :attr:`Link.curated` when two sources state it, since any one of them holds slips
        (MONDO has psoriatic arthritis under rheumatoid arthritis, MeSH dermatomyositis under
        polymyositis).
        """
        g_tier, g_ids = self.concepts(given)
        t_tier, t_ids = self.concepts(truth)
        if not g_ids or not t_ids:
            return None
        tier = max(g_tier, t_tier)
        g_clusters = {self.cluster(i): i for i in sorted(g_ids)}
        for t in sorted(t_ids):
            if self.cluster(t) in g_clusters:
                return Link("synonym", g_clusters[self.cluster(t)], t, tier)
        vertical = [f for f in (self._vertical("broader", sorted(g_ids), sorted(t_ids), tier),
                                self._vertical("narrower", sorted(t_ids), sorted(g_ids), tier))
                    if f is not None]
        # Siblings only where no source puts one above the other: multiple inheritance makes
        # a disease and its parent share a grandparent too.
        found = vertical or [f for f in [self._sibling(sorted(g_ids), sorted(t_ids), tier)]
                             if f is not None]
        return max(found, key=lambda f: len(f.sources), default=None)

    def _members(self, idents: list[str]) -> list[str]:
        self.breadth(idents[0])  # builds the member lists
        return sorted({m for i in idents for m in self._cluster_members.get(self.cluster(i), [i])})

    def _vertical(self, kind: LinkKind, upper: list[str], lower: list[str],
                  tier: Tier) -> Link | None:
        up = {self.cluster(i): i for i in upper}
        best: dict[str, tuple[int, str, str]] = {}  # source -> (distance, upper, lower)
        for low in self._members(lower):
            for ancestor, distance in self.ancestors(low).items():
                top = up.get(self.cluster(ancestor))
                source = _source(low)
                if top is not None and distance < best.get(source, (99, "", ""))[0]:
                    best[source] = (distance, ancestor, low)
        if not best:
            return None
        distance, top, low = min(best.values())
        pair = (top, low) if kind == "broader" else (low, top)
        return Link(kind, *pair, tier=tier, distance=distance, sources=tuple(sorted(best)))

    def _sibling(self, given: list[str], truth: list[str], tier: Tier) -> Link | None:
        truth_parents = {self.cluster(p): t for t in self._members(truth)
                         for p in self._parents.get(t, ())}
        pairs: dict[str, tuple[str, str]] = {}
        for g in self._members(given):
            for parent in self._parents.get(g, ()):
                if self.cluster(parent) in truth_parents:
                    pairs.setdefault(_source(g), (g, truth_parents[self.cluster(parent)]))
        if not pairs:
            return None
        g, t = pairs[min(pairs)]
        return Link("sibling", g, t, tier, sources=tuple(sorted(pairs)))

    def icd_relation(self, given: Key, truth: Key) -> str | None:
        """How ICD-10-CM relates ``given`` to ``truth``, or None if it does not.

        "same" when one code's description names both (or its description one and an
        inclusion term the other), "included" when both are only inclusion terms of one code
        (siblings as often as synonyms), "broader"/"narrower" when one's code is an ancestor
        of the other's.
        """
        gk, tk = _joined(given), _joined(truth)
        given_codes, truth_codes = self._codes.get(gk, set()), self._codes.get(tk, set())
        if not given_codes or not truth_codes:
            return None
        shared = given_codes & truth_codes
        if shared:
            described = self._described.get(gk, set()) | self._described.get(tk, set())
            return "same" if shared & described else "included"
        if any(g in self.ancestors(t) for t in truth_codes for g in given_codes):
            return "broader"
        if any(t in self.ancestors(g) for g in given_codes for t in truth_codes):
            return "narrower"
        return None


def _joined(name_key: Key) -> str:
    """A key as the table stores it."""
    return " ".join(sorted(name_key))


def _source(ident: str) -> str:
    # EFO takes its disease hierarchy from MONDO: the two are one witness, not two.
    source = ident.split(":")[0]
    return "MONDO" if source == "EFO" else source


def _ancestors(parents: Mapping[str, Sequence[str]], ident: str) -> dict[str, int]:
    out: dict[str, int] = {}
    frontier, distance = [ident], 0
    while frontier:
        distance += 1
        frontier = [p for c in frontier for p in parents.get(c, ()) if p not in out]
        for parent in frontier:
            out.setdefault(parent, distance)
    return out


@lru_cache(maxsize=1)
def default_terminology() -> Terminology:
    """The bundled terminology, loaded once per process."""
    return Terminology.load()
