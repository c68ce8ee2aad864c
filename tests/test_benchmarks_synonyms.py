"""The synonym benchmark's pairs (benchmarks/bench_synonyms.py, benchmarks/leave_one_out.py):
what a source states as other names of one disease, and the round-2 definition it is printed
beside."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

bench = pytest.importorskip("bench_synonyms")
leave_one_out = pytest.importorskip("leave_one_out")
from tools.terminology_sources import Concept, table_rows  # noqa: E402


def _icd(code: str, label: str) -> Concept:
    return Concept(f"ICD:{code}", label, [], [("p", label)])


CONCEPTS = [
    _icd("A36.0", "Pharyngeal diphtheria [membranous angina]"),
    # one bracket over codes split by side: one statement
    _icd("M48.11", "Ankylosing hyperostosis [Forestier], occipito-atlanto-axial region"),
    _icd("M48.12", "Ankylosing hyperostosis [Forestier], cervical region"),
    # an injury: the bracket renames a bone, not the condition
    _icd("S62.11", "Fracture of triquetrum [cuneiform] bone of right wrist"),
    Concept("MONDO:1", "quistosis", [], [("p", "quistosis"), ("r", "Frobisher disease"),
                                        ("r", "quistosis type B, included")]),
]


def test_stated_pairs_are_disease_brackets_each_once() -> None:
    pairs = leave_one_out.synonym_pairs(CONCEPTS, "ICD")
    assert sorted(given for given, _ in pairs) == ["Forestier", "membranous angina"]


def test_the_round_2_definition_counted_every_bracket_form() -> None:
    givens = [given for given, _ in leave_one_out.synonym_pairs(CONCEPTS, "ICD", stated=False)]
    assert givens.count("Forestier") == 2
    assert any("cuneiform" in given for given in givens)


def test_a_condition_included_in_an_entry_is_no_stated_synonym() -> None:
    assert leave_one_out.synonym_pairs(CONCEPTS, "MONDO") == [("Frobisher disease", "quistosis")]
    assert len(leave_one_out.synonym_pairs(CONCEPTS, "MONDO", stated=False)) == 2


def test_pairs_are_classed_by_how_they_differ() -> None:
    assert bench.pair_class("torsion of the testis", "testis torsion") == (
        "word order, hyphens, punctuation")
    assert bench.pair_class("Pelvic Neoplasms", "Pelvic Neoplasm") == "plurals"
    assert bench.pair_class("Devic", "Neuromyelitis optica") == "eponym"
    assert bench.pair_class("SLE", "systemic lupus erythematosus") == "abbreviation"


def test_a_miss_is_put_down_to_the_name_the_other_sources_lack() -> None:
    # quistosis and its synonym known to a held-out terminology; "Frobisher disease" not
    mondo = [Concept("DOID:1", "quistosis", [], [("p", "quistosis"), ("s", "quistic fever")])]
    rows = {r.id: r for r in table_rows(mondo, {"DOID:1": "DOID:1"})}
    held = leave_one_out.terminology(mondo, rows, "MONDO")
    assert bench.why_missed("Frobisher disease", "quistosis", held) == (
        "the synonym unknown to the other sources")
    assert bench.why_missed("quistosis", "Frobisher disease", held) == (
        "the preferred name unknown to the other sources")
    assert bench.why_missed("Frobisher disease", "Smith fever", held) == (
        "neither name known to the other sources")
    assert bench.why_missed("quistic fever", "quistosis", held).startswith("both known, judged")


def test_curated_matches_join_clusters_but_never_two_concepts_of_one_ontology() -> None:
    concepts = [Concept("MESH:D1", "quistosis", [], [("p", "quistosis")]),
                Concept("DOID:1", "Frobisher disease", [], [("p", "Frobisher disease")]),
                Concept("DOID:2", "quistic fever", [], [("p", "quistic fever")])]
    clusters = leave_one_out.clusters_with(concepts, [("MESH:D1", "DOID:1"), ("MESH:D1", "DOID:2")])
    assert clusters["MESH:D1"] == clusters["DOID:1"] != clusters["DOID:2"]
    assert len(set(leave_one_out.clusters_with(concepts).values())) == 3


def test_what_the_build_learns_is_learned_again_without_the_source_left_out() -> None:
    from pytest_agentclinic.grading.terminology import word_forms
    from pytest_agentclinic.grading.terms import eponym_words, readings

    # MONDO alone gives the acronym and writes the eponym in the possessive
    concepts = [
        Concept("DOID:1", "quistosis", [], [("p", "quistosis")]),
        Concept("MONDO:1", "quistosis", [], [("p", "quistosis"),
                                            ("r", "Frobisher's disease")], acronyms=["QZD"]),
    ]
    shipped = (dict(word_forms()), eponym_words.eponyms(), readings.expansions("sle"))
    with leave_one_out.held_out(concepts, "MONDO"):
        assert readings.expansions("qzd") == ()
        assert "frobisher" not in eponym_words.eponyms()
    with leave_one_out.held_out(concepts, "ICD"):
        assert readings.expansions("qzd") == ("quistosis",)
        assert "frobisher" in eponym_words.eponyms()
    # the bundled files are read again on leaving
    assert (dict(word_forms()), eponym_words.eponyms(), readings.expansions("sle")) == shipped
    assert shipped[2]  # the bundled abbreviations know "SLE"


def test_written_pairs_are_counted_by_class_both_ways_round(tmp_path: Path) -> None:
    from pytest_agentclinic.grading.terminology_table import DATA_FILE

    if not DATA_FILE.exists():
        pytest.skip(f"{DATA_FILE} not built")
    pairs = tmp_path / "classes.tsv"
    pairs.write_text("# class\tgiven\ttruth\nlay name\tshingles\therpes zoster\n"
                     "lay name\tpsoriasis\teczema\nword order\tcyst of the ovary\tovarian cyst\n",
                     encoding="utf-8")
    assert bench.class_recall(pairs) == {"lay name": (2, 4), "word order": (2, 2)}
