"""The typesetting and the clinician's shorthand the reader unifies before it reads an answer
(``grading/reading/typography.py``; issue 31, red team round 5)."""

from __future__ import annotations

from pytest_agentclinic.grading.reading.typography import expand_shorthand, untypeset


def test_untypeset_keeps_the_arguments_and_drops_the_markers() -> None:
    assert untypeset("$\\boxed{\\textbf{Gout}}$ [4]") == "Gout"
    assert untypeset("Gout\n- Pseudogout") == "Gout\n- Pseudogout"  # a list item stays
    assert untypeset("Gout (1 of 2 joints)") == "Gout (1 of 2 joints)"


def test_shorthand_is_written_out_as_whole_tokens_only() -> None:
    assert expand_shorthand("Findings c/w gout; h/o CKD") == \
        "Findings consistent with gout; history of CKD"
    assert expand_shorthand("Gout w/ tophi, w/o fever") == "Gout with tophi, without fever"
    # a slash between two names or numbers is no shorthand
    assert expand_shorthand("HIV/AIDS, 1/2, abc/wx") == "HIV/AIDS, 1/2, abc/wx"
