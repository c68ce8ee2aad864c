"""The project's glossaries of disease names (``grading/data/lay_names.tsv``,
``grading/data/clinical_synonyms.tsv``): one format, one reader.

The terminology's sources give many names of a disease and lack some: lay names ("piles",
"glue ear", "the clap") and clinical synonyms a textbook states, an eponym against its
descriptive name ("Hutchinson freckle" / lentigo maligna) or an older or alternative name
("epidermal inclusion cyst" / epidermoid cyst). No openly licensed list of either exists to
build from, so the project writes its own. Each file is a table of two columns, a name and
the clinical name of its disease as a source of the terminology writes it; the rules of an
entry are at the top of each file and in docs/terminology.md ("Lay names", "Clinical
synonyms"). A name is given once across the glossaries.

Each row is read one of three ways, decided by the terminology itself:

* a name no source gives (its key is unknown) denotes the concepts of its clinical name:
  :meth:`.concepts.Terminology.concepts` answers for it as for a synonym (tier 1), so the
  name is a kind, a parent or a sibling of what the clinical name is, in an answer with a
  hedge or a differential too;
* a name a source gives to a concept of its own (MeSH's "Bunion") keeps that concept; the
  row states only that the two names, compared with each other, name one disease
  (:func:`stated_pair`), as the paper's examples are stated (:mod:`.stated_synonyms`);
* a name the sources already give the disease changes nothing: their verdict stands, sure or
  not (a synonym of unknown scope stays unsure).

Read on first use (a few hundred names keyed once per process, a few ms of CPU), not at
import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ...core.datafiles import read_pairs, read_rows
from ..terminology import GENERIC, Key, key, tokens
from ..terminology_memory import joined

__all__ = ["CLINICAL_SYNONYMS_FILE", "GLOSSARIES", "LAY_NAMES_FILE", "Glossary",
           "glossary", "glossary_clinical", "single_word", "stated_pair"]

_DATA = Path(__file__).parents[1] / "data"


@dataclass(frozen=True)
class Glossary:
    """One glossary file and what its rows are of their clinical names."""

    path: Path
    #: What a row's name is ("the lay name"), said in a verdict's reason.
    kind: str

    def rows(self) -> dict[str, str]:
        """The file's rows, name -> clinical name, in the file's order."""
        return read_pairs(self.path)


LAY_NAMES_FILE = _DATA / "lay_names.tsv"
CLINICAL_SYNONYMS_FILE = _DATA / "clinical_synonyms.tsv"
#: Every glossary the grader reads, in the order a reason names them.
GLOSSARIES = (Glossary(LAY_NAMES_FILE, "the lay name"),
              Glossary(CLINICAL_SYNONYMS_FILE, "a textbook synonym"))


@lru_cache(maxsize=1)
def _entries() -> dict[str, tuple[str, Glossary]]:
    # name -> (clinical name, its glossary); a name in two glossaries is refused, as a name
    # given twice in one file is (a second clinical name would be kept silently).
    out: dict[str, tuple[str, Glossary]] = {}
    for source in GLOSSARIES:
        for name, clinical in source.rows().items():
            if name in out:
                row = next(r for r in read_rows(source.path, 2) if r.cells[0] == name)
                raise row.error(f"{name!r} is given in {out[name][1].path.name} too")
            out[name] = (clinical, source)
    return out


def glossary() -> dict[str, str]:
    """Every glossary's rows, name -> clinical name, in the files' order."""
    return {name: clinical for name, (clinical, _) in _entries().items()}


@lru_cache(maxsize=1)
def _by_key() -> dict[str, tuple[str, str, Glossary]]:
    # Keyed as the table stores keys (sorted words, space-joined): the form a lookup has.
    return {joined(key(name)): (name, clinical, source)
            for name, (clinical, source) in _entries().items()}


@lru_cache(maxsize=1)
def _single() -> frozenset[str]:
    # One word but for an article ("the clap"); not a word left when a generic head is
    # dropped ("Viking disease": "Viking" alone names nothing).
    return frozenset(stored for stored, (name, _, _) in _by_key().items()
                     if stored and " " not in stored and not GENERIC & set(tokens(name)))


def glossary_clinical(stored_key: str) -> str | None:
    """The clinical name of the glossaries' name with this stored key (:func:`.joined`), or
    None."""
    found = _by_key().get(stored_key)
    return found[1] if found else None


def single_word(word: str) -> bool:
    """Whether a glossary names a disease with this one (normalised) word alone ("piles",
    "basalioma")."""
    return word in _single()


def stated_pair(given: Key, truth: Key, named_apart: Callable[[Key, Key], bool]) -> str | None:
    """Why a glossary states ``given`` and ``truth`` are one disease, or None.

    Only for a name the sources give a concept of its own (``named_apart``: given, but not as
    a synonym of the clinical name). One no source gives reads as its clinical name's
    concepts already; one the sources give the disease keeps their verdict, sure or not.
    """
    if given == truth:
        return None
    for name_key, other in ((given, truth), (truth, given)):
        found = _by_key().get(joined(name_key))
        if found is None:
            continue
        name, clinical, source = found
        if key(clinical) == other and named_apart(name_key, other):
            return f"{name!r} is {source.kind} of {clinical!r} (the project's glossary)"
    return None

