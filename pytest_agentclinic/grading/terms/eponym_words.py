"""Eponyms: the words the sources write in the possessive in a disease name ("Crohn's
disease", "Graves' disease", "Sjögren's syndrome"). A person's name, whose possessive, bare
("Crohn disease") and apostrophe-less ("Crohns disease") forms are one name
(:func:`possessive`); the list (:func:`eponyms`) is read off the bundled table when it is
built and kept beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ...core.text import bounded_cache
from ..terminology import content
from ..terminology_table import DATA_FILE, read_table

__all__ = ["EPONYMS_FILE", "derive_eponyms", "eponyms", "eponyms_in", "possessive",
           "write_eponyms"]

# A word in the possessive, as the sources write eponyms: "Crohn's", "Graves'", "Sjögren's".
_POSSESSIVE = re.compile(r"([^\W\d_][\w-]*)['\u2019]s?(?!\w)")


#: The eponyms in use (:func:`eponyms`), derived from the bundled table by
#: :func:`derive_eponyms` and kept beside it, so that grading need not read the whole table:
#: ``python -c "from pytest_agentclinic.grading.terms.eponym_words import write_eponyms;
#: write_eponyms()"`` after a table build (a test checks that the two agree).
EPONYMS_FILE = Path(__file__).parent.with_name("data") / "eponyms.txt"


@lru_cache(maxsize=1)
def eponyms(path: Path = EPONYMS_FILE) -> frozenset[str]:
    """The eponyms of the terminology's disease names, as key words: each word a source writes
    in the possessive in a name ("Crohn's disease" gives "crohn", "Graves' disease" "grave",
    by the normaliser's plural fold, as it reads "Graves" and "Graves'" alike); empty when the
    file is absent."""
    if not path.exists():
        return frozenset()
    return frozenset(line for line in path.read_text(encoding="utf-8").splitlines()
                     if line and not line.startswith("#"))


def derive_eponyms(table: Path = DATA_FILE) -> frozenset[str]:
    """:func:`eponyms` read from the terminology table's names."""
    return eponyms_in(name for row in read_table(table)[1] for name in row.names)


def eponyms_in(names: Iterable[str]) -> frozenset[str]:
    """The words ``names`` write in the possessive, as key words (:func:`eponyms`)."""
    found: set[str] = set()
    for name in names:
        for match in _POSSESSIVE.finditer(name):
            words = content(match.group(1))
            if len(words) == 1:
                found.add(words[0])
    return frozenset(found)


def write_eponyms(table: Path = DATA_FILE, path: Path = EPONYMS_FILE) -> None:
    """Write :func:`derive_eponyms` of ``table`` to ``path``, one a line, sorted."""
    lines = ["# eponyms: words the terminology's disease names write in the possessive, as "
             "key words (eponym_words.derive_eponyms)", *sorted(derive_eponyms(table))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    eponyms.cache_clear()


_S_WORD = re.compile(r"\b([^\W\d_]{3,})s\b")


@bounded_cache
def possessive(name: str) -> str:
    """``name`` with an eponym's possessive written without its apostrophe read as one
    ("Peyronies disease": Peyronie's disease), where the normaliser would read the word as a
    plural of another ("peyrony", as "biopsies" is read "biopsy"): a word ending in "s" whose
    stem is one of the :func:`eponyms` and whose own reading is not."""
    def read(match: re.Match[str]) -> str:
        stem = content(match.group(1))
        if len(stem) == 1 and stem[0] in eponyms() and content(match.group(0)) != stem:
            return f"{match.group(1)}'s"
        return match.group(0)
    return _S_WORD.sub(read, name)
