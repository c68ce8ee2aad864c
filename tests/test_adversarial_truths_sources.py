"""The truths drawn from the terminology itself (``bench_adversarial.py --truths sources``):
disease concepts of ICD-10-CM, MeSH, the Disease Ontology and MONDO written as a clinician
writes them, each with its siblings as choices. Read from the bundled table only."""

from __future__ import annotations

import re

import pytest
from adversarial import answer
from adversarial_truths import Truths, half_of
from source_truths import MAX_WORDS, clinician_name, is_diagnosis, source_truths

from pytest_agentclinic.grading.terminology import key
from pytest_agentclinic.grading.terminology_table import Row
from pytest_agentclinic.grading.terms.concepts import default_terminology

#: One worker samples the table once (ten seconds), not one per worker.
pytestmark = pytest.mark.xdist_group("source_truths")


@pytest.fixture(scope="module")
def sample() -> Truths:
    return source_truths(40)


def test_a_few_concepts_of_each_source_are_sampled_the_same_every_time(sample: Truths) -> None:
    again = source_truths(40)
    assert [c.id for c in sample.pool.cases] == [c.id for c in again.pool.cases]
    assert [c.choices for c in sample.pool.cases] == [c.choices for c in again.pool.cases]
    by_source = {s: sum(c.id.startswith(f"{s}-") for c in sample.pool.cases)
                 for s in ("icd", "mesh", "doid", "mondo")}
    assert by_source == {"icd": 10, "mesh": 10, "doid": 10, "mondo": 10}
    assert len({key(c.diagnosis) for c in sample.pool.cases}) == 40


def test_the_halves_are_disjoint_and_cover_the_sample(sample: Truths) -> None:
    halves = {h: {c.diagnosis for c in sample.pool.cases if sample.half(c) == h} for h in "AB"}
    assert halves["A"] and halves["B"] and not halves["A"] & halves["B"]
    assert halves["A"] | halves["B"] == {c.diagnosis for c in sample.pool.cases}
    assert all(half_of(name) == h for h, names in halves.items() for name in names)


def test_no_sampled_truth_is_of_an_excluded_kind(sample: Truths) -> None:
    terms = default_terminology()
    for case in sample.pool.cases:
        name = case.diagnosis
        assert is_diagnosis(name, terms), name
        assert len(re.findall(r"[A-Za-z0-9']+", name)) <= MAX_WORDS, name
        assert not re.search(r"\b(?:other|unspecified|left|right)\b|,", name, re.I), name
        assert not case.choices or name in case.choices
        # the siblings are other diseases: none the same concept as the truth
        for wrong in (c for c in case.choices if c != name):
            link = terms.link(key(wrong), key(name))
            assert link is None or link.kind == "sibling", (name, wrong, link)


def test_the_shapes_are_filled_with_siblings_as_the_wrong_choices(sample: Truths) -> None:
    case = next(c for c in sample.pool.cases if len(c.choices) >= 3)
    wrong = [c for c in case.choices if c != case.diagnosis]
    assert answer("control", case, "craftmd", sample.pool) == \
        f"Final Diagnosis: {case.diagnosis}"
    said = answer("think_inside_answer", case, "craftmd", sample.pool)
    assert said is not None and f" or {wrong[0]}?" in said


@pytest.mark.parametrize(("source", "names", "natural", "written"), [
    # MeSH's inverted heading in natural order, in sentence case
    ("MESH:D1", ("Carcinoma, Small Cell",), [], "Small cell carcinoma"),
    # its own entry term in that order, as MeSH writes it
    ("MESH:D1", ("Leukemia, Myeloid, Acute", "Acute Myeloid Leukemia"), [],
     "Acute myeloid leukemia"),
    # the Disease Ontology's name of the concept, where it has the same words
    ("MESH:D1", ("Diabetes Mellitus, Type 2",), ["type 2 diabetes mellitus"],
     "type 2 diabetes mellitus"),
    # an eponym keeps its capital
    ("MESH:D1", ("Crohn Disease",), [], "Crohn disease"),
    # a heading that groups diseases names none, unless another source names the concept
    ("MESH:D1", ("Lung Diseases",), [], None),
    # ICD-10-CM's residual categories and coding axes, combination codes, a bracket's
    # eponym alone; a numbered subtype; a name of many words
    ("ICD:A00", ("Other specified gastroenteritis",), [], None),
    ("ICD:A00", ("Keratoconus, unspecified",), [], None),
    ("ICD:A00", ("Cellulitis of left lower limb",), [], None),
    ("ICD:A00", ("Type 2 diabetes mellitus with diabetic nephropathy",), [], None),
    ("ICD:A00", ("Forestier", "Ankylosing hyperostosis"), [], "Ankylosing hyperostosis"),
    ("MONDO:1", ("Charcot-Marie-Tooth disease type 2J",), [], None),
    ("MONDO:1", ("spastic paraplegia-optic atrophy-neuropathy and tremor syndrome",), [], None),
    ("MONDO:1", ("type 1 diabetes mellitus",), [], "type 1 diabetes mellitus"),
    # a class of diseases: only kind words and sites
    ("MONDO:1", ("kidney disorder",), [], None),
])
def test_a_name_is_written_as_a_clinician_writes_it(
        source: str, names: tuple[str, ...], natural: list[str], written: str | None) -> None:
    row = Row(source, source, (), ("p",) * len(names), tuple("" for _ in names), names)
    assert clinician_name(row, natural) == written
