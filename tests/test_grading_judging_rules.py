"""Issue 21: only the answer's one main diagnosis can score, and the experts' rule for broader
and narrower names. Each stage of the grader is tested on its own: extraction (the answer's
shapes), the terminology's relation of two names, and the decision with its policy."""

from __future__ import annotations

import asyncio

import pytest
from helpers import make_case

from pytest_agentclinic.core.case import Case
from pytest_agentclinic.core.roles import Judgement
from pytest_agentclinic.core.transcript import Verdict
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.judging.relate import Related, relate_name
from pytest_agentclinic.grading.judging.rules import TABLE, decide
from pytest_agentclinic.grading.reading.abbreviations import drop_abbreviations
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.parse import Mention, parse
from pytest_agentclinic.grading.reading.prefaces import drop_preface
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.equivalence import compare, judge

W, T = "Atrial fibrillation", "Acute pericarditis"
GRADER = CraftMDGrader()


def case(diagnosis: str, synonyms: list[str] | None = None) -> Case:
    return Case.model_validate({**make_case(1, diagnosis=diagnosis, synonyms=synonyms or [],
                                            choices=[]), "dataset": "t"})


class Yes:
    """A moderator model that answers Yes to everything, and counts."""

    model = "always-yes"
    prompt_version = "yes-1"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        self.asked.append(diagnosis)
        return Judgement(Verdict(correct=True, decided_by=self.model, reason="Yes"))


def scored(answer: str, truth: str = T) -> tuple[bool, list[str]]:
    moderator = Yes()
    grade = asyncio.run(grade_answer(answer, case(truth), moderator, 0))
    return grade.verdict.correct, moderator.asked


# --- one main diagnosis decides ----------------------------------------------------------------

@pytest.mark.parametrize("shape", [
    "{w} and {t}", "{w}, {t}", "{w}\n{t}", "{w} \u2014 {t}", "{w} [{t}]", "{w} ({t})",
    "{w} ({t} also possible)", "{w} (70%), {t} (30%)", "{w} with {t}",
    "{w} (also known as {t})", "{w}, i.e. {t}", "{w}, specifically {t}", "{w}, a subtype of {t}",
    "{w}, the same as {t}", "{w} with features suggestive of {t}", "{t} \u2014 unlikely. {w}",
    "{t}, {w}", "{t}; {w}", "{w}, r/o {t}", "1. {w} 2. {t}", "{t}. {w}.",
    "not {t} (AP); {w}", "{t} (AP) is unlikely; {w}", "most likely {w}, though {t} (AP) cannot "
    "be excluded", "{t} (Plaque psoriasis)", "{t} (Papulopustular rosacea)",
    "{w}. Differential diagnoses include {t}.",
])
@pytest.mark.parametrize("wrapper", ["DIAGNOSIS READY: {a}", "Final Diagnosis: {a}"])
def test_the_truth_beside_another_main_diagnosis_never_scores(shape: str, wrapper: str) -> None:
    answer = wrapper.format(a=shape.format(w=W, t=T))
    correct, asked = scored(answer)
    assert not correct and not asked, answer  # decided by the rules, whoever moderates


@pytest.mark.parametrize("shape", [
    "I'm not certain, but {t}", "I'm not certain; {t}", "Hard to say; most likely {t}",
    "Differential: {w}, Aortic stenosis. Final answer: {t}", "Not {w} \u2014 {t}",
    "Based on the history, the most likely diagnosis is:\n{t}", "{t} (AP)",
    "{t} with a small pericardial effusion",  # a finding beside it, not a disease
    # what the answer considered after committing to T is no second diagnosis
    "{t}. Differential diagnoses include {w} and Aortic stenosis.",
])
@pytest.mark.parametrize("wrapper", ["DIAGNOSIS READY: {a}", "Final Diagnosis: {a}"])
def test_a_careful_clinician_calls_these_right(shape: str, wrapper: str) -> None:
    answer = wrapper.format(a=shape.format(w=W, t=T))
    assert scored(answer) == (True, []), answer


@pytest.mark.parametrize("answer", [
    "1. History and examination reviewed\n2. Final diagnosis: {t}",  # steps, then the answer
    "DIAGNOSIS READY: 1. History reviewed\n2. Final diagnosis: {t}",
])
def test_numbered_steps_before_the_final_diagnosis_are_no_claims(answer: str) -> None:
    assert CraftMDGrader().grade_frq(answer.format(t=T), T).verdict == 1


@pytest.mark.parametrize(("answer", "category"), [
    ("Acute pericarditis?", "single"),  # one tentative answer, as "Maybe X"
    ("Final Diagnosis: Acute pericarditis?", "single"),
    ("Is it acute pericarditis?", "none"), ("Any chest pain?", "none"),  # questions
])
def test_a_name_with_a_question_mark_is_a_tentative_answer(answer: str, category: str) -> None:
    verdict = CraftMDGrader().grade_frq(answer, T)
    assert verdict.category == category and verdict.verdict == (category == "single")


def test_a_name_holding_with_is_read_whole_up_to_its_reasons() -> None:
    answer = "My final diagnosis is Granulomatosis with polyangiitis based on the findings."
    assert CraftMDGrader().grade_frq(answer, "Granulomatosis with polyangiitis").verdict == 1


@pytest.mark.parametrize("answer", ["C. difficile colitis", "The diagnosis is C. difficile "
                                    "colitis.", "H. pylori gastritis"])
def test_an_initial_with_a_full_stop_is_part_of_the_name(answer: str) -> None:
    truth = "H. pylori gastritis" if "pylori" in answer else "C. difficile colitis"
    assert scored(f"DIAGNOSIS READY: {answer}", truth)[0]
    assert not scored(f"DIAGNOSIS READY: Psoriasis. {truth}.", truth)[0]


@pytest.mark.parametrize(("answer", "truth"), [
    ("Achaeasia", "Achalasia"), ("Graves disaase", "Graves disease"),
    ("Intussueception", "Intussusception"), ("Bileary atresia", "Biliary atresia"),
])
def test_a_one_letter_slip_is_the_one_known_name_that_close(answer: str, truth: str) -> None:
    assert scored(answer, truth) == (True, [])


def test_a_slip_that_is_another_known_name_is_that_name() -> None:
    # "rubeola" (measles) is one letter from rubella, and a name of its own
    assert compare("rubeola", "rubella").kind != "same"


@pytest.mark.parametrize("answer", ["Unknown", "unclear", "Not sure", "chest pain", "Fever"])
def test_non_answers_and_symptoms_are_decided_wrong_without_the_moderator(answer: str) -> None:
    for truth in ("Pyelonephritis", "Bell palsy", T):
        correct, asked = scored(f"DIAGNOSIS READY: {answer}", truth)
        assert not correct and not asked, (answer, truth)


def test_a_name_the_terminology_places_in_another_branch_is_decided_wrong() -> None:
    # "Parkinson's" for Bell palsy: a small moderator model accepted it
    assert scored("DIAGNOSIS READY: Parkinson's", "Bell palsy") == (False, [])
    assert scored("DIAGNOSIS READY: Parkinson disease", "Bell palsy") == (False, [])
    assert scored("DIAGNOSIS READY: Papulopustular rosacea", "Plaque psoriasis") == (False, [])


# --- the stages, each on its own --------------------------------------------------------------

def test_extraction_reads_the_main_diagnosis_and_the_roles_of_the_others() -> None:
    read = extract(f"{W} (also known as {T}); {T}")
    assert read.category == "single" and read.diagnosis == W
    # another name the answer claims and the terminology does not confirm: only claimed
    assert {m.role for m in read.mentions if m.text == T} == {"claimed", "after"}
    # a claim the terminology confirms keeps its role
    read = extract("Granulomatosis with polyangiitis (also known as Wegener granulomatosis)")
    assert "beside" not in {m.role for m in read.mentions}
    assert drop_preface("I'm not certain, but psoriasis") == "psoriasis"
    assert drop_abbreviations("not acute pericarditis (AP); psoriasis") == \
        "not acute pericarditis; psoriasis"
    assert drop_abbreviations("rosacea (SLE)") == "rosacea (SLE)"  # another name's short form


def test_the_terminology_tells_symptoms_and_families() -> None:
    terms = default_terminology()
    assert terms.symptom("chest pain") and terms.symptom("fever")
    assert not terms.symptom("pericarditis") and not terms.symptom("psoriasis")
    assert judge("arthritis", "rheumatoid arthritis").family
    assert not judge("hyperthyroidism", "Graves disease").family


@pytest.mark.parametrize(("answer", "truth", "strict", "paper"), [
    # a subtype of the truth (the answer adds a site, an age, a kind) is narrower: wrong
    ("cutaneous leishmaniasis", "leishmaniasis", 0, 0),
    ("infantile seborrheic dermatitis", "seborrheic dermatitis", 0, 0),
    ("tinea pedis", "tinea", 0, 0),
    # how severe or which side says nothing of the kind
    ("severe cutaneous leishmaniasis", "cutaneous leishmaniasis", 1, 1),
    # the truth a subtype of the answer: right when the answer is one disease with variants
    ("hyperthyroidism", "Graves disease", 1, 1),
    ("melanoma", "superficial spreading melanoma", 1, 1),
    # ... but its head noun alone where ICD-10-CM codes the truth apart (B55.1 beside B55)
    # is a family word under strict (issue 31), a broader name one level up under paper
    ("leishmaniasis", "cutaneous leishmaniasis", 0, 1),
    ("anetoderma", "anetoderma associated with SLE", 1, 1),
    # a family is no diagnosis of one of its members, but for the paper's literal rule
    ("arthritis", "rheumatoid arthritis", 0, 1),
    ("dementia", "frontotemporal dementia", 0, 1),
    ("lymphoma", "Hodgkin lymphoma", 0, 1),
    # ... one level up, as its example; a family two levels up is no "subtype" (issue 31)
    ("purpura", "thrombotic thrombocytopenic purpura", 0, 0),
])
def test_the_experts_rule_and_the_paper_policy(answer: str, truth: str, strict: int,
                                               paper: int) -> None:
    assert GRADER.grade_frq(answer, truth).verdict == strict
    assert CraftMDGrader(policy="paper").grade_frq(answer, truth).verdict == paper
    assert decide(extract(answer), [truth], (), "paper").correct is bool(paper)


def test_each_stage_reads_on_its_own() -> None:
    # parse: a statement into one main claim and the other names with their roles
    parsed = parse(f"{T}, {W}", f"{T}, {W}")
    assert parsed.diagnosis == T and [(m.text, m.role) for m in parsed.mentions] == [
        (T, "main"), (W, "listed")]
    # relate: two names, one terminology question
    assert compare(T, T).kind == "same" and compare(W, T).kind == "different"
    # the relate stage: each name of a parsed answer against the truth, one value each
    family = relate_name(Mention("Lymphoma", "main"), "Hodgkin lymphoma")
    assert (family.standing, family.judged.height, family.judged.breadth,
            family.judged.family) == ("broader", 1, 27, True)
    assert relate_name(Mention("Hodgkin lymphoma", "main"), "Lymphoma").standing == "narrower"
    assert relate_name(Mention(W, "listed"), T).standing == "other-branch"
    assert relate_name(Mention("shoe dermatitis", "main"), "Allergic contact dermatitis"
                       ).standing == "unknown"
    facts = Related(parsed, [T], ())
    assert facts.beside == W and [(m.name, m.role, m.standing) for m in facts.matches] == [
        (T, "main", "same")]
    # decide: the table's rows, in order, on a parsed answer
    assert [row.__name__ for row in TABLE][:6] == ["_index_order", "_beside", "_bare_head",
                                                   "_ambiguous_short_form", "_whole_name",
                                                   "_two_choices"]
    decision = decide(parsed, [T])
    assert not decision.correct and decision.sure and "beside" in decision.reason
    alone = decide(parse(T, T), [T])
    assert alone.correct and alone.sure and alone.relation == "same"


@pytest.mark.parametrize(("answer", "right"), [
    # the bracket names the disease of the manifestation: the words together are one concept
    # the terminology knows (MeSH: "Erythema Migrans of Lyme Disease"), so one diagnosis
    ("Erythema migrans (Lyme disease)", True),
    # the truth in the bracket stays secondary; an unrelated name beside it stays another one
    ("Lyme disease (erythema migrans)", False),
    ("Erythema migrans (atrial fibrillation)", False),
    ("Atrial fibrillation (erythema migrans)", False),
])
def test_a_bracket_naming_the_disease_of_a_manifestation_restates_it(answer: str,
                                                                     right: bool) -> None:
    correct, asked = scored(answer, "Erythema migrans")
    assert correct is right and not asked
