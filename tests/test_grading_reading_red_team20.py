"""Red team round 20: a source's own typo is no word; a hedge between two names under the
paper policy; the abbreviations a model writes for the truth (docs/grading.md, round 20)."""

from __future__ import annotations

import pytest
from helpers import POLICIES, assert_linear, scores

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


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a likelihood word between two diseases no source classes together: two possible
    # diagnoses (the paper's step 1), under both policies
    ("Psoriasis, probably pneumonia", "pneumonia"),
    ("Psoriasis (likely pneumonia)", "pneumonia"),
    ("Pneumonia, most likely psoriasis", "pneumonia"),
    ("Anterior cord syndrome, most likely IgA deficiency", "IgA deficiency"),
    ("Gout, presumably melanoma", "melanoma"),
])
def test_a_hedge_between_two_diseases_is_two(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (False, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a finding before the hedge, a kind of the first name, a qualifier: one diagnosis
    ("Fever, probably pneumonia", "pneumonia"),
    ("Chest pain (likely pneumonia)", "pneumonia"),
    ("IBD, probably Crohn disease", "Crohn disease"),
    ("Pneumonia, likely viral", "pneumonia"),
    # one class of one source: the likelihood word narrows the first name (the recorded
    # grader's reading; round 18)
    ("Pituitary tumor, likely a craniopharyngioma", "craniopharyngioma"),
])
def test_a_hedge_that_refines_stays_one(answer: str, truth: str, policy: str) -> None:
    if "craniopharyngioma" in answer:  # the kind beside its class: compared under paper
        assert scores(answer, truth, policy)[0] is (policy == "paper")
        return
    assert scores(answer, truth, policy) == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # two capitals alone, the sources' list giving them for one disease
    ("MG", "Myasthenia gravis"),
    ("The most likely diagnosis is MG.", "Myasthenia gravis"),
    # letters and a digit
    ("HDDD1", "Frontotemporal dementia"),
    # known only as a bare word once its class word is dropped ("SLO syndrome")
    ("SLOS", "Smith-Lemli-Opitz syndrome"),
    # capitals with an adjective's ending are initials, not an adjective
    ("OIC", "Opioid-induced constipation"),
    ("**WED**", "Restless legs syndrome"),
    # a full stop after each capital
    ("A.L.L.", "Acute lymphoblastic leukemia"),
    ("Final diagnosis: F.T.D.", "Frontotemporal dementia"),
    # the long form in a bracket after the letters, spelled by them or given by the sources
    ("GBM (glioblastoma)", "Glioblastoma"),
    ("MC (cryoglobulinemic vasculitis)", "Cryoglobulinemic vasculitis"),
    # the long form says which disease letters of several mean
    ("PSC (primary sclerosing cholangitis)", "Primary sclerosing cholangitis"),
    ("MDS (myelodysplastic syndrome)", "Myelodysplastic syndrome"),
    # the plural with a small "s"
    ("CSPs", "Phyllodes tumor"),
    ("UTIs", "Urinary tract infection"),
])
def test_an_abbreviation_for_one_disease_scores(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == (True, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # the sources give these letters for two diseases apart ("syndrome" is no shared word)
    ("MDS", "Myelodysplastic syndrome"),
    ("M.D.S.", "Myelodysplastic syndrome"),
    ("mds", "Myelodysplastic syndrome"),
    ("psc", "Primary sclerosing cholangitis"),
    ("PSCs", "Primary sclerosing cholangitis"),
    # lower case is a word, not initials
    ("all", "Acute lymphoblastic leukemia"),
    # the bracket's name is another disease (under paper compared, as any name beside is)
    ("GBM (pneumonia)", "pneumonia"),
    ("PSC (pancreatic serous cystadenoma)", "Primary sclerosing cholangitis"),
])
def test_an_abbreviation_not_resolved_toward_the_truth(answer: str, truth: str,
                                                       policy: str) -> None:
    assert scores(answer, truth, policy)[0] is (policy == "paper" and "GBM (" in answer)


def test_dotted_capitals_only() -> None:
    from pytest_agentclinic.grading.reading.typography import untypeset
    assert untypeset("Dx: A.L.L. (e.g. i.e.)") == "Dx: ALL (e.g. i.e.)"
    assert untypeset("H. pylori gastritis") == "H. pylori gastritis"


@pytest.mark.parametrize("policy", POLICIES)
def test_the_british_ph_of_sulfur_words(policy: str) -> None:
    assert scores("Sulphatase deficiency", "Sulfatase deficiency", policy) == (True, True)


def test_new_patterns_are_linear() -> None:
    # each new pattern on 64 KB of its own keywords
    from pytest_agentclinic.grading.reading import joins, typography
    texts = {
        typography._DOTTED: "A.B.C.D.E.F.G.H.I." * 3600,
        joins.LIKELY: " , most likely" * 4600,
    }
    assert_linear(texts)


def test_a_truth_named_whole_beside_an_ambiguous_abbreviation() -> None:
    # under paper the concurrent name is compared, not read through the letters
    answer = "**Final Diagnosis:** ADHD with possible conduct disorder."
    assert scores(answer, "conduct disorder", "paper") == (True, True)
    assert scores(answer, "conduct disorder", "strict") == (False, True)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # an answer all in capitals: its words are words ("VOMITING" names no initials), and
    # "E.G." is the Latin abbreviation, not letters
    ("RECURRENT ABDOMINAL PAIN AND VOMITING", "cyclic vomiting syndrome"),
    ("PSYCHOTIC DISORDER (E.G., SCHIZOPHRENIA, SCHIZOAFFECTIVE DISORDER)",
     "schizophreniform disorder"),
])
def test_an_answer_in_capitals_reads_as_written(answer: str, truth: str, policy: str) -> None:
    assert scores(answer, truth, policy) == scores(answer.lower(), truth, policy)
