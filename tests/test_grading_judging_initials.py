"""Issue 31's guard rail on abbreviations (grading/judging/initials.py, grading/terms/readings.py):
an abbreviation alone is not resolved toward the truth when it stands for several *distinct
diseases*; the names the sources give one disease under, and names of no disease, make no
second one. Fast: the offline grader only, in both protocols' wrapping."""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.initials import distinct_diseases
from pytest_agentclinic.grading.terminology_table import DATA_FILE
from pytest_agentclinic.grading.terms.acronyms import (
    SPELLED_FILE,
    _spelled,
    derive_spelled,
    spelled_names,
)
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.readings import all_expansions, ambiguous, expansions

WRAPPERS = ("DIAGNOSIS READY: {}", "Final Diagnosis: {}")
STRICT = CraftMDGrader()


def scores(answer: str, truth: str) -> list[int]:
    """The verdict in each protocol's wrapping."""
    return [STRICT.grade_frq(wrap.format(answer), truth).verdict for wrap in WRAPPERS]


@pytest.mark.parametrize(("answer", "truth"), [
    # every expansion the sources give is the truth under another name: MONDO's
    # "epiphysiolysis of the hip" and EFO's "Epiphyses, Slipped" list "slipped capital
    # femoral epiphysis", which "SCFE" spells, among their own names
    ("SCFE", "Slipped capital femoral epiphysis"),
    # EFO's concept that carries "GBS" also carries "Guillain-Barre syndrome, familial", a
    # kind of the truth: "GBS" spells the name before its comma
    ("GBS", "Guillain-Barre syndrome"),
    # the other expansion names no disease: ICD-10-CM's Z95.810 ("Presence of automatic
    # cardiac defibrillator") is a factor influencing health
    ("ICD", "Impulse control disorder"),
])
def test_an_abbreviation_whose_expansions_are_one_disease_scores(answer: str,
                                                                  truth: str) -> None:
    assert scores(answer, truth) == [1, 1]


@pytest.mark.parametrize(("answer", "truth"), [
    # two distinct diseases the sources give the letters for, either way round
    ("OCD", "Obsessive-compulsive disorder"), ("OCD", "Osteochondritis dissecans"),
    ("NEC", "Necrotizing enterocolitis"),
    # MONDO gives "MDD" to mal de debarquement as well as to major depression
    ("MDD", "Major depressive disorder"),
    # the sources give the letters for a finding only (ICD-10-CM's R79.82, "Elevated
    # C-reactive protein"): no disease of theirs is the truth, which only its initials spell
    ("CRP", "Complex regional pain syndrome"),
])
def test_an_abbreviation_of_two_distinct_diseases_never_scores(answer: str,
                                                                truth: str) -> None:
    assert scores(answer, truth) == [0, 0]


def test_the_diseases_left_apart_are_the_distinct_ones() -> None:
    left = distinct_diseases("OCD", expansions("OCD"), ["obsessive-compulsive disorder"])
    # the personality disorder shares the truth's words; the joint disease shares none
    assert left == ["osteochondritis dissecans"]
    assert distinct_diseases("SCFE", expansions("SCFE"),
                             ["slipped capital femoral epiphysis"]) == []
    # a reading that names no disease is none to choose between
    named = ["impulse control disorder", "Presence of automatic cardiac defibrillator"]
    assert distinct_diseases("ICD", named, ["impulse control disorder"]) == []
    assert distinct_diseases("ICD", [*named, "Ramos-Arroyo syndrome"],
                             ["impulse control disorder"]) == ["Ramos-Arroyo syndrome"]
    # but a name of no disease alone is what the letters stand for
    assert distinct_diseases("CRP", ["Elevated C-reactive protein"],
                             ["complex regional pain syndrome"]) == ["Elevated C-reactive protein"]


def test_an_expansion_is_read_by_the_name_the_abbreviation_spells() -> None:
    assert "slipped capital femoral epiphysis" in spelled_names(
        "SCFE", "epiphysiolysis of the hip")
    # with the function words or without them
    assert "ichthyosis bullosa of Siemens" in spelled_names(
        "IBS", "superficial epidermolytic ichthyosis")
    assert spelled_names("XYZ", "epiphysiolysis of the hip") == ()


@pytest.mark.parametrize(("letters", "reading", "expected"), [
    ("SCFE", "slipped capital femoral epiphysis", False),
    ("GBS", "Guillain-Barre syndrome", False),
    ("OCD", "obsessive-compulsive disorder", True),
    ("MDD", "major depressive disorder", True),
])
def test_the_reading_of_an_abbreviation_groups_its_expansions_alike(
        letters: str, reading: str, expected: bool) -> None:
    # the spelling-out of an abbreviation (readings.spelled_out) asks the same question
    assert ambiguous(letters, reading, default_terminology()) is expected


@pytest.mark.skipif(not DATA_FILE.exists(), reason=f"{DATA_FILE} not built")
def test_the_bundled_spelled_names_are_the_ones_the_table_gives() -> None:
    # rewrite the file after a table build (terms/acronyms.py says how)
    assert SPELLED_FILE.exists()
    assert _spelled() == derive_spelled(all_expansions())
