"""The forms a truth is asked in (grading/terms/truth_forms.py) and the qualifier tables
stage 2 reads beside them (grading/terms/qualifiers.py)."""

from __future__ import annotations

from pytest_agentclinic.grading.terms.qualifiers import (
    NARROWING_QUALIFIERS,
    NEUTRAL_QUALIFIERS,
    PLACES,
    SOFT_QUALIFIERS,
)
from pytest_agentclinic.grading.terms.truth_forms import truth_forms


def test_a_truth_is_asked_as_written_first_then_without_its_closing_parenthetical() -> None:
    forms = truth_forms("ventricular septal defect (VSD)")
    assert forms[0] == "ventricular septal defect (VSD)"
    assert "ventricular septal defect" in forms and "VSD" in forms


def test_a_parenthetical_inside_the_name_is_no_name_of_the_truth() -> None:
    # "MEN" abbreviates the words before it, not type IIa.
    assert "MEN" not in truth_forms("multiple endocrine neoplasia (MEN) IIa")


def test_a_stated_cause_and_an_unspecified_clause_are_dropped_in_a_form_of_their_own() -> None:
    assert "Anetoderma" in truth_forms("Anetoderma associated with SLE")
    assert "Pneumonia" in truth_forms("Pneumonia, unspecified organism")
    assert truth_forms("Pneumonia") == ["Pneumonia"]


def test_a_qualifier_is_neutral_or_narrowing_never_both_and_every_place_is_one() -> None:
    assert not NEUTRAL_QUALIFIERS & NARROWING_QUALIFIERS
    assert PLACES <= SOFT_QUALIFIERS == NEUTRAL_QUALIFIERS | NARROWING_QUALIFIERS
