"""The abbreviations of a truth the red team writes (``tests/fixtures/adversarial.yaml``'s
``{abbr1}``, ``{abbr1_dotted}``, ``{abbr_several}``, ``{abbr_several_lower}``,
``{abbr_several_dotted}``; red team round 20, docs/grading.md).

``{abbr1}`` is an abbreviation the sources give for the truth's disease and for nothing
else: every disease the sources' list (``abbreviations.tsv``) gives the letters for is the
truth's (one of its concepts, or a synonym, kind or wider name of it), and every concept a
source names by the letters is too. ``{abbr_several}`` is one they also give for another
disease that shares no identifying word with the truth ("MDS": myelodysplastic syndrome,
Miller-Dieker syndrome), nor with the case's other accepted names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from pytest_agentclinic.grading.judging.word_guards import written_words
from pytest_agentclinic.grading.terminology import GENERIC
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.equivalence import compare
from pytest_agentclinic.grading.terms.readings import all_expansions, names_a_disease

#: The relations that make a disease the truth's own.
_OWN = ("same", "synonym", "narrower", "broader")
_LETTERS = re.compile(r"[a-z][a-z0-9]{1,7}")


@cache
def _by_cluster() -> dict[str, tuple[str, ...]]:
    terms = default_terminology()
    found: dict[str, set[str]] = {}
    for letters, names in all_expansions().items():
        if _LETTERS.fullmatch(letters):
            for name in names:
                for ident in terms.concepts(name)[1]:
                    found.setdefault(terms.cluster(ident), set()).add(letters)
    return {c: tuple(sorted(v)) for c, v in found.items()}


def abbreviation_slots(truth: str, accepted: Iterable[str] = ()) -> dict[str, str]:
    """The placeholders above that ``truth`` has (none when it has no such abbreviation);
    ``accepted``, the case's other names, share no identifying word with the other disease
    either."""
    terms = default_terminology()
    home = {terms.cluster(i) for i in terms.concepts(truth)[1]}
    letters = sorted({x for c in home for x in _by_cluster().get(c, ())},
                     key=lambda x: (len(x), x))
    mine = {w for name in (truth, *accepted) for w in written_words(name)} - GENERIC

    def own(name: str) -> bool:
        return bool({terms.cluster(i) for i in terms.concepts(name)[1]} & home) or (
            compare(name, truth).kind in _OWN)

    values: dict[str, str] = {}
    for x in letters:
        named = all_expansions()[x]
        known = [terms.label(i).partition(": ")[2] for i in terms.concepts(x.upper())[1]]
        if "abbr1" not in values and all(map(own, _both(named, known))):
            values["abbr1"] = x.upper()
            if x.isalpha():
                values["abbr1_dotted"] = "".join(f"{c}." for c in x.upper())
        elif "abbr_several" not in values and any(
                not own(n) and not set(written_words(n)) & mine and names_a_disease(n, terms)
                for n in named):
            values["abbr_several"] = x.upper()
            values["abbr_several_lower"] = x
            if x.isalpha():
                values["abbr_several_dotted"] = "".join(f"{c}." for c in x.upper())
    return values


def _both(named: Iterable[str], known: Iterable[str]) -> list[str]:
    return [*named, *known]
