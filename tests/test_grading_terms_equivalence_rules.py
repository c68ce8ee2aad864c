"""Issue 31, part 2: comparison rules read from the sources, one pair of each class.

Each rule cites the source convention it follows (docs/terminology.md): Latin nouns and their
adjectives ("Neoplasm, Pelvis" / "Pelvic Neoplasms" in MeSH), SNOMED CT's semantic tags that
MONDO keeps in its synonyms, a bare eponym as the name of the disease the sources name after
the person, and MeSH's supplementary concept records of rare diseases.
"""

from __future__ import annotations

import pytest
from helpers import scores

from pytest_agentclinic.grading.terminology import key
from pytest_agentclinic.grading.terminology_table import DATA_FILE
from pytest_agentclinic.grading.terms.equivalence import judge
from pytest_agentclinic.grading.terms.readings import noun_and_adjective
from pytest_agentclinic.grading.wording import root, two_names
from tools.terminology_sources import mesh_supplementary_concepts

needs_table = pytest.mark.skipif(not DATA_FILE.exists(), reason=f"{DATA_FILE} not built")


def _right(given: str, truth: str) -> bool:
    verdict = judge(given, truth)
    return verdict.correct and verdict.relation in ("same", "synonym")


@pytest.mark.parametrize(("noun", "adjective"), [
    ("pelvis", "pelvic"), ("exocervix", "exocervical"), ("cortex", "cortical"),
    ("inhalation", "inhalational"),
])
def test_a_latin_noun_and_its_adjective_share_a_root(noun: str, adjective: str) -> None:
    assert root(noun) == root(adjective)


@pytest.mark.parametrize("disease", ["nephritis", "psoriasis", "arthritis"])
def test_a_disease_in_is_keeps_its_ending(disease: str) -> None:
    # "nephritic syndrome" is a disease of its own, not nephritis
    assert root(disease) == disease


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    ("abscess of the pelvis", "pelvic abscess"),
    ("inhalational anthrax", "inhalation anthrax"),
    ("carcinoma of the exocervix", "exocervical carcinoma"),
])
def test_word_order_with_a_noun_for_its_adjective_is_the_same_disease(
        given: str, truth: str) -> None:
    assert _right(given, truth)


@needs_table
def test_a_disease_is_not_the_syndrome_named_by_its_adjective() -> None:
    assert not _right("nephritic syndrome", "nephritis")


@pytest.mark.parametrize(("tagged", "bare"), [
    ("acanthosis nigricans (finding)", "acanthosis nigricans"),
    ("scirrhous adenocarcinoma (morphologic abnormality)", "scirrhous adenocarcinoma"),
    ("lichen planus (disorder)", "lichen planus"),
    ("trisomy E (formerly)", "trisomy E"),
    ("OFC8, included", "OFC8"),
])
def test_a_semantic_tag_or_editorial_note_names_nothing(tagged: str, bare: str) -> None:
    assert key(tagged) == key(bare)


@needs_table
def test_a_tagged_synonym_is_the_disease() -> None:
    assert _right("acanthosis nigricans (finding)", "acanthosis nigricans")


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    ("Buerger", "thromboangiitis obliterans"),
    ("Hansen", "leprosy"),
    ("Pott", "spinal tuberculosis"),
])
def test_a_bare_eponym_names_the_disease_named_after_the_person(given: str, truth: str) -> None:
    assert _right(given, truth)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # a place and an agent are no eponyms; an eponym of several diseases names none of them
    ("Lyme", "Lyme borreliosis"),
    ("Serotonin", "serotonin syndrome"),
    ("Paget", "osteitis deformans"),
])
def test_a_bare_word_that_is_no_single_eponym_stays_wrong(given: str, truth: str) -> None:
    assert not judge(given, truth).correct


_SUPPLEMENTARY = "\n".join([
    # a rare disease mapped to two disease descriptors, with a synonym and an acronym
    "C000001\tFrobisher-Quist syndrome\tQuist palmar keratoderma|FQS\tD000001,*D000002",
    # a chemical, mapped to a chemical descriptor
    "C000002\tquistamide\tQS-12\tD009999",
    # mapped to a disease and a chemical: not taken
    "C000003\tquistamide toxicity\t\tD000001,D009999",
    # a numbered genetic subtype: another entity than the disease it is numbered under
    "C000004\tFrobisher-Quist syndrome 3\t\tD000001",
])


def test_supplementary_records_of_diseases_become_concepts() -> None:
    concepts = list(mesh_supplementary_concepts(_SUPPLEMENTARY, {"D000001", "D000002"}))
    assert [c.id for c in concepts] == ["MESH:C000001"]
    (concept,) = concepts
    assert concept.names == [("p", "Frobisher-Quist syndrome"), ("s", "Quist palmar keratoderma")]
    assert concept.acronyms == ["FQS"]
    # the descriptors it is indexed under are its features as often as its kind
    assert concept.parents == []


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # the truth a name the terminology does not know whole: its initials spell the acronym
    ("recurrent HSL", "recurrent herpes simplex labialis"),
    ("childhood-onset GTCS", "childhood-onset generalized tonic-clonic seizures"),
])
def test_an_abbreviation_spelling_the_truths_own_words_is_the_truth(given: str,
                                                                     truth: str) -> None:
    assert _right(given, truth)


@needs_table
def test_an_abbreviation_of_several_diseases_is_still_not_read_toward_the_truth() -> None:
    # the sources give "BPD" for borderline personality disorder and bronchopulmonary dysplasia
    assert not judge("BPD", "borderline personality disorder").correct
    assert not judge("adult BPD", "adult borderline personality disorder").correct


def test_two_names_run_together_are_found_by_their_parts() -> None:
    names = {frozenset({"epidermal", "cyst"}): 0, frozenset({"inclusion", "cyst"}): 3}
    given = frozenset({"epidermal", "inclusion", "cyst"})
    # the weaker of the two names' tiers: one is of unknown scope
    assert two_names(given, names.get) == 3
    assert two_names(frozenset({"epidermal", "pilar", "cyst"}), names.get) is None


@needs_table
def test_an_inclusion_cyst_named_with_its_synonym_is_the_disease() -> None:
    # "epidermal cyst" and "inclusion cyst" are both names the sources give the epidermoid cyst
    verdict = judge("epidermal inclusion cyst", "epidermoid cyst")
    assert verdict.correct and verdict.relation == "synonym"


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # one pair of each class the synonym benchmark counts, written here, not taken from it
    ("torsion of testis", "testicular torsion"),  # word order, adjective / noun
    ("post-streptococcal glomerulonephritis", "poststreptococcal glomerulonephritis"),  # hyphen
    ("oesophageal varices", "esophageal varix"),  # British spelling, Latin plural
    ("haemochromatosis", "hemochromatosis"),  # British spelling
    ("Graves disease", "Graves' disease"),  # eponym possessive
    ("Dandy-Walker malformation", "Dandy-Walker"),  # the truth a short form the sources list
])
def test_one_pair_of_each_class_is_the_same_disease(given: str, truth: str) -> None:
    assert _right(given, truth)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # ICD-10-CM's closing clause says which detail the coder lacked, not which disease
    ("pneumonia", "Pneumonia, unspecified organism"),
    ("urinary tract infection", "Urinary tract infection, site not specified"),
    ("diabetes mellitus", "Diabetes mellitus, unspecified type"),
])
def test_a_closing_unspecified_clause_of_the_truth_names_nothing(given: str, truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)


@needs_table
def test_an_unspecified_clause_leaves_the_rest_of_the_truth_to_be_matched() -> None:
    assert not judge("viral pneumonia", "Pneumonia, unspecified organism").correct


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # ICD-10-CM files them under one code (description and inclusion term); MeSH, the
    # Disease Ontology or MONDO names each as a concept of its own
    ("aortic stenosis", "coarctation of the aorta"),
    ("hepatic vein thrombosis", "Budd-Chiari syndrome"),
])
def test_one_icd_code_is_no_synonym_where_a_source_names_two_diseases(given: str,
                                                                      truth: str) -> None:
    verdict = judge(given, truth)
    assert verdict.relation != "synonym" and not (verdict.correct and verdict.sure)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # inclusion terms that no other source tells apart from the code's description
    ("stasis dermatitis", "venous insufficiency"),
    ("tinea unguium", "onychomycosis"),
])
def test_an_inclusion_term_no_source_tells_apart_stays_a_synonym(given: str,
                                                                 truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.sure) == (True, True)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # the Disease Ontology files glomerulonephritis under kidney disease, conjunctivitis
    # under eye disease: the organ's adjective names no narrower disease, either way round
    ("renal glomerulonephritis", "glomerulonephritis"),
    ("glomerulonephritis", "renal glomerulonephritis"),
    ("ocular conjunctivitis", "conjunctivitis"),
])
def test_a_word_naming_the_class_the_terminology_files_the_disease_in_adds_nothing(
        given: str, truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)


@needs_table
def test_a_site_the_terminology_does_not_file_the_disease_under_still_narrows_it() -> None:
    # spondylosis is filed under spinal and bone diseases, not under the neck's
    assert not judge("cervical spondylosis", "spondylosis").correct


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # a synonym put for a part of a name: shingles / herpes zoster, stye / hordeolum,
    # German measles / rubella, nosebleed / epistaxis are names of one disease in the sources
    ("shingles ophthalmicus", "herpes zoster ophthalmicus"),
    ("stye of the left eyelid", "hordeolum of the left eyelid"),
    ("German measles arthritis", "rubella arthritis"),
    ("nosebleed in pregnancy", "epistaxis in pregnancy"),
])
def test_a_part_put_for_its_synonym_leaves_the_name_the_same(given: str, truth: str) -> None:
    assert _right(given, truth)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # the parts swapped are two diseases: furuncle and carbuncle, mumps and parotitis
    ("recurrent boils", "recurrent carbuncles"),
    ("mumps orchitis", "parotitis orchitis"),
    ("shingles ophthalmicus", "measles ophthalmicus"),
    # or words no source names as a disease by themselves
    ("acute hepatitis", "chronic hepatitis"),
])
def test_a_part_swapped_for_another_disease_or_a_qualifier_is_not_the_same(
        given: str, truth: str) -> None:
    assert not _right(given, truth)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # the nomenclature names a disease after its organism with "-osis" or "-iasis"
    ("Toxoplasma infection", "toxoplasmosis"),
    ("schistosomiasis", "Schistosoma infection"),
    ("Blastomyces infection", "blastomycosis"),
    ("Enterobius infection", "enterobiasis"),
])
def test_the_infection_named_after_its_organism_is_the_disease(given: str, truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    ("fibrous", "fibrosis"),  # an adjective names no organism
    ("psoria", "psoriasis"),  # nor a slip that is no word of any name
    ("Schistosoma mansoni infection", "schistosomiasis"),  # a species is one kind
])
def test_an_adjective_a_slip_or_a_species_is_not_read_as_the_organism(given: str,
                                                                      truth: str) -> None:
    verdict = judge(given, truth)
    assert not (verdict.correct and verdict.relation in ("same", "synonym"))


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # word order with a noun for its adjective, where no source states the pair
    ("fracture of the clavicle", "clavicular fracture"),
    ("umbilical hernia", "hernia of the umbilicus"),
])
def test_a_noun_for_its_adjective_in_another_word_order_is_the_same(given: str,
                                                                    truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)


@pytest.mark.parametrize(("noun", "adjective", "expected"), [
    ("clavicle", "clavicular", True), ("umbilicus", "umbilical", True),
    ("testis", "testicular", True),
    ("lymphoma", "lymphatic", False),  # a tumour's name has no adjective here
    ("tibia", "fibular", False), ("internal", "external", False),
])
def test_a_noun_and_its_adjective_by_form(noun: str, adjective: str, expected: bool) -> None:
    assert noun_and_adjective(noun, adjective) is expected


@needs_table
def test_an_acronym_in_capitals_spelling_the_truth_is_read_though_it_is_a_word_too() -> None:
    # "prp" is a word of some source's name, and the sources give "PRP" only for the
    # familial kind: the capitals spell the truth's own words
    verdict = judge("PRP", "pityriasis rubra pilaris")
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)
    # a word in lower case stays a word
    assert judge("prp", "pityriasis rubra pilaris").relation != "same"


@needs_table
@pytest.mark.parametrize(("given", "truth"), [
    # "region", "space", "system" name no place of their own: the word before them does
    ("abscess of the perianal region", "perianal abscess"),
    ("hematoma of the epidural space", "epidural hematoma"),
    ("hepatobiliary neoplasm", "hepatobiliary system neoplasm"),
])
def test_a_noun_naming_no_place_by_itself_adds_no_place(given: str, truth: str) -> None:
    verdict = judge(given, truth)
    assert (verdict.correct, verdict.relation, verdict.sure) == (True, "same", True)


@needs_table
def test_a_place_noun_alone_names_nothing() -> None:
    assert not judge("perianal region", "perianal abscess").correct


@pytest.mark.parametrize(("given", "truth"), [
    ("Malignant hyperthermia", "hyperthermia"), ("Hyperthermia", "malignant hyperthermia"),
    ("Malignant hypertension", "hypertension"), ("Malignant otitis externa", "otitis externa"),
])
@pytest.mark.parametrize("policy", ["strict", "paper"])
def test_malignant_outside_cancer_is_a_form_the_sources_tell_apart(
        given: str, truth: str, policy: str) -> None:
    # Read as a word of severity, "malignant" made a disease of its own the same, sure, as
    # the one it is named after. Where the sources know both names apart, they decide.
    assert not scores(given, truth, policy)[0]


@pytest.mark.parametrize(("given", "truth"), [
    ("Malignant melanoma", "melanoma"), ("Melanoma", "malignant melanoma"),
    ("Severe malignant hypertension", "malignant hypertension"),
])
def test_malignant_still_adds_nothing_to_a_cancer_or_a_degree(given: str, truth: str) -> None:
    assert scores(given, truth) == (True, True)
