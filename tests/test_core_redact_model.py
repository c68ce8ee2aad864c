"""core.redact_model: transcripts redacted as models, string by string."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import make_case, results, write_yaml_cases

from pytest_agentclinic.core.redact import MASK, redact, register
from pytest_agentclinic.core.redact_model import redact_model
from pytest_agentclinic.core.transcript import Transcript, Usage, Utterance, Verdict

SECRET = "tok-Redact-Model-4417"


def _transcript(text: str, model: str = "offline", **header: Any) -> Transcript:
    return Transcript(
        protocol="agentclinic", case_id="c-1", dataset="t", specialty="Dermatology",
        models={"doctor": model}, sample=0, turn_budget=3,
        utterances=[Utterance(turn=1, role="doctor", kind="question", text=text, model=model,
                              images=[f"https://host/a.png?key={SECRET}"],
                              usage=Usage(calls=1, prompt_tokens=7))],
        diagnosis="Psoriasis", verdict=Verdict(correct=True, decided_by="rules"),
        outcome="correct", **header)


def test_every_string_of_the_model_is_redacted_and_nothing_else_changes() -> None:
    register(SECRET)
    t = _transcript(f"the key is {SECRET}", error=f"Bearer {SECRET}",
                    conditions={f"k-{SECRET}": f"v {SECRET}"})
    clean = redact_model(t)
    assert type(clean) is Transcript
    assert SECRET not in clean.model_dump_json()
    u = clean.utterances[0]
    assert u.text == f"the key is {MASK}"
    assert u.images == [f"https://host/a.png?key={MASK}"]
    assert clean.conditions == {f"k-{MASK}": f"v {MASK}"}
    assert clean.error == f"Bearer {MASK}"
    # Everything without a secret is as it was: numbers, nested models, the verdict.
    assert u.usage == t.utterances[0].usage and clean.verdict == t.verdict
    assert clean.model_dump(exclude={"utterances", "conditions", "error"}) == t.model_dump(
        exclude={"utterances", "conditions", "error"})
    assert SECRET in t.model_dump_json()  # the original is left alone


def test_a_model_without_secrets_is_returned_as_it_is() -> None:
    t = _transcript("Any itching?")
    t = t.model_copy(update={"utterances": [t.utterances[0].model_copy(update={"images": []})]})
    assert redact_model(t) is t


def test_a_url_and_a_later_at_sign_keep_every_field() -> None:
    # Reproduction: redacted as JSON text, the user-info pattern ran from the URL at the end
    # of the text over the next fields to the "@" of a Vertex-style model name, cutting the
    # utterance's "model" out: the transcript no longer parsed.
    model = "claude-3-5-sonnet@20240620"
    t = _transcript("see http://example.org", model=model)
    clean = redact_model(t)
    assert clean.utterances[0].text == "see http://example.org"
    assert clean.utterances[0].model == model


def test_an_encounter_quoting_a_url_with_a_vertex_model_is_recorded(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    # Reproduction: the item ended in a pydantic ValidationError traceback (an error, and no
    # record) when the doctor's question ended in a URL and its model's name held an "@".
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.makeconftest("""
        from pytest_agentclinic.core.roles import Reply

        class Doctor:
            model = "claude-3-5-sonnet@20240620"
            prompt_version = "d-1"
            def __init__(self):
                self.turn = 0
            async def respond(self, view):
                self.turn += 1
                if self.turn == 1:
                    return Reply("Any fever? I read http://example.org")
                return Reply("DIAGNOSIS READY: Condition1 disease")

        def pytest_agentclinic_make_agent(role, model, case, config):
            return Doctor() if role == "doctor" else None
    """)
    result = pytester.runpytest("c.yaml", "--agent-run-name=url", *xdist)
    result.assert_outcomes(passed=1)
    (record,) = results(pytester.path).values()
    transcript = json.loads((pytester.path / record["transcript"]).read_text())
    doctor = [u for u in transcript["utterances"] if u["role"] == "doctor"]
    assert doctor[0]["text"] == "Any fever? I read http://example.org"
    assert {u["model"] for u in doctor} == {"claude-3-5-sonnet@20240620"}


@pytest.mark.parametrize("text", [
    "Bearer abcdef123456", "x://user:pw@host", "key sk-abcdefgh12", "api-key: abcdef1234",
    "Proxy: Basic dXNlcjpwYXNzd29yZA==", f"said {SECRET}", f"{SECRET}", "basic metabolic panel",
])
def test_each_string_is_redacted_as_redact_would_alone(text: str) -> None:
    # The model is first read as one text of its strings; a string that changes alone must
    # change there too, whatever its neighbours.
    register(SECRET)
    neighbours = ["http://example.org", "@", "Bearer", "", "sk-", "key"]
    t = _transcript("plain").model_copy(update={"utterances": [
        Utterance(turn=1, role="doctor", kind="question", text=n, model="m")
        for n in [*neighbours, text, *reversed(neighbours)]]})
    assert [u.text for u in redact_model(t).utterances] == [
        redact(u.text) for u in t.utterances]
