from __future__ import annotations

from pytest_agentclinic.core.text import key_words, variants, words


def test_normalisation_helpers() -> None:
    assert words("ECG & CXR") == ("electrocardiogram", "chest", "x", "ray")
    assert variants("Progressive multifocal encephalopathy (PML)") == [
        "Progressive multifocal encephalopathy (PML)", "Progressive multifocal encephalopathy",
        "PML"]
    assert key_words("Acute kidney injury") == frozenset({"acute", "kidney", "injury"})
