"""The CRAFT-MD protocol: items, the shared conversation, experiments and answer modes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.core.case import Case
from pytest_agentclinic.core.roles import Judgement
from pytest_agentclinic.core.transcript import Verdict
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer, grade_choice
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
VIGNETTE = ("A 40-year-old woman presents with an itchy rash on her elbows for two months. "
            "She has a history of asthma. Examination shows silvery plaques.")


def craft_case(i: int, **over: Any) -> dict[str, Any]:
    return make_case(i, vignette=VIGNETTE, **over)


@pytest.fixture
def craft(pytester: pytest.Pytester) -> pytest.Pytester:
    write_yaml_cases(pytester.path / "c.yaml", [craft_case(1), craft_case(2, choices=[])])
    return pytester


def test_items_per_experiment_and_answer_mode(craft: pytest.Pytester, xdist: list[str]) -> None:
    result = craft.runpytest("c.yaml", "--agent-protocol=craftmd", "--collect-only", "-q",
                             "--agent-experiment=vignette", "--agent-experiment=multiturn",
                             "--agent-experiment=examonly", "--agent-answer=mcq",
                             "--agent-answer=frq", "--agent-answer=mcq-many", *xdist)
    result.stdout.fnmatch_lines([
        "c.yaml::t-01[[]dermatology-offline-vignette-mcq[]]",
        "c.yaml::t-01[[]dermatology-offline-vignette-frq[]]",
        "c.yaml::t-01[[]dermatology-offline-vignette-mcq-many[]]",
        "c.yaml::t-01[[]dermatology-offline-multiturn-mcq[]]",
        "c.yaml::t-01[[]dermatology-offline-examonly-mcq[]]",
        # t-02 has no choices: no 4-choice MCQ, but free response and the pooled MCQ
        "c.yaml::t-02[[]dermatology-offline-vignette-frq[]]",
        "*15 tests collected*"])


def clinician(req: FakeRequest) -> FakeReply:
    if req.role == "summarizer" or "Rewrite it as a short clinical vignette" in req.last_user:
        return FakeReply("The patient reports an itchy rash on the elbows.")
    if "talking with a doctor" in req.system:  # the patient-AI
        return FakeReply("I have an itchy rash on my elbows.")
    if "Which of the following" in req.last_user:
        return FakeReply("**Final Diagnosis:** A) Condition1 disease")
    if "single most likely diagnosis?" in req.last_user:
        return FakeReply("Final Diagnosis: Condition1 disease (C1D)")
    turn = sum(m["role"] == "assistant" for m in req.messages)
    return FakeReply("Where is the rash?" if turn == 0 else "Final Diagnosis: Condition1 disease")


def test_one_conversation_serves_every_experiment(pytester: pytest.Pytester,
                                                  fake_server: Start, xdist: list[str]) -> None:
    """Under -n 2 also the regression test of a case split over two workers."""
    write_yaml_cases(pytester.path / "c.yaml", [craft_case(1)])
    server = fake_server(clinician)
    # No cache: the conversation is shared, not replayed from the cache (under xdist a
    # second worker playing it again could find the first's replies there).
    result = pytester.runpytest("c.yaml", "--agent-protocol=craftmd",
                                "--agent-summarizer=openai/fake-summarizer", "--agent-cache=off",
                                *llm_args(server, ("doctor", "patient")), *xdist)
    result.assert_outcomes(passed=8)  # 4 experiments x (MCQ, FRQ)
    system = [r.system for r in server.requests]
    # The conversation: opening + 1 answer from the patient, 2 doctor turns; once, not 8 times.
    assert sum("talking with a doctor" in s for s in system) == 2
    assert sum(r.doctor_turn in (0, 1) and "physician specialising in Dermatology" in r.system
               and "Which of" not in r.last_user and "single most" not in r.last_user
               for r in server.requests) == 2
    assert sum("Rewrite it as" in r.last_user for r in server.requests) == 1  # one summary
    finals = [r.last_user for r in server.requests if "Final Diagnosis: <" in r.last_user]
    assert len(finals) == 8
    assert sum(f.startswith("Case vignette:") for f in finals) == 2
    assert sum(f.startswith("Your conversation with the patient:") for f in finals) == 2
    assert sum(f.startswith("The patient says:\nI have an itchy") for f in finals) == 2
    assert sum(f.startswith("Summary of the patient's history:") for f in finals) == 2
    records = results(pytester.path)
    assert {(r["experiment"], r["answer_format"], r["protocol"]) for r in records.values()} == {
        (e, a, "craftmd") for e in ("vignette", "multiturn", "singleturn", "summarized")
        for a in ("mcq", "frq")}


class _Node:
    """A stand-in for an xdist worker: records what it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_load_scheduling_keeps_each_case_on_one_worker() -> None:
    """xdist's load scheduling split a case's experiments over both workers, and each played
    the case's conversation (the -n 2 run of the test above made 4 patient calls, not 2)."""
    from pytest_agentclinic.plugin.xdist_hooks import _encounter_scheduling

    options: dict[str, object] = {"tx": ["2*popen"], "maxschedchunk": None}
    config = SimpleNamespace(getvalue=options.get, getoption=options.get)
    # Five cases' items, the case varying fastest: no two items of a case side by side.
    collection = [f"c.yaml::t-{case:02d}[dermatology-offline-{experiment}-{answer}]"
                  for experiment in ("vignette", "multiturn") for answer in ("mcq", "frq")
                  for case in range(1, 6)]
    scheduler = _encounter_scheduling(config, None, 2, True)  # type: ignore[arg-type]
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    while any(scheduler.node2pending[node] for node in nodes):  # each worker runs its queue
        for node in nodes:
            if scheduler.node2pending[node]:
                scheduler.mark_test_complete(node, scheduler.node2pending[node][0])
    assert sorted(i for node in nodes for i in node.sent) == list(range(len(collection)))
    owner: dict[str, int] = {}
    for worker, node in enumerate(nodes):
        for index in node.sent:
            assert owner.setdefault(collection[index].split("[")[0], worker) == worker
    assert sorted(owner) == [f"c.yaml::t-{case:02d}" for case in range(1, 6)]
    assert all(node.sent for node in nodes)  # both workers had cases to play


def test_turn_cap_ends_a_runaway_dialogue_as_no_diagnosis(pytester: pytest.Pytester,
                                                          fake_server: Start,
                                                          xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [craft_case(1)])
    server = fake_server(lambda req: FakeReply("And what else?") if "physician" in req.system
                         and "Final Diagnosis: <" not in req.last_user
                         else FakeReply("Final Diagnosis: A) Condition1 disease")
                         if "physician" in req.system else FakeReply("Nothing else."))
    result = pytester.runpytest("c.yaml", "--agent-protocol=craftmd", "--agent-turns=3",
                                "--agent-experiment=multiturn", "--agent-experiment=singleturn",
                                "--agent-answer=mcq", *llm_args(server, ("doctor",)), *xdist)
    result.assert_outcomes(passed=1, failed=1)
    outcomes = {r["experiment"]: r["outcome"] for r in results(pytester.path).values()}
    assert outcomes == {"multiturn": "no_diagnosis", "singleturn": "correct"}


def test_offline_run_records_a_dialogue_without_the_diagnosis(craft: pytest.Pytester,
                                                              xdist: list[str]) -> None:
    craft.runpytest("c.yaml", "--agent-protocol=craftmd", "--agent-experiment=multiturn",
                    "--agent-answer=frq", "--agent-run-name=r", *xdist)
    transcript = json.loads(next((craft.path / "reports/r/transcripts").glob("c__t-01*"))
                            .read_text())
    said = [u["text"] for u in transcript["utterances"] if u["role"] == "patient"]
    assert said[0].startswith("I came in because of an itchy rash on my elbows")
    assert not any("silvery plaques" in s for s in said)  # examination findings stay unsaid
    assert all("condition1" not in s.lower() for s in said)


OPTIONS = ["Lymphogranuloma venereum", "Herpes", "Chancroid", "Syphilis"]


@pytest.mark.parametrize(("reply", "chosen"), [
    ("Final Diagnosis: B) Herpes", "Herpes"), ("**Final Diagnosis:** (C)", "Chancroid"),
    ("I think it's chancroid.\nFinal Diagnosis: Chancroid", "Chancroid"),
    ("Final Diagnosis: I cannot choose without more information.", None)])
def test_mcq_mapping(reply: str, chosen: str | None) -> None:
    grade = grade_choice(reply, OPTIONS, "Chancroid")
    assert grade.extracted == chosen and grade.verdict.correct is (chosen == "Chancroid")


def frq_case(diagnosis: str, synonyms: list[str]) -> Case:
    return Case.model_validate({**make_case(1, diagnosis=diagnosis, synonyms=synonyms,
                                            choices=[]), "dataset": "t"})


def test_frq_grades_the_final_diagnosis_with_synonyms() -> None:
    grade = asyncio.run(grade_answer("**Final Diagnosis:** Enteric fever",
                                     frq_case("Typhoid fever", ["Enteric fever"]),
                                     OfflineModerator(), 0))
    assert grade.verdict.correct and (grade.extracted or "").lower() == "enteric fever"


class Grader:
    """A moderator from a conftest: records what it is asked."""

    model = "openai/grader"
    prompt_version = "grader-1"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        self.asked.append(diagnosis)
        return Judgement(Verdict(correct=True, decided_by=self.model, reason="same"))


def test_unsure_free_response_goes_to_the_moderator() -> None:
    grader = Grader()
    grade = asyncio.run(grade_answer("Final Diagnosis: bacterial meningitis",
                                     frq_case("Tuberculous meningitis", []), grader, 0))
    assert grader.asked == ["bacterial meningitis"]
    assert grade.verdict.decided_by == "openai/grader"
