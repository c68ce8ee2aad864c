from __future__ import annotations

import pytest

from pytest_agentclinic.core.text import key_words, variants, words
from pytest_agentclinic.grading.matcher import extract_ready_diagnosis, match_diagnosis


@pytest.mark.parametrize(("given", "accepted"), [
    ("PE", ["Pulmonary embolism"]),
    ("pulmonary embolism", ["PE"]),
    ("Progressive multifocal leukoencephalopathy", ["Progressive multifocal encephalopathy (PML)"]),
    ("I believe this is myasthenia gravis, likely autoimmune", ["Myasthenia gravis"]),
    ("Haemolytic anaemia", ["Hemolytic anemia"]),
    ("psoriasis", ["Plaque psoriasis"]),  # broader than the truth counts
    ("Guillain\u2013Barr\u00e9 syndrome", ["Guillain-Barre syndrome"]),
])
def test_accepts_equivalent_names(given: str, accepted: list[str]) -> None:
    assert match_diagnosis(given, accepted).correct is True


@pytest.mark.parametrize(("given", "accepted"), [
    ("Lambert-Eaton syndrome", ["Myasthenia gravis"]),
    ("Asthma", ["Chronic obstructive pulmonary disease"]),
])
def test_rejects_other_conditions(given: str, accepted: list[str]) -> None:
    assert match_diagnosis(given, accepted).correct is False


def test_partial_overlap_is_undecided() -> None:
    match = match_diagnosis("bacterial meningitis", ["Tuberculous meningitis"])
    assert match.correct is None and 0 < match.coverage < 1


def test_normalisation_helpers() -> None:
    assert words("ECG & CXR") == ("electrocardiogram", "chest", "x", "ray")
    assert variants("Progressive multifocal encephalopathy (PML)") == [
        "Progressive multifocal encephalopathy (PML)", "Progressive multifocal encephalopathy",
        "PML"]
    assert key_words("Acute kidney injury") == frozenset({"kidney", "injury"})


@pytest.mark.parametrize(("text", "expected"), [
    ("DIAGNOSIS READY: Asthma", "Asthma"),
    ("Thanks.\n**DIAGNOSIS READY:** Myasthenia gravis.\nFollow up soon.", "Myasthenia gravis"),
    ("diagnosis ready - Lyme disease", "Lyme disease"),
    ("What brings you in?", None),
])
def test_extract_ready_diagnosis(text: str, expected: str | None) -> None:
    assert extract_ready_diagnosis(text) == expected
