"""Red team round 20: a source's own typo is no word; a hedge between two names under the
paper policy; the abbreviations a model writes for the truth (docs/grading.md, round 20)."""

from __future__ import annotations

import pytest
from helpers import POLICIES, scores

from pytest_agentclinic.grading.terminology_table import read_table
from pytest_agentclinic.grading.terminology_typos import source_typos
from pytest_agentclinic.grading.terms.concepts import default_terminology


def test_the_sources_typos_are_misspellings() -> None:
    # every word the rule turns into a typo, on the bundled table: each one a misspelling
    # of the common word one edit away (the rule reads no list of words)
    _, rows = read_table()
    entries = [(r.id, r.grades, r.keys) for r in rows]
    parents = {r.id: r.parents for r in rows}
    written = {w for r in rows for g, k in zip(r.grades, r.keys, strict=True) if g == "p"
               for w in k.split()}
    assert source_typos(entries, parents, written) == {
        "deficency", "disabillity", "famililal", "hemorragic", "infectous", "maligant"}


def test_a_typo_is_no_word_real_rare_words_are() -> None:
    terms = default_terminology()
    assert not terms.is_word("deficency") and terms.is_word("deficiency")
    # rare words one edit from a common one stay words
    for word in ("hemobilia", "rubella", "caruncle", "aphagia", "paraplegic", "heating"):
        assert terms.is_word(word), word


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth", "expected"), [
    ("IgA deficency", "IgA deficiency", True),
    ("Adenosine deaminase deficency", "Adenosine deaminase deficiency", True),
    ("The most likely diagnosis is IgA deficency.", "IgA deficiency", True),
    # a slip two known names are as close to (hemophilia, hemobilia) is not read as either
    ("Hemopilia A", "Hemophilia A", False),
    ("Hemobilia", "Hemobilia", True),
    ("Rubeola", "Rubella", False),
])
def test_a_slip_of_a_word_a_source_misspells(answer: str, truth: str, policy: str,
                                             expected: bool) -> None:
    correct, sure = scores(answer, truth, policy)
    assert correct is expected and (sure or not correct)
