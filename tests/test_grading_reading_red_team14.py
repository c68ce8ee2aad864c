"""Red team round 14: roles beat kinds. A name the answer marks final, most likely or working
is the main diagnosis whatever its kind, and a name it marks differential, less likely or
ruled out is set aside; a hedge on the first of two names ranks two candidates; a condition
marked incidental is concurrent (docs/grading.md, round 14; issue 31, *Main and
concurrent*: "the one marked final or most likely" decides, and "the truth only in a
secondary role never scores"; the paper's step 1)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.roles import stated_roles

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
# the truth, a disease beside it, a laboratory state and an examination finding
T, W, LAB, SIGN = "Sarcoidosis", "Gout", "hypokalemia", "hepatomegaly"


def _said(shape: str, wrap: str = "{}") -> str:
    return wrap.format(shape.format(t=T, w=W, lab=LAB, sign=SIGN))


@pytest.mark.parametrize("shape", [
    # the name marked final is the answer; the one marked differential is set aside, a
    # disease or a laboratory state alike, in either order
    "{w} (differential), {t} (final)", "{t} (final), {w} (differential)",
    "{lab} (differential), {t} (final)", "{t} (final), {lab} (differential)",
    "{t} (most likely), {lab} (less likely)", "{t} (working diagnosis), {w} (differential)",
    "{t} (definitive), {w} (excluded)", "{t} (leading diagnosis); {lab} (ruled out)",
    "{t} (leading diagnosis)", "{t} (principal diagnosis)",
    # a condition the answer calls incidental is concurrent
    "{t} (final); {lab} (incidental)", "Likely {t}; {lab} noted incidentally.",
    "My leading diagnosis is {t}, with {lab} as an incidental finding.",
    "Granulomatosis with polyangiitis with associated {lab}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_name_marked_main_scores(shape: str, wrap: str) -> None:
    answer = _said(shape, wrap)
    truth = "Granulomatosis with polyangiitis" if "polyangiitis" in shape else T
    assert STRICT.grade_frq(answer, truth).verdict == 1, extract(answer)


@pytest.mark.parametrize("shape", [
    # a laboratory state marked final, the truth set aside (it had scored: the finding was
    # read as concurrent beside the truth, the role notes dropped)
    "{t} (differential), {lab} (final)", "{lab} (final), {t} (differential)",
    "{lab} (final), {t} (ruled out)", "{lab} (most likely), {t} (less likely)",
    "{sign} (working diagnosis), {t} (differential)", "{w} (final), {t} (excluded)",
    # a hedge on the first name ranks two candidates: alternatives, not a sign and its cause
    "Probably {lab}, maybe {t}.", "Probable {lab}, possible {t}",
    "Most likely {lab}, possibly {t}", "Suspected {sign}, possibly {t}",
    # the truth incidental beside a laboratory state marked final
    "{lab} (final); {t} (incidental)"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_in_a_secondary_role_never_scores(shape: str, wrap: str) -> None:
    answer = _said(shape, wrap)
    assert STRICT.grade_frq(answer, T).verdict == 0, extract(answer)


@pytest.mark.parametrize("shape", [
    "{lab} (final), {t} (differential)", "{lab} (most likely), {t} (less likely)",
    "{lab} (final), {t} (ruled out)", "Probably {lab}, maybe {t}."])
def test_a_name_set_aside_matches_under_paper_neither(shape: str) -> None:
    # under ``paper`` a concurrent name may match; a name set aside or an alternative never
    assert PAPER.grade_frq(_said(shape), T).verdict == 0, extract(_said(shape))


@pytest.mark.parametrize("shape", [
    # an unhedged sign with one suspected cause still names the cause (round 10's rule)
    "{sign}, possibly {t}", "{lab} due to {t}", "Probably {lab} secondary to {t}",
    # an unmarked finding beside the truth is concurrent, as before
    "{t}, {lab}", "{t} with {lab} and {sign}"])
def test_unmarked_findings_stay_concurrent(shape: str) -> None:
    assert STRICT.grade_frq(_said(shape), T).verdict == 1, extract(_said(shape))


def test_roles_need_every_item_marked_and_one_main() -> None:
    assert stated_roles("Gout (final), Sarcoidosis (differential)") == ("Gout", ("Sarcoidosis",))
    assert stated_roles("1. Gout (differential)\n2. Sarcoidosis (final)") is not None
    # an item without a role, two marked final, or none: the other rules decide
    assert stated_roles("Gout (final), Sarcoidosis") is None
    assert stated_roles("Gout (final), Sarcoidosis (final)") is None
    assert stated_roles("Gout (differential), Sarcoidosis (ruled out)") is None
    assert stated_roles("Gout (final)") is None


@pytest.mark.parametrize("shape", [
    # a name still to rule out is kept open, an alternative: never set aside as excluded
    "{lab} (primary), {t} (to be ruled out)", "{w} (primary), {t} (to be ruled out)",
    "{lab}, {t} (r/o)"])
def test_a_name_still_to_rule_out_is_an_alternative(shape: str) -> None:
    for grader in (STRICT, PAPER):
        assert grader.grade_frq(_said(shape), T).verdict == 0, extract(_said(shape))
    assert extract(_said(shape)).category == "multiple"


def test_an_inverted_heading_is_not_read_across_two_names() -> None:
    # "Hypomagnesemia, primary" is a heading as written; followed by the rest of a known name
    # ("primary sclerosing cholangitis") the comma joins a finding and a disease
    found = extract("hypomagnesemia, primary sclerosing cholangitis")
    assert found.diagnosis == "hypomagnesemia"
    assert [m.text for m in found.mentions][1:] == ["primary sclerosing cholangitis"]
    assert extract("Hand, foot and mouth disease").diagnosis == "Hand, foot and mouth disease"
    assert extract("Diabetes mellitus, type 2").diagnosis == "Diabetes mellitus, type 2"
