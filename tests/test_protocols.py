"""The protocol interface: a third protocol from a conftest runs, reports, compares and gates
like the built-in ones; every role's agent is checked; an item that could not be played keeps
its protocol's conditions."""

from __future__ import annotations

import json
import re

import pytest
from helpers import each_mode_once, make_case, results, write_yaml_cases

from pytest_agentclinic.cli import main

# A toy third protocol: single-turn vignette question answering, in a conftest.
VIGNETTE_QA = '''
from pytest_agentclinic import api


class Reader:
    """The protocol's offline doctor: names the case's first listed choice."""
    model = "offline"
    prompt_version = "reader-1"

    async def respond(self, view):
        return api.Reply("Final diagnosis: " + view.case.choices[0])


class VignetteQA(api.Protocol):
    name = "vignette-qa"
    options = (api.Option("qa_prompt", "the question asked after the vignette",
                          "What is the diagnosis?"),)
    roles = (api.RoleSpec("doctor", api.Agent, None, "answers the vignette at once"),)

    def expand(self, cases, run):
        for case in cases:
            for doctor in run.doctors:
                for sample in range(run.repeat):
                    yield api.ItemSpec(case, f"{case.specialty_slug}-{doctor}-r{sample}",
                                       {"doctor": doctor}, sample, turn_budget=1)

    async def play(self, item, ctx):
        t = api.Transcript(**self.header(item).header())
        doctor = self.agent(ctx, "doctor", item.doctor, item.case, "none", Reader)
        question = f"{item.case.objective} {ctx.options['qa_prompt']}"
        with api.settled(t):
            view = api.TurnView(item.case, (), question, 1, 1, item.sample)
            reply = await doctor.respond(view)
            t.utterances.append(api.Utterance(turn=1, role="doctor", kind="final_answer",
                                              text=reply.text, model=doctor.model))
            grade = await api.grade_free_response(reply.text, item.case)
            t.diagnosis, t.verdict, t.outcome = grade.extracted, grade.verdict, grade.outcome
        return t

    def tables(self, records, resamples):
        rows = [[r.case_id, r.outcome] for r in records]
        return [api.Table("vignette QA: every answer", ["case", "outcome"], rows)]


api.register_protocol(VignetteQA)


def pytest_addoption(parser):
    api.add_protocol_options(parser, VignetteQA)
'''


@pytest.fixture
def qa(pytester: pytest.Pytester) -> pytest.Pytester:
    # Case 4 lists a wrong answer first: the offline reader gets 3 of 4 right.
    cases = [make_case(i) for i in range(1, 4)]
    cases.append(make_case(4, choices=["Other thing", "Condition4 disease"]))
    write_yaml_cases(pytester.path / "c.yaml", cases)
    pytester.makeconftest(VIGNETTE_QA)
    return pytester


def test_the_toy_protocol_is_short() -> None:
    assert len(VIGNETTE_QA.strip().splitlines()) < 80


def test_a_conftest_protocol_runs_reports_compares_and_gates(
        qa: pytest.Pytester, xdist: list[str]) -> None:
    run = qa.runpytest("c.yaml", "--agent-protocol=vignette-qa", "-p", "no:cacheprovider",
                       "--agent-run-name=a", "--agent-min-accuracy=0.7", *xdist)
    run.assert_outcomes(passed=3, xfailed=1)  # under a gate a misdiagnosis is a measurement
    assert run.ret == 0  # the gate decides: 0.75 >= 0.7
    run.stdout.fnmatch_lines(["*vignette QA: every answer*", "*accuracy 0.750 (3/4,*pass*"])
    records = results(qa.path).values()
    assert {r["protocol"] for r in records} == {"vignette-qa"}
    summary = json.loads((qa.path / "reports" / "a" / "summary.json").read_text())
    assert summary["protocol"] == "vignette-qa"
    assert summary["qa_prompt"] == "What is the diagnosis?"
    assert "vignette QA: every answer" in [t["title"] for t in summary["tables"]]

    failing = qa.runpytest("c.yaml", "--agent-protocol=vignette-qa", "-p", "no:cacheprovider",
                           "--agent-run-name=b", "--agent-min-accuracy=0.8", *xdist)
    assert failing.ret == 1
    assert main(["report", str(qa.path / "reports" / "b"), "--resamples=100"]) == 0
    assert (qa.path / "reports" / "b" / "report.html").is_file()
    assert main(["compare", str(qa.path / "reports" / "a"), str(qa.path / "reports" / "b"),
                 "--resamples=100"]) == 0


def test_the_protocol_option_is_resolved_and_checked(qa: pytest.Pytester, xdist: list[str]) -> None:
    run = qa.runpytest("c.yaml", "--agent-protocol=vignette-qa", "-p", "no:cacheprovider",
                       "--agent-qa-prompt=Name it.", "--agent-run-name=q", *xdist)
    run.assert_outcomes(passed=3, failed=1)
    transcript = next((qa.path / "reports" / "q" / "transcripts").glob("*t-01*"))
    assert "Name it." not in transcript.read_text()  # the question is not an utterance
    bad = qa.runpytest("c.yaml", "--agent-protocol=nope", "-p", "no:cacheprovider", *xdist)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    # (installed protocols, e.g. tests/example_triage, come between)
    bad.stderr.fnmatch_lines(["*--agent-protocol: 'nope' is not one of: agentclinic, craftmd, "
                              "*vignette-qa*"])


#: An item's error block in pytest's report: its case id and its text.
ERROR_BLOCK = r"_ ERROR at setup of c\.yaml::(t-\d+)\[.*?\] _+\n(.*?)(?=\n_+ |\n=+ )"
#: The roles each protocol asks a conftest's agents for, and the interface each must implement.
ROLES = {"agentclinic": {"doctor": "Agent", "patient": "Agent", "measurement": "Agent",
                         "moderator": "Moderator"},
         "craftmd": {"doctor": "Clinician", "patient": "Agent", "summarizer": "Summarizer",
                     "moderator": "Moderator"}}


# Each protocol runs in one worker mode, each mode with one protocol (the role checks do
# not change with the worker mode).
@pytest.mark.parametrize(("xdist", "protocol"), each_mode_once(*ROLES), indirect=["xdist"])
def test_every_role_of_every_protocol_is_checked(pytester: pytest.Pytester, protocol: str,
                                                 xdist: list[str]) -> None:
    # One case per role: each case's items get a non-agent for that role only.
    roles = ROLES[protocol]
    bad = {f"t-{i:02d}": role for i, role in enumerate(roles, 1)}
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i, vignette="A rash for a week.")
                                                for i in range(1, len(roles) + 1)])
    pytester.makeconftest(f"""
        def pytest_agentclinic_make_agent(role, model, case, bias, config):
            return "not an agent" if {bad!r}[case.id] == role else None
    """)
    # The CRAFT-MD summarizer and moderator are asked for only where they are used.
    extra = ["--agent-experiment=summarized", "--agent-answer=frq"] if protocol == "craftmd" else []
    run = pytester.runpytest("c.yaml", f"--agent-protocol={protocol}", "-p", "no:cacheprovider",
                             *extra, *xdist)
    run.assert_outcomes(errors=len(roles))
    # Each item's error block (in finishing order under xdist) names its own case's role.
    blocks = dict(re.findall(ERROR_BLOCK, run.stdout.str(), re.S))
    assert sorted(blocks) == sorted(bad)
    for case_id, role in bad.items():
        assert (f"TypeError: the {role} agent 'not an agent' does not implement {roles[role]} "
                f"(protocol {protocol})") in blocks[case_id]


def test_an_item_that_could_not_be_played_keeps_its_conditions(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """It used to lose its protocol, experiment and answer mode: left out of the CRAFT-MD
    table and impossible to pair in a comparison."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1, vignette="A rash for a week.")])
    pytester.makeconftest("""
        class Broken:
            model = "broken"
            prompt_version = "1"
            async def respond(self, view):
                raise RuntimeError("a bug in the user's agent")
            async def final(self, case, context, options, sample):
                raise RuntimeError("a bug in the user's agent")

        def pytest_agentclinic_make_agent(role, model, case, bias, config):
            return Broken() if role == "doctor" else None
    """)
    run = pytester.runpytest("c.yaml", "--agent-protocol=craftmd", "-p", "no:cacheprovider",
                             "--agent-experiment=vignette", "--agent-answer=frq", *xdist)
    run.assert_outcomes(errors=1)
    (record,) = results(pytester.path).values()
    assert record["outcome"] == "error"
    assert "RuntimeError: a bug in the user's agent" in record["error"]
    assert (record["protocol"], record["experiment"], record["answer_format"]) == (
        "craftmd", "vignette", "frq")
    run.stdout.fnmatch_lines(["*CRAFT-MD: accuracy by experiment and answer mode*"])


def test_craftmd_releases_a_conversation_after_its_last_item() -> None:
    """Every experiment of a case shares one conversation; it is not kept for the session."""
    import asyncio

    from pytest_agentclinic.api import PlayContext, RunOptions, get_protocol
    from pytest_agentclinic.core.case import Case
    from pytest_agentclinic.llm.caller import CallSettings, ModelCaller

    case = Case.model_validate({**make_case(1, vignette="A rash for a week."), "dataset": "t"})
    from pytest_agentclinic.protocols.craftmd import CraftMD

    protocol = get_protocol("craftmd")()
    assert isinstance(protocol, CraftMD)
    run = RunOptions(options={"experiment": ("multiturn", "singleturn"), "answer": ("frq",),
                              "many_choices": 10, "summarizer": "offline",
                              "moderator": "offline"})
    first, second = protocol.expand([case], run)
    ctx = PlayContext(ModelCaller(CallSettings(), None), lambda *a: None)  # type: ignore[arg-type]

    async def play() -> list[str | None]:
        one = await protocol.play(first, ctx)
        kept = len(protocol._tasks)
        two = await protocol.play(second, ctx)
        assert kept == 1 and protocol._tasks == {}
        return [one.outcome, two.outcome]

    assert asyncio.run(play()) == ["correct", "correct"]
