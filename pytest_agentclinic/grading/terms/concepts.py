"""The grader's disease concepts: names, synonyms and hierarchies from the bundled table.

Names are compared as *keys* (see :mod:`.terminology`). Knowledge of synonyms and hierarchies
comes from the bundled table (:mod:`.terminology_table`, built by ``tools/build_terminology.py``):
ICD-10-CM codes with their descriptions and inclusion terms, MeSH disease descriptors with
entry terms and tree numbers, and the Disease Ontology, MONDO and EFO concepts with their
synonyms and ``is_a`` parents.

:class:`Terminology` asks a :class:`Backend` for each lookup: by default the table's SQLite
index in a per-user cache (:mod:`.terminology_index`; ``AGENTCLINIC_TERMINOLOGY_CACHE`` names
the directory, ``off`` disables it), opened in milliseconds; else the table read into dicts
(:mod:`.terminology_memory`), 0.7 s and 120 MB per process. Both give the same answers.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, Protocol

from ...core.text import bounded_cache
from ..terminology import Key, key
from ..terminology import tokens as key_words
from ..terminology_cache import cache_dirs
from ..terminology_index import open_index
from ..terminology_memory import TIERS, Tier, joined, load_memory, reach
from ..terminology_table import DATA_FILE
from .glossaries import glossary_clinical, single_word

__all__ = ["BREADTH_ORDER", "SOURCES", "TIERS", "Backend", "Link", "LinkKind", "Terminology",
           "Tier", "default_terminology", "terminology_loaded", "witness"]

LinkKind = Literal["synonym", "broader", "narrower", "sibling"]
#: Where a concept's breadth is counted: MeSH first, the clinicians' thesaurus.
BREADTH_ORDER = ("MESH:", "DOID:", "MONDO:", "EFO:")
#: MeSH's Signs and Symptoms (C23.888): findings, not diagnoses.
SIGNS_AND_SYMPTOMS = "MESH:D012816"
# The words of a name as written, in order ("and" kept: "hand, foot and mouth disease").
_WORDS = re.compile(r"[^\W_]+")
#: Entries of a terminology's caches of names and pairs (a few hundred bytes each), and of
#: concepts' ancestors (up to a few KB each): with :func:`.equivalence.judge`'s, ~0.7 MB once
#: full; 2,048 entries each held ~2.5 MB and saved little more CPU.
_PER_TEXT = 512
_PER_CONCEPT = 512
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


class Backend(Protocol):
    """Where a :class:`Terminology` looks things up: :class:`.MemoryIndex` (the table in
    dicts) or :class:`.SqliteIndex` (the per-user index file), which answer alike. Keys are
    passed as the table stores them (:func:`.joined`); each lookup is documented on
    :class:`.MemoryIndex`."""

    site_words: frozenset[str]

    def concepts_of(self, name_key: str) -> tuple[Tier, frozenset[str]]: ...
    def is_single(self, name_key: str) -> bool: ...
    def is_word(self, word: str) -> bool: ...
    def keys_with(self, word: str) -> tuple[str, ...]: ...
    def icd_codes(self, name_key: str) -> AbstractSet[str]: ...
    def icd_described(self, name_key: str) -> AbstractSet[str]: ...
    def parents_of(self, ident: str) -> tuple[str, ...]: ...
    def cluster_of(self, ident: str) -> str: ...
    def label_of(self, ident: str) -> str: ...
    def members_of(self, cluster: str) -> tuple[str, ...]: ...
    def below(self, ident: str) -> int: ...


class Terminology:
    """Disease names indexed by key: their concepts, clusters and hierarchies.

    A name denotes the concepts that list it at its firmest tier only, so a related synonym
    of unknown scope ("schizoaffective disorder" among MONDO's names of schizophrenia) never
    outranks the concept that has the name as its own.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        #: Words ICD-10-CM mostly uses for *where* a condition is ("... of lip", "of knee"):
        #: an answer adding only such words to the truth names the truth at a site.
        self.site_words = backend.site_words
        self._signs: dict[str, bool] = {}
        # The lookups a verdict makes most, memoised (pure: the backend does not change, and
        # a change of the learned word forms that keys depend on empties these caches).
        # Grading one answer asks for names' concepts ~20 times and for links ~6 times, a few
        # names and pairs again and again (each form of the truth, each choice); the few
        # hundred concepts whose ancestors a run asks for, over and over.
        self._concepts = bounded_cache(self._concepts_of, maxsize=_PER_TEXT)
        self._link = bounded_cache(self._link_of, maxsize=_PER_TEXT)
        self._ancestors = bounded_cache(self._ancestors_of, maxsize=_PER_CONCEPT)

    @classmethod
    def load(cls, path: Path = DATA_FILE,
             cache: Path | Literal["default"] | None = "default") -> Terminology:
        """Read a table: through its SQLite index in ``cache`` (by default the per-user
        directories of :func:`.terminology_cache.cache_dirs`), built there on first use, or, with
        ``cache=None`` or when the index cannot be built or opened, into memory (empty
        terminology when the file is absent). Both answer alike.
        """
        directories = cache_dirs() if cache == "default" else [] if cache is None else [cache]
        for directory in directories if path.exists() else []:
            index = open_index(path, directory)
            if index is not None:
                return cls(index)
        return cls(load_memory(path))

    def concepts(self, name: str | Key) -> tuple[Tier, frozenset[str]]:
        """The tier and the concepts a name denotes (empty when unknown)."""
        return self._concepts(name)

    def _concepts_of(self, name: str | Key) -> tuple[Tier, frozenset[str]]:
        stored = joined(name if isinstance(name, frozenset) else key(name))
        found = self.backend.concepts_of(stored)
        clinical = None if found[1] else glossary_clinical(stored)
        if clinical is None:
            return found
        # A name no source gives (the project's glossaries): its clinical name's concepts,
        # as a curated synonym of them; never over a name some source gives.
        tier, idents = self.backend.concepts_of(joined(key(clinical)))
        return max(tier, TIERS["s"]), idents

    def one_word_name(self, word: str) -> bool:
        """Whether some source, or one of the project's glossaries, names a disease with this
        one (normalised) word alone."""
        return self.backend.is_single(word) or single_word(word)

    def is_word(self, word: str) -> bool:
        """Whether a normalised word is a word of some concept's preferred name (a slip of
        the pen makes a word that is none: "scholein", not "entropion")."""
        return self.backend.is_word(word)

    def names_with(self, words: Key) -> tuple[Key, ...]:
        """The keys of the known names that have all of ``words`` (empty for no words)."""
        if not words:
            return ()
        rarest = min(words, key=lambda w: len(self.backend.keys_with(w)))
        return tuple(k for k in map(_split_key, self.backend.keys_with(rarest)) if words <= k)

    def known(self, name: str | Key) -> bool:
        """Whether some source (or one of the project's glossaries) names this condition."""
        return bool(self.concepts(name)[1])

    def named_by_sources(self, name: Key) -> bool:
        """Whether some source of the table gives this name (the glossaries left out)."""
        return bool(self.backend.concepts_of(joined(name))[1])

    def named_apart(self, name: Key, other: Key) -> bool:
        """Whether the sources give ``name`` but not as a synonym of ``other``: a glossary's
        name with a concept of its own ("bunion"), whose pair the glossary states
        (:func:`.glossaries.stated_pair`)."""
        if not self.named_by_sources(name):
            return False
        link = self.link(name, other)
        return link is None or link.kind != "synonym"

    def symptom(self, name: str | Key) -> bool:
        """Whether a name is a symptom or a sign, not a diagnosis ("chest pain", "fever"):
        every ICD-10-CM code it has is in chapter R (symptoms, signs and abnormal findings),
        or, with no ICD-10-CM code and no Disease Ontology or MONDO concept, every MeSH
        concept it has lies under Signs and Symptoms by each of its tree positions (MeSH files
        IgA vasculitis under purpura as well as under vasculitis: a disease that also shows
        as a sign is no sign). A name whose head is "disorder" or "disease" names a diagnosis
        whatever tree MeSH files it under (DSM-5's "somatic symptom disorder", an entry term
        of MeSH's Medically Unexplained Symptoms)."""
        if isinstance(name, str) and key_words(name)[-1:] in (("disorder",), ("disease",)):
            return False
        ids = self.concepts(name)[1]
        icd = [i for i in ids if i.startswith("ICD:")]
        if icd:
            return all(i.startswith("ICD:R") for i in icd)
        mesh = [i for i in ids if i.startswith("MESH:")]
        if not mesh or any(i.startswith(("DOID:", "MONDO:")) for i in ids):
            return False
        return all(self._only_a_sign(i) for i in mesh)

    def _only_a_sign(self, ident: str) -> bool:
        # Every path up the tree passes through Signs and Symptoms (Neuralgia, under Pain and
        # under the nerve diseases, is a disease; Chest Pain, under Pain alone, a sign).
        if ident == SIGNS_AND_SYMPTOMS:
            return True
        known = self._signs.get(ident)
        if known is None:
            parents = self.backend.parents_of(ident)
            known = self._signs[ident] = bool(parents) and all(
                self._only_a_sign(p) for p in parents)
        return known

    def disease_like(self, name: str) -> bool:
        """Whether ``name`` names a disease by the terminology: it, or its head noun (its
        last word: "rosacea" of "papulopustular rosacea"), is known, and is no symptom."""
        words = key_words(name)
        known = self.known(name) or bool(words and self.known(words[-1]))
        return known and not self.symptom(name)

    def preferred_as_written(self, name: str) -> bool:
        """Whether ``name`` is, word for word and in its order (case and punctuation aside),
        the preferred name of a concept: "Hand, foot and mouth disease", MeSH's inverted
        "Diabetes Mellitus, Type 2"; not "Fracture, femur" (the sources write "femur
        fracture"), nor a name of a concept only by another tier. ICD-10-CM's titles do not
        count: their comma sets off a coding axis ("Vascular dementia, moderate"), a note
        on the name, not a part of it."""
        tier, idents = self.concepts(name)
        words = _WORDS.findall(name.lower())
        return tier == 0 and any(_WORDS.findall(self.backend.label_of(i).lower()) == words
                                 for i in sorted(idents) if not i.startswith("ICD:"))

    def label(self, ident: str) -> str:
        """A concept's preferred name with its source ("MeSH: Measles")."""
        return f"{SOURCES.get(ident.split(':')[0], ident)}: {self.backend.label_of(ident)}"

    def cluster(self, ident: str) -> str:
        """The cluster of concepts of several sources that are one disease."""
        return self.backend.cluster_of(ident)

    def ancestors(self, ident: str) -> Mapping[str, int]:
        """The concepts above ``ident`` in its own source, with their distance (one mapping
        shared by every caller: read it, do not change it)."""
        return self._ancestors(ident)

    def _ancestors_of(self, ident: str) -> Mapping[str, int]:
        return reach(self.backend.parents_of, ident)

    def filed_under(self, name: Key, word: Key) -> str | None:
        """The concept above ``name`` that ``word`` alone names ("kidney disease" for
        ``{"kidney"}``: the key drops "disease"), or None: the class a source files the
        disease in."""
        for ident in sorted(self.concepts(name)[1]):
            for ancestor in sorted(self.ancestors(ident)):
                if key(self.backend.label_of(ancestor)) == word:
                    return ancestor
        return None

    def breadth(self, ident: str) -> int:
        """How many concepts lie below a concept, counted in the first source of its cluster
        in :data:`BREADTH_ORDER` (sources split diseases unevenly: MONDO into hundreds of
        genetic subtypes, EFO hardly at all, ICD-10-CM by coding convention)."""
        members = self.backend.members_of(self.cluster(ident)) or (ident,)
        for source in BREADTH_ORDER:
            counted = [m for m in members if m.startswith(source)]
            if counted:
                return min(self.backend.below(m) for m in counted)
        return 0

    def link(self, given: Key, truth: Key) -> Link | None:
        """Synonym, broader, narrower or sibling, and which sources' hierarchies say so.

        Names of one cluster are synonyms. Otherwise each source's hierarchy (ICD-10-CM's
        included) is asked about the two clusters' concepts in it; a relation is
        :attr:`Link.curated` when two sources state it, since any one of them holds slips
        (MONDO has psoriatic arthritis under rheumatoid arthritis, MeSH dermatomyositis under
        polymyositis).
        """
        return self._link(given, truth)

    def _link_of(self, given: Key, truth: Key) -> Link | None:
        g_tier, g_ids = self.concepts(given)
        t_tier, t_ids = self.concepts(truth)
        if not g_ids or not t_ids:
            return None
        tier = max(g_tier, t_tier)
        g_clusters = {self.cluster(i): i for i in sorted(g_ids)}
        for t in sorted(t_ids):
            if self.cluster(t) in g_clusters:
                # A name the sources give to two diseases ("gestational hypertension": DOID's
                # pre-eclampsia, MeSH's pregnancy-induced hypertension) is of unknown scope.
                ambiguous = self._ambiguous(g_ids) or self._ambiguous(t_ids)
                return Link("synonym", g_clusters[self.cluster(t)], t, 3 if ambiguous else tier)
        vertical = [f for f in (self._vertical("broader", sorted(g_ids), sorted(t_ids), tier),
                                self._vertical("narrower", sorted(t_ids), sorted(g_ids), tier))
                    if f is not None]
        # Siblings only where no source puts one above the other: multiple inheritance makes
        # a disease and its parent share a grandparent too.
        found = vertical or [f for f in [self._sibling(sorted(g_ids), sorted(t_ids), tier)]
                             if f is not None]
        return max(found, key=lambda f: len(f.sources), default=None)

    def _ambiguous(self, idents: frozenset[str]) -> bool:
        # ICD-10-CM codes are left out: a category and its "unspecified" code share names.
        return len({self.cluster(i) for i in idents if not i.startswith("ICD:")}) > 1

    def _members(self, idents: list[str]) -> list[str]:
        return sorted({m for i in idents
                       for m in self.backend.members_of(self.cluster(i)) or (i,)})

    def _vertical(self, kind: LinkKind, upper: list[str], lower: list[str],
                  tier: Tier) -> Link | None:
        up = {self.cluster(i): i for i in upper}
        best: dict[str, tuple[int, str, str]] = {}  # source -> (distance, upper, lower)
        for low in self._members(lower):
            source = witness(low)
            for ancestor, distance in self.ancestors(low).items():
                top = up.get(self.cluster(ancestor))
                if top is not None and distance < best.get(source, (99, "", ""))[0]:
                    best[source] = (distance, ancestor, low)
        if not best:
            return None
        distance, top, low = min(best.values())
        pair = (top, low) if kind == "broader" else (low, top)
        return Link(kind, *pair, tier=tier, distance=distance, sources=tuple(sorted(best)))

    def _sibling(self, given: list[str], truth: list[str], tier: Tier) -> Link | None:
        truth_parents = {self.cluster(p): t for t in self._members(truth)
                         for p in self.backend.parents_of(t)}
        pairs: dict[str, tuple[str, str]] = {}
        for g in self._members(given):
            for parent in self.backend.parents_of(g):
                if self.cluster(parent) in truth_parents:
                    pairs.setdefault(witness(g), (g, truth_parents[self.cluster(parent)]))
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
        gk, tk = joined(given), joined(truth)
        given_codes, truth_codes = self.backend.icd_codes(gk), self.backend.icd_codes(tk)
        if not given_codes or not truth_codes:
            return None
        shared = given_codes & truth_codes
        if shared:
            described = self.backend.icd_described(gk) | self.backend.icd_described(tk)
            return "same" if shared & described else "included"
        if any(g in self.ancestors(t) for t in truth_codes for g in given_codes):
            return "broader"
        if any(t in self.ancestors(g) for g in given_codes for t in truth_codes):
            return "narrower"
        return None


def _split_key(stored: str) -> Key:
    return frozenset(stored.split())


def witness(ident: str) -> str:
    """The source that states what concept ``ident`` says: its own, but MONDO for EFO's (EFO
    takes its disease hierarchy from MONDO: the two are one witness, not two)."""
    source = ident.split(":")[0]
    return "MONDO" if source == "EFO" else source


#: One loader at a time: the pytest plugin warms the terminology in a thread while the first
#: encounters already call their models, and grading must wait for that load, not repeat it.
_LOADING = threading.RLock()


@lru_cache(maxsize=1)
def _loaded() -> Terminology:
    return Terminology.load()


def default_terminology() -> Terminology:
    """The bundled terminology, loaded once per process (a caller meeting a load under way in
    another thread waits for it)."""
    with _LOADING:
        return _loaded()


async def terminology_loaded() -> None:
    """Wait, without blocking the event loop, until :func:`default_terminology` is loaded
    (loading it in a thread when nobody has): its first load on a machine builds an index,
    ~2 s of CPU, which on the loop would stall every call in flight."""
    if _loaded.cache_info().currsize == 0:
        await asyncio.to_thread(default_terminology)
