"""Issue 31, part 2 (round 7): names no source lists, read as the usual form of one disease's
name: a Latin epithet left out ("molluscum" for molluscum contagiosum). It holds only where
the sources name one disease so (docs/grading.md, docs/terminology.md)."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.terminology import key
from pytest_agentclinic.grading.terminology_memory import MemoryIndex, joined
from pytest_agentclinic.grading.terminology_table import DATA_FILE, Row
from pytest_agentclinic.grading.terms.concepts import Terminology, default_terminology
from pytest_agentclinic.grading.terms.equivalence import judge
from pytest_agentclinic.grading.terms.short_forms import (
    epithet,
    epithet_left_out,
)

needs_table = pytest.mark.skipif(not DATA_FILE.exists(), reason=f"{DATA_FILE} not built")


@needs_table
@pytest.mark.parametrize(("answer", "truth"), [
    # the truth the name's usual short form, its Latin epithet left out
    ("molluscum contagiosum", "Molluscum"),
    ("lichen simplex chronicus", "Lichen simplex"),
    ("Discoid lupus erythematosus", "Discoid lupus"),
])
def test_the_full_name_of_a_usual_form_scores(answer: str, truth: str) -> None:
    verdict = judge(answer, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)
    grade = CraftMDGrader(policy="strict").grade_frq(answer, truth)
    assert int(grade.verdict) == 1 and grade.sure


@needs_table
@pytest.mark.parametrize(("answer", "truth"), [
    # the truth a disease of its own, above the answer: the hierarchy decides
    ("psoriasis vulgaris", "Psoriasis"),
    ("hidradenitis suppurativa", "Hidradenitis"),
    # the sources give the short form to two diseases (condyloma latum, condylomata acuminata)
    ("condyloma acuminatum", "Condyloma"),
    ("condyloma latum", "Condyloma"),
    # the eponym names several diseases (Wernicke aphasia, Wernicke encephalopathy)
    ("Wernicke encephalopathy", "Wernicke disease"),
    # another disease of the class is not the eponym's disease
    ("leukocytoclastic vasculitis", "Henoch-Schönlein vasculitis"),
])
def test_no_usual_form_where_the_sources_name_no_one_disease_so(answer: str,
                                                                 truth: str) -> None:
    assert not judge(answer, truth).correct


def test_an_epithet_is_a_latin_adjective_naming_no_disease_or_place() -> None:
    terms = default_terminology()
    assert all(epithet(w, terms) for w in ("contagiosum", "chronicus", "acuminatum",
                                           "suppurativa", "vulgaris", "gravidarum"))
    # a disease, a place, a generic head, an English word
    assert not any(epithet(w, terms) for w in ("nephritis", "vulva", "disease", "giant"))


def _row(ident: str, *names: str, grade: str = "p", parents: tuple[str, ...] = ()) -> Row:
    grades = (grade, *("s" * (len(names) - 1)))
    return Row(ident, ident, parents, grades, tuple(joined(key(n)) for n in names), names)


def _terms(*rows: Row) -> Terminology:
    return Terminology(MemoryIndex(rows))


def test_a_rival_name_one_source_alone_gives_as_an_entry_term_is_out_of_use() -> None:
    contagious = _row("DOID:1", "quistum contagiosum")
    old_name = _row("MESH:D2", "Neurofibrosis", "Quistum Fibrosum")
    terms = _terms(contagious, old_name)
    given, truth = "quistum contagiosum", "Quistum"
    assert epithet_left_out(given, truth, key(given), key(truth), terms) is not None
    # a disease whose own name it is, is a rival in use: two diseases, no short form
    terms = _terms(contagious, _row("ICD:A1", "Quistum fibrosum"))
    assert epithet_left_out(given, truth, key(given), key(truth), terms) is None


def test_a_word_between_the_short_form_and_the_epithet_is_no_short_form() -> None:
    terms = _terms(_row("DOID:1", "quistum of the skin contagiosum"))
    given, truth = "quistum of the skin contagiosum", "Quistum"
    assert epithet_left_out(given, truth, key(given), key(truth), terms) is None


def test_names_with_words_are_every_known_name_that_has_them() -> None:
    terms = _terms(_row("DOID:1", "quistum contagiosum"), _row("DOID:2", "quistum fibrosum"),
                   _row("DOID:3", "fibrosum"))
    assert set(terms.names_with(frozenset({"quistum"}))) == {
        key("quistum contagiosum"), key("quistum fibrosum")}
    assert terms.names_with(frozenset({"quistum", "fibrosum"})) == (key("quistum fibrosum"),)
    assert terms.names_with(frozenset({"nothing"})) == ()


@needs_table
def test_a_truth_that_is_two_names_of_the_answers_disease_run_together_is_its_synonym() -> None:
    # "epidermal cyst" (MeSH, ICD-10-CM) and "inclusion cyst" (MONDO) name the epidermoid cyst
    verdict = judge("epidermoid cyst", "Epidermal inclusion cyst")
    assert (verdict.correct, verdict.relation) == (True, "synonym")
    # a cyst the sources tell apart stays another disease
    assert not judge("sebaceous cyst", "Epidermal inclusion cyst").correct


@needs_table
@pytest.mark.parametrize("answer", ["borreliosis", "Borrelia infection"])
def test_a_disease_named_after_its_organism_is_placed_by_both_its_names_sources(
        answer: str) -> None:
    # MONDO puts borreliosis above Lyme disease, MeSH the Borrelia infections: one disease by
    # the nomenclature, so two sources state the broader link
    verdict = judge(answer, "Lyme disease")
    assert (verdict.correct, verdict.relation) == (True, "broader")
    assert "MESH" in verdict.reason and "MONDO" in verdict.reason
    # and the kind for the family stays narrower
    assert not judge("Lyme disease", answer).correct
