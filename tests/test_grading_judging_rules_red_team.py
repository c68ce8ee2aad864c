"""Issue 31, the red team on truths nobody tuned to: what ``bench_adversarial.py --truths``
found on CRAFT-MD's and AgentClinic's truths, each as a general rule with its own names.
Fast: the offline grader only, in both protocols' wrapping."""

from __future__ import annotations

import asyncio

import pytest
from helpers import make_case

from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.terms.concurrent import disease_by_words, finding

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
WRAPPERS = ("DIAGNOSIS READY: {}", "Final Diagnosis: {}")


def scores(answer: str, truth: str, grader: CraftMDGrader = STRICT) -> list[int]:
    """The verdict in each protocol's wrapping."""
    return [grader.grade_frq(wrap.format(answer), truth).verdict for wrap in WRAPPERS]


def case_scores(answer: str, truth: str, synonyms: list[str]) -> list[bool]:
    case = Case.model_validate({**make_case(1, diagnosis=truth, synonyms=synonyms,
                                            choices=[]), "dataset": "t"})
    return [asyncio.run(grade_answer(wrap.format(answer), case, OfflineModerator(), 0))
            .verdict.correct for wrap in WRAPPERS]


# --- reading: a negated name with an eponym's possessive and its short form ------------------

@pytest.mark.parametrize("answer", [
    "Not Non-Hodgkin's lymphoma (NHL) - Sarcoidosis",
    "Not Hodgkin\u2019s lymphoma (HL); Sarcoidosis",
    "Non-Hodgkin\u2019s lymphoma (NHL) was considered, but Sarcoidosis fits better",
])
def test_a_possessive_eponym_does_not_hide_its_short_form_from_the_negation(
        answer: str) -> None:
    assert scores(answer, "Sarcoidosis") == [1, 1]


# --- reading: markdown tables and JSON as models write them -----------------------------------

def test_table_rows_that_say_ruled_out_are_set_aside() -> None:
    answer = ("**Final diagnosis: Sarcoidosis**\n\n| Diagnosis | Status |\n|---|---|\n"
              "| Tuberculosis | ruled out |\n| Lymphoma | less likely |")
    assert scores(answer, "Sarcoidosis") == [1, 1]
    # a table that ranks two names without setting either aside still offers both
    ranked = ("| Diagnosis | Likelihood |\n|---|---|\n| Tuberculosis | high |\n"
              "| Sarcoidosis | high |")
    assert scores(ranked, "Sarcoidosis") == [0, 0]


def test_a_diagnosis_given_as_an_object_in_json_is_read_by_its_name() -> None:
    answer = ('```json\n{"assessment": {"diagnosis": {"name": "Sarcoidosis", "confidence": '
              '"high"}, "differential": ["Tuberculosis", "Lymphoma"]}}\n```')
    assert scores(answer, "Sarcoidosis") == [1, 1]
    assert scores(answer, "Tuberculosis") == [0, 0]


# --- main and concurrent: a disease is no finding by a shared ending ---------------------------

@pytest.mark.parametrize("name", ["Hemophilia", "Thrombophilia", "Acromegaly", "Mastocytosis"])
def test_a_disease_named_with_a_findings_ending_is_no_finding(name: str) -> None:
    assert not finding(name)
    assert scores(f"Sarcoidosis, {name}", "Sarcoidosis") == [0, 0]
    assert scores(f"Sarcoidosis ({name})", "Sarcoidosis") == [0, 0]


@pytest.mark.parametrize("name", ["hepatosplenomegaly", "eosinophilia", "pancytopenia",
                                  "lymphocytosis"])
def test_an_enlarged_organ_or_a_blood_count_stays_a_finding(name: str) -> None:
    assert finding(name)
    assert scores(f"Sarcoidosis with {name}", "Sarcoidosis") == [1, 1]


@pytest.mark.parametrize("unknown", ["Pyostomatitis vegetans", "Leukemia cutis",
                                     "Cervical insufficiency"])
def test_a_disease_by_its_words_is_a_second_diagnosis_where_the_terminology_does_not_know_it(
        unknown: str) -> None:
    assert disease_by_words(unknown)
    assert scores(f"{unknown} with features suggestive of Sarcoidosis", "Sarcoidosis") == [0, 0]
    assert scores(f"Sarcoidosis ({unknown})", "Sarcoidosis") == [0, 0]
    assert scores(f"Sarcoidosis; {unknown}", "Sarcoidosis") == [0, 0]


def test_an_unknown_name_that_is_no_disease_by_its_words_stays_a_possible_lay_name() -> None:
    assert not disease_by_words("whooping cough") and not disease_by_words("Lisch nodules")
    assert not disease_by_words("hepatomegaly")
    assert scores("Pertussis (whooping cough)", "Pertussis") == [1, 1]


# --- guard rails: a bare head noun, an ambiguous abbreviation ----------------------------------

@pytest.mark.parametrize(("answer", "truth"), [
    ("colitis", "Ulcerative colitis"), ("cyst", "Branchial cleft cyst"),
    ("adenocarcinoma", "Pancreatic adenocarcinoma"), ("hemorrhage", "Subarachnoid hemorrhage"),
])
def test_a_bare_head_noun_is_a_family_word_under_strict(answer: str, truth: str) -> None:
    assert scores(answer, truth) == [0, 0]


@pytest.mark.parametrize(("answer", "truth"), [
    # a head noun ICD-10-CM gives the truth a code apart from: a family word, though the
    # terminology places it as one disease with few variants right above the truth
    ("cardiomyopathy", "Takotsubo cardiomyopathy"),
    ("cholangitis", "Primary sclerosing cholangitis"),
    ("hydrocephalus", "Normal pressure hydrocephalus"),
    ("glaucoma", "Acute angle-closure glaucoma"),
    ("thalassemia", "Beta-thalassemia"), ("cystitis", "Interstitial cystitis"),
    ("dermatitis", "Atopic dermatitis"), ("tumor", "Testicular tumor"),
    # the words before the head name a disease of their own, its cause or its eponym: ICD-10-CM
    # codes such a manifestation by its etiology ("code first" the underlying disease)
    ("retinitis", "Cytomegalovirus retinitis"), ("arteritis", "Takayasu arteritis"),
])
def test_a_head_noun_is_a_family_word_where_icd_10_cm_codes_the_truth_apart(
        answer: str, truth: str) -> None:
    assert scores(answer, truth) == [0, 0]


@pytest.mark.parametrize(("answer", "truth"), [
    # a source files the truth under another disease too (an organ's, an infection, another
    # disease): the head noun at a site or from a cause, which ICD-10-CM codes so
    ("toxoplasmosis", "Ocular toxoplasmosis"), ("aspergillosis", "Pulmonary aspergillosis"),
    ("glomerulosclerosis", "Focal segmental glomerulosclerosis"),
    # ICD-10-CM codes the truth's acute, chronic or primary form apart (H40.2-: primary,
    # acute and chronic angle-closure glaucoma)
    ("glaucoma", "Narrow-angle glaucoma"), ("glaucoma", "Closed-angle glaucoma"),
    # an eponym before the head noun: the disease its author described
    ("aphasia", "Broca aphasia"),
])
def test_a_head_noun_is_a_family_word_where_the_truth_is_no_growth_pattern_of_one_disease(
        answer: str, truth: str) -> None:
    assert scores(answer, truth) == [0, 0]
    assert scores(answer, truth, PAPER) == [1, 1]  # paper: any broader name counts


@pytest.mark.parametrize(("answer", "truth"), [
    # the terminology's one disease with its variants right above the truth, and ICD-10-CM
    # codes the truth with it (melanoma by site, not by growth pattern): broader, right
    ("melanoma", "Superficial spreading melanoma"), ("melanoma", "Acral lentiginous melanoma"),
    ("melanoma", "Nodular melanoma"),
    # a synonym a source states for the truth
    ("zoster", "Herpes zoster"), ("thrush", "Oral thrush"),
    # only words of how severe before the head: the disease itself
    ("pancreatitis", "Acute pancreatitis"),
])
def test_a_head_noun_the_terminology_or_the_qualifiers_make_the_disease_still_scores(
        answer: str, truth: str) -> None:
    assert scores(answer, truth) == [1, 1]


def test_an_abbreviation_of_several_diseases_is_not_read_toward_the_truth() -> None:
    # PSC: primary sclerosing cholangitis, and pancreatic serous cystadenoma in the sources
    assert case_scores("PSC", "Primary sclerosing cholangitis", []) == [False, False]
    # unless the case accepts it as written
    assert case_scores("PSC", "Primary sclerosing cholangitis", ["PSC"]) == [True, True]
    # HSP: hereditary spastic paraplegia, and IgA vasculitis
    assert scores("HSP", "Henoch-Schonlein purpura") == [0, 0]
    # an abbreviation of one disease reads as it
    assert scores("SLE", "Systemic lupus erythematosus") == [1, 1]
    assert scores("COPD", "Chronic obstructive pulmonary disease") == [1, 1]


@pytest.mark.parametrize(("answer", "truth"), [
    # a letter dropped from a word of seven letters or more, one that leaves another known
    # word ("fusion", "urine") but no other known name: a slip of the pen
    ("Pleural efusion", "Pleural effusion"), ("Utrine leiomyoma", "Uterine leiomyoma"),
    ("Liver ascess", "Liver abscess"), ("Cystic fibrois", "Cystic fibrosis"),
    # in the name's generic head word too
    ("Crohn disese", "Crohn disease"), ("Bipolar disoeder", "Bipolar disorder"),
])
def test_a_slip_is_read_where_no_other_known_name_is_as_close(answer: str, truth: str) -> None:
    assert scores(answer, truth) == [1, 1]


@pytest.mark.parametrize(("answer", "truth"), [
    # the slipped word is a known word making a known name: another disease
    ("Berger disease", "Buerger disease"), ("Osteoblastoma", "Osteoclastoma"),
    # too short a word for a slip
    ("Ileum", "Ileus"),
])
def test_a_known_name_one_letter_away_is_no_slip(answer: str, truth: str) -> None:
    assert scores(answer, truth) == [0, 0]


@pytest.mark.parametrize(("answer", "truth"), [
    # initials the sources give for nothing, which a known disease's name spells too:
    # CVI, chronic venous insufficiency and common variable immunodeficiency
    ("CVI", "Chronic venous insufficiency"), ("CVI", "Common variable immunodeficiency"),
    # RAS: renal artery stenosis, Ramos-Arroyo syndrome
    ("RAS", "Renal artery stenosis"),
])
def test_initials_another_known_name_spells_are_not_read_toward_the_truth(answer: str,
                                                                          truth: str) -> None:
    assert scores(answer, truth) == [0, 0]
    assert case_scores(answer, truth, [answer]) == [True, True]  # accepted as written


@pytest.mark.parametrize(("answer", "truth"), [
    ("DVT", "Deep venous thrombosis"), ("SLE", "Systemic lupus erythematosus"),
    # initials no other known disease's name spells
    ("MWT", "Mallory-Weiss tear"),
    # round 3: the abbreviations that must score are not bought for shared initials: the
    # normaliser's "SCC" and "BCC" are not spelled out again (small cell carcinoma, spinal
    # cord compression, branchial cleft cyst), nor are MeSH's entry terms indexed ("IDA":
    # isolated Duane anomaly; "URI": urinary reflex incontinence)
    ("SCC", "Squamous cell carcinoma"), ("BCC", "Basal cell carcinoma"),
    ("OSA", "Obstructive sleep apnea"), ("IDA", "Iron deficiency anemia"),
    ("URI", "Upper respiratory infection"),
])
def test_initials_of_one_known_name_still_read_as_it(answer: str, truth: str) -> None:
    assert scores(answer, truth) == [1, 1]


def test_a_near_miss_that_is_another_known_disease_is_no_slip() -> None:
    # one letter apart, both names the terminology knows: two diseases, not a slip of the pen
    assert scores("Osteoblastoma", "Osteoclastoma") == [0, 0]
    assert scores("Osteoclastona", "Osteoclastoma") == [1, 1]


@pytest.mark.parametrize(("answer", "truth", "verdict"), [
    # two names written whole, each with its own head ("tumor", "cancer" read alike)
    ("Phyllodes tumor/Lung cancer", "Lung cancer", [0, 0]),
    ("Lung cancer/Phyllodes tumor", "Lung cancer", [0, 0]),
    # one head written once, or two names of one condition
    ("Depersonalization/derealization disorder", "Depersonalization-derealization disorder",
     [1, 1]),
    ("Whooping cough/pertussis", "Pertussis", [1, 1]),
])
def test_a_slash_between_two_whole_names_offers_two(answer: str, truth: str,
                                                     verdict: list[int]) -> None:
    assert scores(answer, truth) == verdict


@pytest.mark.parametrize(("answer", "truth"), [
    # a shared modifier or head that makes a name of the other side only by the words: the
    # side is a disease of its own ("Toxoplasmosis"), or no name at all once completed
    # ("Sarcoidosis syndrome", "Vitamin B12 ulnar"): the slash offers two
    ("Lung cancer/Toxoplasmosis", "Lung cancer"), ("Toxoplasmosis/Lung cancer", "Lung cancer"),
    ("Vitamin B12 deficiency/Ulnar", "Vitamin B12 deficiency"),
    ("Melanonychia/Boerhaave syndrome", "Boerhaave syndrome"),
    ("Adhesions/Complex partial seizure", "Complex partial seizure"),
    ("Lisch nodules/Melasma", "Melasma"),
    # two names written whole: linking words ("of the") are no shared word, and an injury or
    # a state like pregnancy beside a disease is a second condition, though a word is shared
    ("Burn of the forearm/Rupture of the flexor tendon", "Rupture of the flexor tendon"),
    ("Twin pregnancy/Atopic eruption of pregnancy", "Atopic eruption of pregnancy"),
    ("Atopic eruption of pregnancy/Twin pregnancy", "Atopic eruption of pregnancy"),
])
def test_a_slash_whose_shared_word_makes_no_one_condition_offers_two(answer: str,
                                                                      truth: str) -> None:
    assert scores(answer, truth) == [0, 0]


def test_a_slash_inside_one_name_keeps_it_one() -> None:
    truth = "Attention-deficit/hyperactivity disorder"
    assert scores(truth, truth) == [1, 1]


def test_a_known_disease_with_its_kind_after_a_dash_is_a_second_diagnosis() -> None:
    # "anorexia nervosa - purging type" is unknown whole, but opens with a disease
    assert scores("Hypopituitarism; Anorexia nervosa - purging type", "Hypopituitarism") == [0, 0]
    assert scores("Hypopituitarism, hepatomegaly, leukocytosis", "Hypopituitarism") == [1, 1]


# --- reading, round 2: reasons, set-aside alternatives and JSON as models write them ----------

@pytest.mark.parametrize("answer", [
    # a reason in brackets, or in a sentence of its own about the diagnosis just given
    "Sarcoidosis (classic presentation)",
    "Sarcoidosis (typical findings on examination)",
    "Sarcoidosis. The history and examination support this diagnosis.",
    # what was weighed and set aside, however the sentence says it
    "Tuberculosis was considered; however, Sarcoidosis fits best.",
    "Although Tuberculosis was considered, Sarcoidosis is more likely.",
    "I considered Tuberculosis, but Sarcoidosis is the most likely diagnosis.",
    # a numbered list after the answer whose every item is set aside
    "**Sarcoidosis**\n\n1. **Tuberculosis** - less likely\n2. **Lymphoma** - less likely",
    # the main diagnosis of a JSON object under its "primary" key
    '```json\n{"response": {"diagnosis": {"primary": "Sarcoidosis", "secondary": []}}}\n```',
])
def test_reasons_and_set_aside_alternatives_leave_the_answer(answer: str) -> None:
    assert scores(answer, "Sarcoidosis") == [1, 1]
    assert scores(answer, "Tuberculosis") == [0, 0]


@pytest.mark.parametrize("weighed", [
    "Eosinophilic granulomatosis with polyangiitis (Churg-Strauss syndrome)",
    "Progressive multifocal leukoencephalopathy (PML)",
])
@pytest.mark.parametrize("template", [
    "{} was considered, but Sarcoidosis fits better",
    "Although {} was considered, Sarcoidosis is more likely.",
    "I considered {}, but Sarcoidosis is the most likely diagnosis.",
    "Not {} - Sarcoidosis", "Not {}, but Sarcoidosis",
])
def test_a_name_weighed_with_its_bracket_is_set_aside_whole(weighed: str, template: str) -> None:
    assert scores(template.format(weighed), "Sarcoidosis") == [1, 1]


def test_a_disease_in_brackets_that_opens_with_a_word_of_kind_is_still_a_second_one() -> None:
    # "classical" names a kind of Hodgkin lymphoma here, no reason
    assert scores("Sarcoidosis (Classical Hodgkin lymphoma)", "Sarcoidosis") == [0, 0]
    assert scores("Sarcoidosis (typical presentation)", "Sarcoidosis") == [1, 1]


def test_a_numbered_list_that_sets_aside_only_some_items_still_offers_the_rest() -> None:
    answer = "**Sarcoidosis**\n\n1. **Tuberculosis** - less likely\n2. **Lymphoma** - possible"
    assert scores(answer, "Sarcoidosis") == [0, 0]
