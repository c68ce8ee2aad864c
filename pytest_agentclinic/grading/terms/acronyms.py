"""The name an abbreviation of the sources abbreviates, among the names of its concept.

A source lists an acronym among a concept's names for the name it abbreviates: MONDO gives
"SCFE" to its "epiphysiolysis of the hip", whose synonym "slipped capital femoral
epiphysis" the letters spell. The build keeps one name per disease for each abbreviation
(``abbreviations.tsv``, the concept's preferred name); this module gives the names of that
concept the letters spell, so that :func:`.readings.ambiguous` and the guard rail of
:mod:`..judging.initials` read "SCFE" as one disease, not two.

The pairs are derived from the bundled table by :func:`derive_spelled` and kept beside it
(``data/abbreviation_names.tsv``), so that grading need not read the whole table:
``python -c "from pytest_agentclinic.grading.terms.acronyms import write_spelled;
from pytest_agentclinic.grading.terms.readings import all_expansions;
write_spelled(all_expansions())"`` after a table build (a test checks that the two agree).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from ..terminology import FILLER, key
from ..terminology_table import DATA_FILE, read_table

__all__ = ["SPELLED_FILE", "derive_spelled", "initials", "spelled_names", "write_spelled"]

SPELLED_FILE = Path(__file__).parent.with_name("data") / "abbreviation_names.tsv"
_WORD = re.compile(r"[A-Za-z]+")


def spelled_names(letters: str, name: str) -> tuple[str, ...]:
    """The other names the sources give the concepts whose preferred name is ``name`` (a
    name the sources give the abbreviation ``letters`` for) that the letters spell
    (:func:`initials`); empty for any other name."""
    return _spelled().get((letters.lower(), name), ())


def initials(name: str) -> set[str]:
    """The letters that spell ``name``: its words' initials, with or without the function
    words ("mal de Debarquement" is "MDD", "ichthyosis bullosa of Siemens" "IBS"), of the
    whole name and of the name before a comma, which begins its kind ("Guillain-Barre
    syndrome, familial" is "GBS", as :func:`.readings.spelled_out` reads "EBS-Dowling
    Meara"); lower case."""
    found: set[str] = set()
    for part in {name, name.split(",")[0]}:
        words = _WORD.findall(part)
        found |= {"".join(w[0] for w in words).lower(),
                  "".join(w[0] for w in words if w.lower() not in FILLER).lower()}
    return found


@lru_cache(maxsize=1)
def _spelled(path: Path = SPELLED_FILE) -> dict[tuple[str, str], tuple[str, ...]]:
    if not path.exists():
        return {}
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            letters, name, names = line.split("\t")
            found[(letters, name)] = tuple(names.split("|"))
    return found


def derive_spelled(abbreviations: Mapping[str, Sequence[str]],
                   table: Path = DATA_FILE) -> dict[tuple[str, str], tuple[str, ...]]:
    """For each abbreviation (lower case) and each name the sources give it for
    (``abbreviations``: :func:`.readings.all_expansions`), the other names of the concepts
    whose preferred name that is, which the letters spell, sorted."""
    wanted: dict[frozenset[str], list[tuple[str, str]]] = {}
    for letters, names in abbreviations.items():
        for name in names:
            wanted.setdefault(key(name), []).append((letters, name))
    found: dict[tuple[str, str], set[str]] = {}
    for row in read_table(table)[1] if table.exists() else []:
        for grade, name_key in zip(row.grades, row.keys, strict=False):
            pairs = wanted.get(frozenset(name_key.split())) if grade == "p" else None
            for letters, given in pairs or ():
                own = key(given)
                found.setdefault((letters, given), set()).update(
                    n for n in row.names if letters in initials(n) and key(n) != own)
    return {pair: tuple(sorted(names)) for pair, names in sorted(found.items()) if names}


def write_spelled(abbreviations: Mapping[str, Sequence[str]], table: Path = DATA_FILE,
                  path: Path = SPELLED_FILE) -> None:
    """Write :func:`derive_spelled` to ``path``: letters, name, the names it spells."""
    lines = ["# abbreviation<TAB>a name the sources give it for<TAB>that concept's names the "
             "letters spell (acronyms.derive_spelled)",
             *(f"{letters}\t{name}\t{'|'.join(names)}"
               for (letters, name), names in derive_spelled(abbreviations, table).items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _spelled.cache_clear()
