"""Red team round 15: the structure an answer gives its names. A role given on a list item
or a line is the role given in one line; a line that keeps a name open ("Can't rule out: W")
offers it as an alternative; a name kept open after the statement's clause ("T; W (cannot
be excluded)") is an alternative under both policies; a role given in nested JSON or in a
table's column of choice decides; findings summed up with "+" before an arrow are the
grounds of the name after it (docs/grading.md, round 15; issue 31, *Main and concurrent*;
the paper's step 1)."""

from __future__ import annotations

import pytest
from helpers import BARE_AND_WRAPPED

from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.reading.extract import extract
from pytest_agentclinic.grading.reading.roles import listed_roles

STRICT, PAPER = CraftMDGrader(), CraftMDGrader(policy="paper")
# the truth, a disease beside it, a laboratory state
T, W, LAB = "Sarcoidosis", "Gout", "hypokalemia"


def _said(shape: str, wrap: str = "{}") -> str:
    return wrap.format(shape.format(t=T, w=W, lab=LAB))


@pytest.mark.parametrize("shape", [
    # roles on list items, numbered, bulleted or one a line, as in one line
    "1. Primary diagnosis: {t}\n2. Secondary: {w}",
    "1. Primary diagnosis: {t}\n2. Secondary diagnosis: none",
    "1. {t} (final)\n2. {w} (differential)", "1. {w} (differential)\n2. {t} (final)",
    "- {t} (final)\n- {w} (differential)", "{t} (final)\n{lab} (differential)",
    "1. **{t}** (final)\n2. **{w}** (ruled out)\n3. **{lab}** (less likely)",
    "1. Working diagnosis: {t}\n2. Incidental: {lab}\n3. Plan: start treatment",
    # nested JSON with a role for each name, and a table's column of choice
    '{{"diagnoses": [{{"name": "{t}", "role": "primary"}}, {{"name": "{w}", '
    '"role": "differential"}}]}}',
    '```json\n{{"assessment": {{"diagnoses": [{{"name": "{w}", "role": "differential"}}, '
    '{{"name": "{t}", "role": "final"}}]}}}}\n```',
    "| Diagnosis | Likelihood | Chosen |\n|---|---|---|\n| {t} | high | \u2705 |\n"
    "| {w} | low | |",
    "| Differential | Status |\n|---|---|\n| {t} | **Final** |\n| {w} | Ruled out |",
    # findings summed up to the answer
    "Fever + rash + tender nodes \u2192 {t}", "Fever + rash => {t}", "Fever + rash -> {t}",
    "Fever + rash + tender nodes \u2234 {t}"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_role_on_a_line_decides(shape: str, wrap: str) -> None:
    answer = _said(shape, wrap)
    assert STRICT.grade_frq(answer, T).verdict == 1, extract(answer)


@pytest.mark.parametrize("shape", [
    # the truth set aside on a list item
    "1. Primary diagnosis: {w}\n2. Secondary: {t}", "1. {t} (differential)\n2. {w} (final)",
    "- {w} (final)\n- {t} (differential)", "{lab} (final)\n{t} (differential)",
    '{{"diagnoses": [{{"name": "{w}", "role": "primary"}}, {{"name": "{t}", '
    '"role": "differential"}}]}}',
    "| Diagnosis | Likelihood | Chosen |\n|---|---|---|\n| {w} | high | \u2705 |\n"
    "| {t} | low | |",
    "| Differential | Status |\n|---|---|\n| {t} | possible |\n| {w} | possible |",
    # a second name kept open on a line of its own, with the truth first or second
    "**Most likely:** {t}\n**Can't rule out:** {w}", "Most likely: {t}\nAlso possible: {w}",
    "Diagnosis: {t}\nConsider: {w}", "Most likely: {t}\nCannot exclude: {w}",
    "1. Most likely: {t}\n2. Possible: {w}", "Most likely: {w}\nPossible: {t}",
    "Fever + rash \u2192 {w}; {t} unlikely"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_the_truth_set_aside_or_kept_open_never_scores(shape: str, wrap: str) -> None:
    answer = _said(shape, wrap)
    assert STRICT.grade_frq(answer, T).verdict == 0, extract(answer)


@pytest.mark.parametrize("shape", [
    # kept open: multiple, so neither name is compared under `paper` (it had matched the
    # truth as a name beside the main one)
    "{t}; {w} (cannot be excluded)", "{w}; {t} (cannot be excluded)",
    "{w}. {t} (cannot be ruled out).", "Most likely: {w}\nPossible: {t}",
    "{t}\nPossible: {w}", "Most likely: {t}\nCan't rule out: {w}"])
def test_a_name_kept_open_is_multiple_under_both_policies(shape: str) -> None:
    answer = _said(shape)
    assert extract(answer).category == "multiple", extract(answer)
    assert PAPER.grade_frq(answer, T).verdict == 0, extract(answer)


@pytest.mark.parametrize("shape", [
    # a step of the plan under "Consider:" names no second diagnosis
    "{t}\nConsider: MRI of the brain", "{t}\nConsider: topical steroids",
    # a cause or an organism on a line below the answer is no alternative
    "Diagnosis: {t}\nEtiology: multifactorial",
    "Diagnosis: {t}\nLikely organism: Staphylococcus aureus",
    # "->" is an arrow, not a bracket's remnant
    "Impression -> {t}"])
def test_plans_causes_and_labels_beside_the_answer_stay(shape: str) -> None:
    assert STRICT.grade_frq(_said(shape), T).verdict == 1, extract(_said(shape))


def test_listed_roles_reads_only_lists_of_roles() -> None:
    # every item needs a role, and exactly one the main one's
    assert listed_roles("1. A (final)\n2. B (differential)") == "A (final), B (differential)"
    assert listed_roles("1. A (final)\n2. B") == "1. A (final)\n2. B"
    assert listed_roles("1. A (final)\n2. B (final)") == "1. A (final)\n2. B (final)"
    # numbered headings lose their numbers only when the first is the answer's label
    assert listed_roles("1. Primary: A\n2. Secondary: B") == "Primary: A\nSecondary: B"
    assert listed_roles("1. History: A\n2. Diagnosis: B") == "1. History: A\n2. Diagnosis: B"
    assert listed_roles("1. A\n2. B") == "1. A\n2. B"


def test_a_list_of_plain_names_is_still_multiple() -> None:
    assert extract(_said("1. {t}\n2. {w}")).category == "multiple"
    assert extract(_said("1. {t} (most likely)\n2. {w} (possible)")).category == "multiple"
    assert STRICT.grade_frq(_said("{t} \u2192 {w}"), T).verdict == 0
