

@pytest.mark.parametrize("shape", [
    # "this patient has T": the patient named with "this", as "the patient has T"
    "This patient has {t}.",
    # a problem list's status after the name is no second condition
    "Assessment: {t}, stable", "{t}, improving",
    # the bracket form of "rather than W", an idiom of commitment, one guess as the answer
    "{t} (rather than {w})", "My money is on {t}.", "Best guess: {t}", "Ans: {t}",
    # a suspicion the next clause turns from
    "Concern for {w}; however, {t} is favoured.",
    # an ICD-11 code in brackets is a code, not a name: the name before it is read whole
    "**Granulomatosis with polyangiitis** (ICD-11: 4A44.A1)"])
@pytest.mark.parametrize("wrap", BARE_AND_WRAPPED)
def test_more_committed_answers_of_round_13_score(shape: str, wrap: str) -> None:
    truth = "Granulomatosis with polyangiitis" if "ICD-11" in shape else T
    said = _said(shape, wrap)
    assert STRICT.grade_frq(said, truth).verdict == 1, extract(said)


@pytest.mark.parametrize("shape", [
    # the next of a ranking under the answer is another possible diagnosis
    "First choice: {t}\nSecond choice: {w}", "{t}\nRunner-up: {w}",
    # a suspicion turned from, the bracket of "rather than", an offer without "it"
    "Concern for {t}; however, {w} is favoured.", "{w} (rather than {t})",
    "{t} \u2014 pending biopsy; could also be {w}",
    "{t} - pending biopsy; could also be Drug reaction with eosinophilia and systemic symptoms"])
def test_more_answers_of_round_13_that_must_not_score(shape: str) -> None:
    assert decided(_said(shape), T) == WRONG


def test_the_speaker_of_a_refusal_is_no_name() -> None:
    # "I" had been read as the name before the refusal where the question may ask for more
    # than a diagnosis (a test or a treatment), so a moderator model was asked about "I"
    said = "I can't diagnose Croup without an examination."
    assert extract(said, conditions_only=False).category == "none"
    # the mirror: a name before the refusal still counts
    assert extract("Psoriasis; I cannot confirm without a biopsy",
                   conditions_only=False).diagnosis == "Psoriasis"


@pytest.mark.parametrize("said", [
    "{t}; could also be treated with steroids", "{t}; may also be associated with uveitis"])
def test_a_verb_after_could_also_be_offers_no_diagnosis(said: str) -> None:
    # mirrors: what the disease may do or be treated with is no second diagnosis
    assert decided(_said(said), T) == RIGHT
