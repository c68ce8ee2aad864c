"""The offline CRAFT-MD grader: extraction, equivalence, MCQ mapping, the grade command, and
its agreement with the paper's GPT-4 grader on the recorded runs (when ../shared is present)."""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_agentclinic.commands import grade as grade_command
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader, Graded
from pytest_agentclinic.grading.judging.rules import OFFLINE, OFFLINE_UNSURE
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.mcq import choose
from pytest_agentclinic.grading.terms.readings import given_names
from tools.craftmd_eval import (
    CASES,
    EXPERIMENTS,
    KINDS,
    PAPER_MCQ,
    RECORDED,
    Report,
    disagreement_kind,
    evaluate,
    load_cases,
    load_recorded,
    pooled,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
GRADER = CraftMDGrader()

# --- step 1: extraction ---------------------------------------------------------------------


@pytest.mark.parametrize(("response", "diagnosis"), [
    ("Lymphogranuloma venereum (LGV)", "Lymphogranuloma venereum"),
    ("**Final Diagnosis:** Psoriasis.", "Psoriasis"),
    ("The most likely diagnosis is necrotizing fasciitis.", "necrotizing fasciitis"),
    ("This patient most likely has Polycythemia Vera (PV).", "Polycythemia Vera"),
    # a main diagnosis with a concurrent minor one counts as the main one
    ("Hemolytic anemia with resulting jaundice.", "Hemolytic anemia"),
    ("**Final Diagnosis:** Infertility, possibly due to decreased cervical mucus.", "Infertility"),
    ("Graft-versus-host disease (GVHD)", "Graft-versus-host disease"),
])
def test_single_diagnosis(response: str, diagnosis: str) -> None:
    extraction = extract(response)
    assert (extraction.category, extraction.diagnosis) == ("single", diagnosis)


@pytest.mark.parametrize("response", [
    "Psoriasis or eczema",
    "**Final Diagnosis:** Myopathy (possible polymyositis or dermatomyositis)",
    "Psychotic disorder, possibly schizophrenia or schizoaffective disorder.",
    "**Final Diagnosis:** Postmenopausal bleeding, possible endometrial cancer.",
    "1. Contact dermatitis\n2. Scabies\n3. Tinea corporis",
])
def test_multiple_diagnoses(response: str) -> None:
    assert extract(response).category == "multiple"


@pytest.mark.parametrize("response", [
    "**Final Diagnosis:** Insufficient information for a definitive diagnosis.",
    "Final Diagnosis: Unable to provide a diagnosis with the current information.",
    "Urinalysis, cough stress test and postvoid residual measurement.",  # tests, not a diagnosis
    "Laparoscopy",
    "Methylphenidate",
    "",
])
def test_no_diagnosis(response: str) -> None:
    assert extract(response).category == "none"


def test_multiple_and_none_score_zero_even_when_naming_the_truth() -> None:
    assert GRADER.grade_frq("Psoriasis or eczema", "psoriasis").verdict == 0
    # the paper's grader extracts a diagnosis only, and CRAFT-MD asks every doctor for one:
    # a procedure is "none" under either policy, as in a CRAFT-MD run
    for policy in ("paper", "strict"):
        verdict = CraftMDGrader(policy=policy).grade_frq("Laparoscopy", "laparoscopy")
        assert (verdict.verdict, verdict.extracted, verdict.category) == (0, "none", "none")


# --- step 2: equivalence ----------------------------------------------------------------------


@pytest.mark.parametrize(("response", "truth", "expected"), [
    # the paper's examples: broader than the truth is right, more specific is not; a family
    # ("lymphoma", 27 concepts below it) only under the paper policy (issue 21)
    ("Lymphoma", "Hodgkin's lymphoma", 0),
    ("Hodgkin's lymphoma", "lymphoma", 0),
    ("Eczema", "onychomycosis", 0),
    # a head noun alone where ICD-10-CM codes the truth apart (plaque psoriasis: L40.0,
    # psoriasis vulgaris) is a family word under strict (issue 31); see below for paper
    ("Psoriasis", "plaque psoriasis", 0),
    ("Chronic pancreatitis", "pancreatitis", 0),  # a subtype the terminology knows
    # a side or the acuity added to the truth still names the truth; a site is narrower,
    # as the dermatologists who validated the paper's grader read it (issue 21)
    ("Stress fracture of the second metatarsal", "stress fracture", 0),
    ("Acute pyelonephritis", "pyelonephritis", 1),
    ("Severe bilateral pneumonia", "pneumonia", 1),
    # subtypes that differ are different conditions
    ("Hepatitis A", "hepatitis B", 0),
    ("Non-Hodgkin lymphoma", "Hodgkin lymphoma", 0),
])
def test_broader_right_more_specific_wrong(response: str, truth: str, expected: int) -> None:
    assert GRADER.grade_frq(response, truth).verdict == expected


def test_paper_takes_the_head_noun_one_level_up_as_broader() -> None:
    assert CraftMDGrader(policy="paper").grade_frq("Psoriasis", "plaque psoriasis").verdict == 1


@pytest.mark.parametrize(("response", "truth"), [
    ("SLE", "systemic lupus erythematosus"),
    ("The most likely diagnosis is systemic lupus erythematosus (SLE).", "SLE"),
    ("Deep vein thrombosis (DVT)", "deep venous thrombosis"),
    ("CML", "chronic myelogenous leukemia"),
])
def test_abbreviations(response: str, truth: str) -> None:
    assert GRADER.grade_frq(response, truth).verdict == 1


@pytest.mark.parametrize(("response", "truth"), [
    ("VSD", "ventricular septal defect (vsd)"),
    ("Ventricular septal defect", "ventricular septal defect (VSD)"),
    ("Parvovirus B19 infection (fifth disease or erythema infectiosum).", "erythema infectiosum"),
])
def test_parentheticals(response: str, truth: str) -> None:
    assert GRADER.grade_frq(response, truth).verdict == 1


def test_a_claim_in_brackets_holds_when_a_source_links_the_names() -> None:
    # issue 21: "specifically" counts only when the terminology links the names by synonym
    # or hierarchy; none relates rosacea to lupus, and siblings are two diseases (MeSH and
    # MONDO file lymphangiosarcoma, Stewart-Treves, beside hemangiosarcoma, not under it)
    # (the kind a source places under the name is the one disease named: right for Crohn
    # disease, a subtype of inflammatory bowel disease; docs/grading.md, "Three reading
    # faults the paper policy found")
    linked = GRADER.grade_frq("Inflammatory bowel disease (specifically Crohn disease)",
                              "Crohn disease")
    assert (linked.category, linked.verdict) == ("single", 1)
    subtype = GRADER.grade_frq("Inflammatory bowel disease (specifically Crohn disease)",
                               "inflammatory bowel disease")
    assert subtype.verdict == 0 and "another disease" not in subtype.reason
    for answer, truth in (("Rosacea (specifically systemic lupus erythematosus)", "rosacea"),
                          ("Angiosarcoma (specifically Stewart-Treves syndrome)",
                           "angiosarcoma")):
        verdict = GRADER.grade_frq(answer, truth)
        assert verdict.verdict == 0 and verdict.sure and "another disease" in verdict.reason


def test_every_form_of_the_truth_is_asked() -> None:
    # The whole truth with its abbreviation makes the answer "broader, unsure"; the form
    # without the parenthesis makes it the same name, and sure.
    verdict = GRADER.grade_frq("Discoid lupus erythematosus", "discoid lupus erythematosus (dle)")
    assert (verdict.verdict, verdict.relation, verdict.decided_by) == (1, "same", OFFLINE)


@pytest.mark.parametrize(("response", "truth"), [
    ("Hemophilia A", "hemophilia B"),  # one letter, but a short name: another disease
    ("Bipolar III disorder", "bipolar II disorder"),
    ("Hypothyroidism", "hyperthyroidism"),
])
def test_a_slip_never_joins_two_diseases(response: str, truth: str) -> None:
    assert GRADER.grade_frq(response, truth).verdict == 0


@pytest.mark.parametrize(("response", "truth"), [
    ("Paget's disease of bone", "osteitis deformans"),  # ICD-10-CM: bracketed synonym
    ("Onychomycosis", "tinea unguium"),  # ICD-10-CM: inclusion term of the code
    ("Chickenpox", "varicella"),
    ("Haemolytic anaemia", "hemolytic anemia"),  # spelling variants
    ("Guillain\u2013Barr\u00e9 syndrome", "Guillain-Barre syndrome"),
    ("Central retinal artery occlusion", "central retinal artery occulsion"),  # a typo
    ("Pityriasis rubra pilaris", "pityriasis ruba pilaris"),  # a slip in a long name
    ("Dermatographia", "dermatographism"),  # one root, two nouns
    ("Roseola", "roseola infantum"),  # only an age: the words are sure, whatever MONDO says
    ("Migraine", "migraine headache"),  # MeSH lists it, though one word of the truth
    ("Alpha-1 antitrypsin deficiency", "\u03b11-antitrypsin deficiency"),  # Greek spelled out
    ("Multiple endocrine neoplasia type 2A", "multiple endocrine neoplasia (MEN) IIa"),
    ("Multiple endocrine neoplasia type 2", "multiple endocrine neoplasia (MEN) IIa"),  # broader
])
def test_synonyms_and_spelling(response: str, truth: str) -> None:
    assert GRADER.grade_frq(response, truth).verdict == 1


@pytest.mark.parametrize(("response", "truth"), [
    ("Chronic prostatitis/chronic pelvic pain syndrome", "chronic pelvic pain syndrome"),
    ("Depersonalization/derealization disorder", "derealization disorder"),
    ("Interstitial cystitis /Painful bladder syndrome", "interstitial cystitis"),
])
def test_a_slash_joins_two_names_of_one_condition(response: str, truth: str) -> None:
    assert GRADER.grade_frq(response, truth).verdict == 1


def test_slash_names_share_their_head_or_modifier() -> None:
    assert given_names("depersonalization/derealization disorder")[1:] == [
        "depersonalization disorder", "derealization disorder"]
    assert given_names("thyroid nodule/cancer")[1:] == ["thyroid nodule", "thyroid cancer"]
    assert given_names("Anti-SSA/Ro") == ["Anti-SSA/Ro", "Anti-SSA"]  # "Ro" names nothing
    assert given_names("psoriasis") == ["psoriasis"]


def test_verdict_says_who_decided_and_whether_sure() -> None:
    sure = GRADER.grade_frq("Psoriasis", "psoriasis")
    unsure = GRADER.grade_frq("Bacterial meningitis", "tuberculous meningitis")
    assert (sure.decided_by, sure.sure) == (OFFLINE, True)
    assert (unsure.decided_by, unsure.sure) == (OFFLINE_UNSURE, False)
    assert set(sure.record()) == {"verdict", "extracted", "category", "decided_by", "reason",
                                  "relation"}
    assert (sure.relation, unsure.relation) == ("same", "related")


# --- multiple choice ------------------------------------------------------------------------

OPTIONS = ["Psoriasis", "Lichen planus", "Seborrheic dermatitis", "Pityriasis rosea"]


@pytest.mark.parametrize(("response", "index", "how"), [
    ("B", 1, "letter"),
    ("(c)", 2, "letter"),
    ("Answer: D", 3, "letter"),
    ("B. Lichen planus", 1, "letter"),
    ("**Final Diagnosis:** Psoriasis.", 0, "text"),
    ("The answer is seborrheic dermatitis rather than psoriasis.", 2, "text"),
    # the British spelling is the option's text once folded (a word form the sources use)
    ("Seborrhoeic dermatitis", 2, "text"),
    ("Pityriasis rosea-like eruption, herald patch type", 3, "text"),
    ("None of the options fits; this looks like scabies.", None, "refusal"),
    ("Insufficient information to choose.", None, "refusal"),
])
def test_mcq_mapping(response: str, index: int | None, how: str) -> None:
    choice = choose(response, OPTIONS)
    assert (choice.index, choice.how) == (index, how)


def test_mcq_letter_needs_its_option() -> None:
    options = ["Ulcerative colitis", "Crohn disease", "C. difficile colitis", "Ischemic colitis"]
    assert choose("C. difficile colitis", options).index == 2
    options[2] = "Microscopic colitis"
    assert choose("C. difficile colitis", options).index is None


def test_mcq_longer_option_wins_over_its_substring() -> None:
    options = ["Chronic hypertension", "Eclampsia", "Gestational hypertension", "Preeclampsia"]
    assert choose("Final Diagnosis: Preeclampsia", options).index == 3


def test_grade_mcq_verdicts() -> None:
    right = GRADER.grade_mcq("Psoriasis", OPTIONS, "psoriasis")
    wrong = GRADER.grade_mcq("B", OPTIONS, "psoriasis")
    none = GRADER.grade_mcq("None of the above.", OPTIONS, "psoriasis")
    assert (right.verdict, right.extracted) == (1, "Psoriasis")
    assert (wrong.verdict, wrong.extracted) == (0, "Lichen planus")
    assert (none.verdict, none.category) == (0, "none")
    # the published pipeline also wanted the answer verbatim in the reply
    assert GRADER.grade_mcq("A", OPTIONS, "psoriasis", verbatim=True).verdict == 0


# --- the grade command ----------------------------------------------------------------------


def _run_grade(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    grade_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["grade", *argv])
    status: int = args.run(args)
    return status


def test_grade_command(tmp_path: Path) -> None:
    lines = [
        {"correct_answer": "psoriasis", "response": "**Final Diagnosis:** Psoriasis"},
        {"correct_answer": "psoriasis", "response": "Psoriasis or eczema", "format": "frq"},
        {"correct_answer": "Lichen planus", "response": "b", "choices": OPTIONS},
        {"case_id": "c1", "format": "mcq", "correct_answer": "lichen planus",
         "response": "Lichen planus", "extracted": "recorded"},
    ]
    source = tmp_path / "in.jsonl.gz"
    with gzip.open(source, "wt") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,choice_1,choice_2,choice_3,choice_4\n"
                     "c1,Psoriasis,Lichen planus,Seborrheic dermatitis,Pityriasis rosea\n")
    out = tmp_path / "out.jsonl"
    assert _run_grade("--input", str(source), "--output", str(out), "--cases", str(cases)) == 0
    graded = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["verdict"] for g in graded] == [1, 0, 1, 1]
    assert [g["category"] for g in graded] == ["single", "multiple", "single", "single"]
    assert graded[0]["extracted"] == "Psoriasis" and graded[1]["extracted"] == "multiple"
    assert graded[3]["extracted"] == "Lichen planus"
    assert graded[3]["recorded_extracted"] == "recorded"  # the input's own field is kept
    assert all(g["decided_by"] == OFFLINE for g in graded)


def test_grade_command_says_when_mcq_lines_lack_choices(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    lines = [{"format": "mcq", "correct_answer": "psoriasis", "response": "Psoriasis"},
             {"format": "frq", "correct_answer": "psoriasis", "response": "Eczema"}]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _run_grade("--input", str(source), "--output", str(tmp_path / "o.jsonl")) == 0
    summary = capsys.readouterr().err
    assert "frq: 1 graded, accuracy 0.000" in summary
    assert "mcq-as-frq: 1 graded, accuracy 1.000" in summary and "--cases" in summary


def test_grade_command_names_a_bad_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"correct_answer": "x", "response": "y"}\n{"correct_answer": "x"}\n')
    assert _run_grade("--input", str(source), "--output", str(tmp_path / "o.jsonl")) == 2
    assert f"{source}:2: field 'response'" in capsys.readouterr().err


# --- agreement with the paper's grader on the recorded runs ---------------------------------

#: Acceptance floors from the issue, pooled over both models' free-response answers.
AGREEMENT_FLOOR, KAPPA_FLOOR = 0.95, 0.85
#: What the grader reaches today (benchmarks/bench_grader.py), kept as regression floors:
#: here on the held-out half of the cases the suite grades (:func:`held_out`: GPT-4 0.907 /
#: 0.768, GPT-3.5 0.930 / 0.788 on 19,772 and 19,754 answers). On all the answers, which the
#: benchmark grades, the same margins give 0.906/0.765 and 0.927/0.778. Issue 21 lowered
#: them (0.925/0.817 and 0.931/0.795 on all the answers before): the reference accepts the
#: truth named beside another disease, narrower answers and families, which the experts'
#: rule and the main-diagnosis rule score 0 (the benchmark's anatomy counts each). Then
#: 0.911/0.776 for GPT-4: a sibling or an unknown name with another disease's head in
#: brackets after the main diagnosis is a second diagnosis ("T (W)").
REGRESSION = {"gpt4": (0.901, 0.755), "gpt3": (0.926, 0.778)}
#: The tests of the agreement share one grading of both recorded runs (~24 s of CPU): under
#: ``--dist loadgroup`` they run on one worker, which grades them once, not one per worker.
AGREEMENT = pytest.mark.xdist_group("craftmd_agreement")


def held_out(case_id: str) -> bool:
    """Fold B of the benchmark's two folds of the cases (``bench_grader.fold``: the parity
    of half the case number): the fold no rule was studied on, as a rule that raises fold A
    and not B is a fit to cases."""
    return (int(case_id.rsplit("_", 1)[1]) // 2) % 2 == 1


class GradedOnce(CraftMDGrader):
    """The grader, each distinct answer graded once and its verdict counted for every line
    that gives it. The recorded runs repeat answers (a model gives a case the same reply
    over trials and experiments, and both models often give the same one): of the lines
    the suite grades, ~40% of the free-response ones and ~80% of the multiple-choice ones
    repeat one already graded. Grading is a function of the reply, the truth and the
    choices (deterministic and offline: :mod:`~pytest_agentclinic.grading.judging.craftmd_grader`),
    so every line gets the verdict grading it again would give; the tables count each line."""

    def __init__(self) -> None:
        super().__init__()
        self._frq: dict[tuple[str, str, tuple[str, ...]], Graded] = {}
        self._mcq: dict[tuple[str, tuple[str, ...], str, bool], Graded] = {}

    def grade_frq(self, response: str, correct_answer: str,
                  choices: Sequence[str] = ()) -> Graded:
        key = (response, correct_answer, tuple(choices))
        if key not in self._frq:
            self._frq[key] = super().grade_frq(response, correct_answer, choices)
        return self._frq[key]

    def grade_mcq(self, response: str, choices: Sequence[str], correct_answer: str, *,
                  verbatim: bool = False) -> Graded:
        key = (response, tuple(choices), correct_answer, verbatim)
        if key not in self._mcq:
            self._mcq[key] = super().grade_mcq(response, choices, correct_answer,
                                               verbatim=verbatim)
        return self._mcq[key]


@pytest.fixture(scope="session")
def reports() -> dict[str, Report]:
    """Both recorded runs graded once per session: every multiple-choice answer (Table 1 is
    reproduced on all of them; 3 s), and the free-response answers of the held-out half of
    the cases (:func:`held_out`, ~20,000 a model; all 80,101 took 45 s of CPU, the suite's
    longest fixture). The benchmark grades them all; here a regression of the grader shows
    on the held-out half, against that half's floors. Each distinct answer is graded once
    (:class:`GradedOnce`: ~10% less CPU, the grader's own caches already make a repeat
    cheaper than a new answer)."""
    folder = SHARED / "craftmd"
    if not (folder / RECORDED["gpt4"]).exists():
        pytest.skip(f"CRAFT-MD recorded runs not found under {folder}")
    cases = load_cases(folder / CASES)
    grader = GradedOnce()
    return {model: evaluate(model, [line for line in load_recorded(folder / name)
                                    if line["format"] == "mcq" or held_out(line["case_id"])],
                            cases, grader)
            for model, name in RECORDED.items()}


@AGREEMENT
@pytest.mark.parametrize("model", ["gpt4", "gpt3"])
def test_agreement_does_not_regress(reports: dict[str, Report], model: str) -> None:
    agreement, kappa = REGRESSION[model]
    assert reports[model].frq.n > 19_000  # half of each run's ~40,000
    assert reports[model].frq.rate >= agreement
    assert reports[model].frq.kappa >= kappa


@AGREEMENT
@pytest.mark.xfail(reason="not reached: the offline grader agrees on ~0.921 (kappa ~0.78); the "
                          "benchmark's anatomy of the disagreements says why", strict=True)
def test_agreement_meets_acceptance_floor(reports: dict[str, Report]) -> None:
    total = pooled(reports.values())
    assert total.rate >= AGREEMENT_FLOOR and total.kappa >= KAPPA_FLOOR


@AGREEMENT
def test_disagreements_are_sorted_by_kind(reports: dict[str, Report]) -> None:
    for report in reports.values():
        disagreements = report.frq.table[(0, 1)] + report.frq.table[(1, 0)]
        assert sum(report.anatomy.values()) == disagreements
        assert set(report.anatomy) <= set(KINDS) and not report.anatomy["other"]
        # the reference's "None" for bare correct names is the largest single kind of slip
        assert report.anatomy["reference_none"] > report.anatomy["reference_broader"]
        assert report.frq_step2.n == report.frq.n


def test_disagreement_kind() -> None:
    bare = GRADER.grade_frq("Schizophrenia", "schizophrenia")
    broader = GRADER.grade_frq("Melanoma", "superficial spreading melanoma")
    narrower = GRADER.grade_frq("Paranoid schizophrenia", "schizophrenia")
    unknown = GRADER.grade_frq("Bell's palsy", "Hunt syndrome")
    several = GRADER.grade_frq("Eczema or psoriasis", "psoriasis")
    assert disagreement_kind(bare, "none") == "reference_none"
    assert disagreement_kind(broader, "melanoma") == "reference_broader"
    family = GRADER.grade_frq("Lung cancer", "small cell lung cancer")  # issue 21: strict
    assert disagreement_kind(family, "lung cancer") == "family"
    beside = GRADER.grade_frq("Eczema, psoriasis", "psoriasis")
    assert disagreement_kind(beside, "psoriasis") == "main_only"
    assert disagreement_kind(narrower, "paranoid schizophrenia") == "reference_narrower"
    assert disagreement_kind(unknown, "bell's palsy") == "knowledge"
    assert disagreement_kind(several, "psoriasis") == "extraction"


@AGREEMENT
@pytest.mark.parametrize("model", ["gpt4", "gpt3"])
def test_mcq_reproduces_table_1(reports: dict[str, Report], model: str) -> None:
    verbatim = reports[model].mcq_accuracy(verbatim=True)
    normalised = reports[model].mcq_accuracy()
    for experiment in EXPERIMENTS:
        assert verbatim[experiment] == pytest.approx(PAPER_MCQ[model][experiment], abs=0.01)
        # normalised matching also counts answers the dataset spells with stray characters
        assert 0 <= normalised[experiment] - verbatim[experiment] <= 0.03


def test_a_digit_is_never_a_spelling_slip() -> None:
    from pytest_agentclinic.grading.terms.equivalence import judge

    assert judge("occulsion of the artery", "occlusion of the artery").correct
    assert not judge("Condition1 disease", "Condition2 disease").correct
