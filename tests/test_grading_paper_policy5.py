"""Issue 31, "`paper` means the paper", round 5: rules found by reading fold A's
disagreements with the recorded GPT-4 verdicts under `paper` (docs/grading.md, "The recorded
verdicts, round 5").

The truths and answers are our own, not cases of the shared data.
"""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.notes import without_code_brackets

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")


@pytest.mark.parametrize(("answer", "truth"), [
    # a bare bracket after the main name: another name the answer gives its diagnosis, one
    # source's synonym of the truth (the terminology unsure of it)
    ("Ureteral colic (kidney stone)", "renal calculus"),
    ("**Final Diagnosis:** Left ureterolithiasis (kidney stone).", "renal calculus"),
    ("Clostridial spasm syndrome (lockjaw)", "tetanus"),
    ("The most likely diagnosis is acute viral eye infection (pink eye).", "conjunctivitis"),
    # "also known as" the terminology does not confirm: claimed, compared the same way
    ("Ureteral colic, also known as kidney stone", "renal calculus"),
    ("Epidemic keratoconjunctivitis (also known as pink eye)", "conjunctivitis"),
    ("Ureteral colic (also known as a kidney stone)", "renal calculus"),
])
def test_paper_compares_a_gloss_as_the_main_name(answer: str, truth: str) -> None:
    # the gloss matched only when the terminology was sure of it; the main name, unrelated,
    # decided (0). CRAFT-MD's step 1 returns the name the answer gives, its step 2 compares
    # it with the truth: a synonym of one source is the rules' best guess, unsure, as it is
    # for the main name
    graded = PAPER.grade_frq(answer, truth)
    assert (graded.verdict, graded.sure) == (1, False), graded.reason


@pytest.mark.parametrize(("answer", "truth"), [
    ("Ureteral colic (kidney stone)", "renal calculus"),
    ("Ureteral colic, also known as kidney stone", "renal calculus"),
    ("Clostridial spasm syndrome (lockjaw)", "tetanus"),
])
def test_strict_keeps_an_unconfirmed_gloss_a_second_name(answer: str, truth: str) -> None:
    # strict's own rule: a name beside the main one the terminology does not link to it
    assert STRICT.grade_frq(answer, truth).verdict == 0


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # an alternative in brackets stays an alternative (several diagnoses)
    ("Ureteral colic (or kidney stone)", "renal calculus"),
    ("Ureteral colic, possibly kidney stone", "renal calculus"),
    # a gloss that is another disease, or a kind of the truth (the prompt's "no")
    ("Ureteral colic (pyelonephritis)", "renal calculus"),
    ("Cholecystitis (gallstones)", "cholelithiasis"),
    # a name after "with" is a concurrent one, not a gloss: compared only when sure
    ("Ureteral colic with kidney stone", "renal calculus"),
])
def test_a_gloss_that_is_no_name_of_the_truth_does_not_score(
        grader: CraftMDGrader, answer: str, truth: str) -> None:
    assert grader.grade_frq(answer, truth).verdict == 0


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth", "name"), [
    # notes joined by ";" inside the bracket after the name: the ";" ended the statement
    # there, and the name read was "Migraine (without aura" (narrower than migraine)
    ("Migraine (without aura; episodic)", "migraine", "Migraine"),
    ("**Final Diagnosis:** Hypothyroidism (primary; newly diagnosed)", "hypothyroidism",
     "Hypothyroidism"),
    ("Gout (acute; first episode)", "gout", "Gout"),
    ("Tension-type headache (episodic; mild)", "tension-type headache",
     "Tension-type headache"),
    ("Chronic back pain (nonspecific; further information required for a precise diagnosis)",
     "chronic back pain", "Chronic back pain"),
])
def test_notes_joined_by_a_semicolon_in_a_bracket_stay_notes(
        grader: CraftMDGrader, answer: str, truth: str, name: str) -> None:
    graded = grader.grade_frq(answer, truth)
    assert (graded.verdict, graded.extracted) == (1, name), graded.reason


@pytest.mark.parametrize(("answer", "truth"), [
    # another disease in such a bracket is still another disease (strict's second one)
    ("Gout (acute; rheumatoid arthritis)", "gout"),
    ("Migraine (episodic; systemic lupus erythematosus)", "migraine"),
])
def test_a_disease_among_bracketed_notes_is_still_a_second_name(answer: str,
                                                                 truth: str) -> None:
    assert STRICT.grade_frq(answer, truth).verdict == 0


@pytest.mark.parametrize("text", [
    # ISCN's notation: a bracket against its word, its ";" with no space after it
    "Burkitt lymphoma with t(8;14)",
    "Burkitt lymphoma, t(8;14)(q24;q32)",
])
def test_a_karyotype_bracket_is_no_bracket_of_notes(text: str) -> None:
    assert without_code_brackets(text) == text


@pytest.mark.parametrize(("answer", "truth"), [
    # the bracket glosses the name it follows, not the main diagnosis: the truth stays in
    # its secondary role (suggested, a cause), which never scores
    ("Final Diagnosis: Bee sting with features suggestive of tinea capitis (scalp ringworm)",
     "tinea capitis (scalp ringworm)"),
    ("Final Diagnosis: Concussion with features suggestive of varicella (chickenpox)",
     "varicella (chickenpox)"),
    ("Acute flaccid paralysis, most likely due to poliomyelitis (polio).", "poliomyelitis"),
    ("Febrile seizure likely associated with roseola (exanthema subitum).", "roseola"),
    # two bare names in one bracket are options, no other name of the main diagnosis
    ("Possible malignancy (bone cancer such as osteosarcoma or Ewing sarcoma)",
     "Ewing sarcoma"),
])
def test_paper_compares_only_a_gloss_of_the_main_name(answer: str, truth: str) -> None:
    assert PAPER.grade_frq(answer, truth).verdict == 0
