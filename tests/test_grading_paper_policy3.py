"""Issue 31, "`paper` means the paper", round 3: rules found by reading the recorded
verdicts again against CRAFT-MD's grader text (``../shared/papers/craft-md.txt``; docs/grading.md,
"The recorded verdicts, round 3").

The pairs of the first tests are the paper's own few-shot examples (its step 2 prompt and the
dermatologists' instruction), not cases of the shared data; the other truths and answers are
our own.
"""

from __future__ import annotations

import pytest

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # Example 3: "toe nail fungus" / onychomycosis, "They are synonymous, so return Yes"
    ("toe nail fungus", "onychomycosis"),
    ("Final diagnosis: Toenail fungus.", "onychomycosis"),
    ("The most likely diagnosis is toe-nail fungus.", "Onychomycosis"),
    # Example 4: "wart" / verruca vulgaris, "They are synonymous, so return Yes"
    ("Wart", "verruca vulgaris"),
    ("**Final Diagnosis:** Warts", "verruca vulgaris"),
    # synonyms either way round
    ("Verruca vulgaris", "wart"),
    ("Onychomycosis", "toe nail fungus"),
])
def test_the_prompts_own_synonym_examples_score(grader: CraftMDGrader, answer: str,
                                                truth: str) -> None:
    # Both were read as different diseases (no source links them) under either policy; the
    # dermatologists were given the same pairs as synonyms, so strict follows them too.
    graded = grader.grade_frq(answer, truth)
    assert (graded.verdict, graded.sure) == (1, True), graded.reason


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # the prompt's "no" example, and each name against another disease
    ("Eczema", "onychomycosis"),
    ("toe nail fungus", "tinea pedis"),
    ("Wart", "molluscum contagiosum"),
    ("Onychomycosis", "verruca vulgaris"),
    ("Verruca vulgaris", "toe nail fungus"),
])
def test_the_prompts_pairs_match_nothing_else(grader: CraftMDGrader, answer: str,
                                              truth: str) -> None:
    assert grader.grade_frq(answer, truth).verdict == 0


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # DSM-5's names of DSM-IV-TR's disorders, either way round
    ("Functional neurological symptom disorder", "conversion disorder"),
    ("Conversion disorder", "functional neurological symptom disorder"),
    ("Final Diagnosis: Depersonalization/derealization disorder", "depersonalization disorder"),
    ("Depersonalization-derealization disorder.", "depersonalization disorder"),
    ("Major neurocognitive disorder", "dementia"),
    ("Insomnia disorder", "primary insomnia"),
    ("Primary hypersomnia", "hypersomnolence disorder"),
    ("Childhood-onset fluency disorder", "stuttering"),
    # DSM-5 writes the old name in brackets after the new: one disorder, not two
    ("Conversion disorder (functional neurological symptom disorder)", "conversion disorder"),
    ("Childhood-onset fluency disorder (stuttering)", "stuttering"),
])
def test_dsm5_renamed_disorders_are_one_disease(grader: CraftMDGrader, answer: str,
                                                truth: str) -> None:
    # Each was read as a different disease (no shared word, or a word the truth lacks), and
    # under strict the old name in brackets was a second disease beside the new one.
    graded = grader.grade_frq(answer, truth)
    assert (graded.verdict, graded.sure) == (1, True), graded.reason


@pytest.mark.parametrize("grader", [STRICT, PAPER], ids=["strict", "paper"])
@pytest.mark.parametrize(("answer", "truth"), [
    # DSM-5 split hypochondriasis in two, and merged somatization disorder with others into
    # somatic symptom disorder: the new name is no synonym of either
    ("Somatic symptom disorder", "hypochondriasis"),
    ("Somatic symptom disorder", "somatization disorder"),
    # the renamed disorders are not one another
    ("Somatic symptom disorder", "conversion disorder"),
    ("Functional neurological symptom disorder", "somatization disorder"),
    ("Major neurocognitive disorder", "mild cognitive impairment"),
    ("Mild neurocognitive disorder", "dementia"),
    ("Insomnia disorder", "primary hypersomnia"),
    # the renamed disorder beside another disease is still two diagnoses under strict, or an
    # alternative under both
    ("Conversion disorder or functional neurological symptom disorder", "panic disorder"),
])
def test_dsm5_names_match_nothing_else(grader: CraftMDGrader, answer: str, truth: str) -> None:
    assert grader.grade_frq(answer, truth).verdict == 0
