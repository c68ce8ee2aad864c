"""The one text normaliser (core/text.py): one tokenizer, read two ways."""

from __future__ import annotations

import pytest

from pytest_agentclinic.core import lexicon, text
from pytest_agentclinic.core.text import (
    content_words,
    key,
    key_words,
    normaliser_fingerprint,
    tokens,
    variants,
    words,
)
from pytest_agentclinic.grading import terminology
from pytest_agentclinic.metrics import facts


def test_normalisation_helpers() -> None:
    assert words("ECG & CXR") == ("electrocardiogram", "chest", "x", "ray")
    assert variants("Progressive multifocal encephalopathy (PML)") == [
        "Progressive multifocal encephalopathy (PML)", "Progressive multifocal encephalopathy",
        "PML"]
    assert key_words("Acute kidney injury") == frozenset({"acute", "kidney", "injury"})


@pytest.mark.parametrize("name", [
    "Haemolytic anaemias", "Crohn's colitis", "non-Hodgkin lymphoma", "hepatitis B",
    "testicular torsion", "Torsion of the testis", "generalised pustular psoriasis",
    "Deep mycoses", "arthritides", "abscesses of the skin"])
def test_the_grader_reads_names_with_the_core_tokenizer(name: str) -> None:
    # No second stack: the grader's words are the core tokenizer's, with only the word forms
    # learned from the sources unified and Latin plurals folded before it reads the name.
    forms = terminology.word_forms()
    singular = terminology._singular(name)
    assert terminology.tokens(name) == tuple(forms.get(w, w) for w in text.tokens(singular))
    assert terminology.content(name) == tuple(forms.get(w, w) for w in text.content(singular))
    assert terminology.key(name) == frozenset(terminology.content(name))
    assert terminology.compact(name) == "".join(terminology.content(name))
    assert terminology.tokens(name, name_forms=False) == text.tokens(singular,
                                                                     name_forms=False)


@pytest.mark.parametrize(("given", "expected"), [
    ("Haemolytic anaemias", ("hemolytic", "anemia")),  # spelling, plural
    ("Crohn's colitis", ("crohn", "colitis")),  # possessive, even before a comma or the end
    ("M\u00e9ni\u00e8re\u2019s", ("meniere",)),  # accents, curly apostrophe
    ("non-Hodgkin lymphoma", ("nonhodgkin", "lymphoma")),  # "non-" is part of the word
    ("hepatitis B", ("hepatitis", "b_")),  # a subtype letter is no article
    ("CXR, HIV and CMV", ("chest", "x", "ray", "human", "immunodeficiency", "virus", "and",
                          "cytomegalovirus")),  # one abbreviation table
    ("bullae and emboli", ("bulla", "and", "embolus")),  # Latin plurals
])
def test_agents_and_grader_fold_stem_and_expand_alike(given: str, expected: tuple[str, ...]
                                                      ) -> None:
    assert words(given) == tokens(given) == expected
    assert key_words(given) == key(given)


@pytest.mark.parametrize(("given", "expected"), [
    ("\u03b2-thalassemia", ("beta", "thalassemia")),  # the ASCII fold used to drop it
    ("\u03b11-antitrypsin", ("alpha", "1", "antitrypsin")),
    ("\u00b5 chain disease", ("mu", "chain", "disease")),  # the micro sign is a mu
    ("MEN IIa", ("men", "2", "a_")),  # a numbered subtype with its letter
    ("type 2B", ("type", "2", "b_")),
    ("id reaction", ("id", "reaction")),  # a word, not type 1d
])
def test_greek_letters_and_lettered_subtypes(given: str, expected: tuple[str, ...]) -> None:
    assert tokens(given) == expected


@pytest.mark.parametrize(("abbreviation", "expansion"), [
    ("echo", "echocardiogram"), ("hr", "heart rate"), ("temp", "temperature"),
    ("PE", "pulmonary embolism"), ("MS", "multiple sclerosis"),
])
def test_ambiguous_abbreviations_are_expanded_for_agents_only(abbreviation: str,
                                                              expansion: str) -> None:
    # A doctor asking for an "echo" wants the echocardiogram; a diagnosis "MS" may be
    # mitral stenosis, so the grader keeps it as written, in capitals or not.
    assert words(abbreviation) == tuple(expansion.split())
    assert tokens(abbreviation) == (abbreviation.lower(),)
    assert tokens(abbreviation, expand_ambiguous=True, name_forms=False) == words(abbreviation)


def test_acronyms_spelled_like_words_count_only_in_capitals() -> None:
    necrolysis = ("toxic", "epidermal", "necrolysis")
    assert tokens("TEN") == words("TEN") == necrolysis
    assert words("fever for ten days") == ("fever", "for", "ten", "day")
    assert tokens("Fat pad") == ("fat", "pad")  # not peripheral artery disease
    assert tokens("Hit by a car")[0] == "hit"
    # A lone word in parentheses is the name's abbreviation, lower-cased or not.
    assert tokens("toxic epidermal necrolysis (ten)") == necrolysis * 2


def test_disease_name_forms_are_the_graders_reading() -> None:
    assert tokens("renal adenocarcinoma") == ("kidney", "adeno", "cancer")
    assert tokens("Factor V Leiden") == ("factor", "5", "leiden")
    assert words("Factor V Leiden") == ("factor", "v_", "leiden")  # a subtype letter
    assert words("I have had it for a week")[0] == "i"  # the pronoun is no numeral
    assert tokens("Malignant neoplasm of lung") == ("cancer", "of", "lung")
    assert words("renal adenocarcinoma") == ("renal", "adenocarcinoma")
    assert tokens("renal adenocarcinoma", name_forms=False) == words("renal adenocarcinoma")
    assert content_words("No tumour seen") == frozenset({"no", "tumor", "seen"})


def test_name_keys_drop_filler_hedges_and_generic_heads() -> None:
    assert key("Probable lithium-induced nephrogenic diabetes insipidus") == frozenset(
        {"nephrogenic", "diabete", "insipidus"})
    assert key("Serotonin syndrome") == key("serotonin") == frozenset({"serotonin"})
    assert key("Syndrome") == frozenset({"syndrome"})  # the head alone is kept
    assert key_words("Lyme disease") == frozenset({"lyme"})


@pytest.mark.parametrize("change", [
    lambda mp: mp.setitem(lexicon.ABBREVIATIONS, "zzq", "zeta"),
    lambda mp: mp.setitem(lexicon.WORD_FORMS, "zzq", "zeta"),
    lambda mp: mp.setitem(lexicon.SPELLINGS, "zzq", "z"),
    lambda mp: mp.setattr(text, "AMBIGUOUS", lexicon.AMBIGUOUS | {"zzq"}),
    lambda mp: mp.setattr(text, "WORDLIKE", lexicon.WORDLIKE | {"zzq"}),
    lambda mp: mp.setattr(text, "GENERIC", lexicon.GENERIC | {"zzq"}),
    lambda mp: mp.setattr(text, "HEDGES", lexicon.HEDGES | {"zzq"}),
])
def test_the_fingerprint_covers_every_table_keys_depend_on(
        monkeypatch: pytest.MonkeyPatch, change: object) -> None:
    before = normaliser_fingerprint(), terminology.normaliser_fingerprint()
    change(monkeypatch)  # type: ignore[operator]
    after = normaliser_fingerprint(), terminology.normaliser_fingerprint()
    assert before[0] != after[0] and before[1] != after[1]


def test_the_tokenizer_keeps_a_few_encounters_of_one_off_texts_not_thousands() -> None:
    """Each xdist worker filled :func:`text.tokens`' 2,048 entries with texts nothing asked
    for again (an encounter's utterances, ~0.4 KB an entry); within an encounter its texts
    are still answered from the cache."""
    text.tokens.cache_clear()
    utterances = [f"I have had a cough for {i} days and a fever since yesterday." for i in
                  range(3 * text.CACHE_ENTRIES)]
    for utterance in utterances:
        assert text.tokens(utterance) == text.tokens(utterance)  # asked again at once: a hit
    info = text.tokens.cache_info()
    assert info.hits == len(utterances)
    assert info.currsize <= text.CACHE_ENTRIES // 4
    text.content("acute bronchitis")
    assert text.content.cache_info().maxsize == info.maxsize
    # The metrics' concept tokens of an encounter's facts and utterances likewise.
    assert facts.tokens.cache_info().maxsize == info.maxsize
    text.clear_caches()
