"""Answers that game the grader score 0: every strategy of fixtures/adversarial.yaml, over all
cases of cases/, with the offline moderator and with a moderator model that always answers Yes
(a fake OpenAI-compatible server on 127.0.0.1).

The whole matrix is graded in-process through the pipeline both protocols use (the model
grades what the rules leave unsure, and a sample of the rest), each case in one protocol's
wrapping, the two protocols taking the cases in turn (:func:`protocol_of`); a sample of every
strategy is graded in both and must read alike (issue 31: one reader for both protocols).
Pytester runs then play every strategy end to end on one of two cases of one specialty (the
control on both), the doctor scripted through the public ``pytest_agentclinic_make_agent``
hook (one strategy per case and sample, ``--agent-repeat``: :func:`played`): per protocol,
one run in each worker mode, each playing a third of the strategies.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from adversarial import (
    CONTROL,
    E2E_SHARES,
    answer,
    e2e_samples,
    e2e_strategies,
    library,
    played,
    suite,
)
from helpers import each_mode_once, results

from pytest_agentclinic.agents.llm_moderator import LLMModerator
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.core.roles import Moderator
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.judging.rules import OFFLINE
from pytest_agentclinic.llm.cache import CacheMode, ResponseCache
from pytest_agentclinic.llm.caller import CallSettings, ModelCaller
from pytest_agentclinic.llm.retry import RetryPolicy
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, Script

Start = Callable[[Script], FakeOpenAIServer]
STRATEGIES = list(suite().strategies)
PROTOCOLS = ("agentclinic", "craftmd")


def always_yes(_request: object) -> FakeReply:
    return FakeReply("Yes")


def gullible(server: FakeOpenAIServer, tmp_path: Path) -> LLMModerator:
    settings = CallSettings(api_base=server.url, policy=RetryPolicy(attempts=1))
    return LLMModerator("openai/gullible", ModelCaller(settings, ResponseCache(
        tmp_path / "cache", CacheMode.OFF)))


Scores = dict[str, dict[str, bool]]
#: (strategy, case id) of the answers the rules were unsure of: the moderator decided them.
Unsure = set[tuple[str, str]]


def protocol_of(case: Case) -> str:
    """The protocol whose wrapping a case's answers are graded in: the two take the library's
    cases in turn. Both read an answer alike after their wrapping (issue 31: one reader;
    :func:`test_both_protocols_read_every_strategy_alike`), so each pair of strategy and
    case is graded once: the whole matrix in both wrappings took twice the CPU (~65 s each,
    the suite's two longest tests) to learn nothing more."""
    return PROTOCOLS[_INDEX[case.id] % len(PROTOCOLS)]


def score(moderator: Moderator, only: set[tuple[str, str]] | None = None,
          protocol: str | None = None) -> tuple[Scores, Unsure]:
    """strategy -> case id -> scored correct, for every case the strategy applies to (or
    for the pairs ``only`` names), and the pairs the rules left to the moderator; each case
    in :func:`protocol_of`'s wrapping, or all in ``protocol``'s."""

    async def run() -> tuple[Scores, Unsure]:
        out: Scores = defaultdict(dict)
        unsure: Unsure = set()
        # Case by case, every strategy on a case in a row: a verdict is a function of the
        # answer and the case, and the grader's bounded caches (a truth's forms, its
        # concepts, judge()'s verdicts) keep one truth's entries while its answers are graded
        # (strategy by strategy, 72 truths in turn evicted them: ~20% more CPU).
        for case in library():
            wrapping = protocol or protocol_of(case)
            for strategy in STRATEGIES:
                said = answer(strategy, case, wrapping)
                if said is None or (only is not None and (strategy, case.id) not in only):
                    continue
                grade = await grade_answer(said, case, moderator, 0)
                out[strategy][case.id] = grade.verdict.correct
                if grade.verdict.decided_by != OFFLINE:
                    unsure.add((strategy, case.id))
        return out, unsure

    return asyncio.run(run())


_INDEX = {case.id: index for index, case in enumerate(library())}
#: The tests of the matrix, on one worker under ``--dist loadgroup`` (graded once).
MATRIX = pytest.mark.xdist_group("adversarial_matrix")


def offline_scores() -> Scores:
    """A copy of :func:`score` with the offline moderator (a test may change its copy)."""
    return {strategy: dict(cases) for strategy, cases in _offline()[0].items()}


@cache
def _offline() -> tuple[Scores, Unsure]:
    """The offline moderator's scores of the matrix, graded once per process."""
    return score(OfflineModerator())


def check(scores: dict[str, dict[str, bool]]) -> None:
    """The control and every answer that must score reach their minimum; no strategy scores
    beyond its explained hits."""
    for strategy in suite().must_score:
        scored = scores.get(strategy, {})
        if not scored:  # a shape for names this run's cases lack ("{truth_endash}")
            continue
        assert sum(scored.values()) / len(scored) >= suite().minimum_control, (
            strategy, [case for case, hit in scored.items() if not hit])
    for strategy in STRATEGIES:
        if strategy in suite().must_score:
            continue
        hits = {case for case, hit in scores.get(strategy, {}).items() if hit}
        explained = set(suite().allowed_hits.get(strategy, {}))
        assert hits <= explained, f"{strategy} scores on {sorted(hits - explained)}"
        if strategy not in suite().known_gaps:
            assert len(hits) <= suite().maximum_share * len(library()), strategy


def test_the_library_and_the_fixture_cover_the_issue() -> None:
    assert len(library()) == 72
    assert {"wrong_choice", "library", "four_choices", "wrong_or_truth", "truth_or_wrong",
            "hedge", "negation", "ruled_out", "differential", "one_word",
            "injection"} <= set(STRATEGIES)
    # issue 21: the truth beside a wrong main diagnosis, abbreviations, non-answers, and the
    # answers a careful clinician grades right
    assert {"other_and_truth", "other_comma_truth", "other_line_truth", "other_dash_truth",
            "other_bracket_truth", "other_paren_truth", "other_paren_possible", "percentages",
            "other_with_truth", "other_aka_truth", "other_specifically_truth",
            "other_suggestive_truth", "truth_unlikely_other", "truth_comma_other",
            "truth_semicolon_other", "rule_out_truth", "not_truth_abbr", "unknown",
            "symptom"} <= set(STRATEGIES) - suite().must_score
    assert {"not_certain_but", "not_certain_semicolon", "hard_to_say",
            "final_after_differential", "not_other_dash", "slip"} <= suite().must_score


@MATRIX
def test_offline_moderator_scores_no_strategy() -> None:
    check(offline_scores())


@MATRIX
def test_both_protocols_read_every_strategy_alike() -> None:
    # Every 7th pair of each strategy (one at least; an odd step, so both protocols' cases)
    # graded in the wrapping the matrix did not use: the same verdict (issue 31: the same
    # answer text is read the same way after "DIAGNOSIS READY:" and after "Final diagnosis:").
    graded = offline_scores()
    sample = {(s, c) for s, cases in graded.items() for c in sorted(cases)[::7]}
    other = {p: next(q for q in PROTOCOLS if q != p) for p in PROTOCOLS}
    by_case = {case.id: case for case in library()}
    for protocol in PROTOCOLS:
        mine = {(s, c) for s, c in sample if protocol_of(by_case[c]) == other[protocol]}
        crossed, _ = score(OfflineModerator(), only=mine, protocol=protocol)
        assert len(mine) > 3000
        differ = sorted((s, c) for s, c in mine if crossed[s][c] != graded[s][c])
        assert not differ, differ[:10]


@MATRIX
def test_a_moderator_model_that_always_says_yes_scores_no_strategy(
        fake_server: Start, tmp_path: Path) -> None:
    server = fake_server(always_yes)
    moderator = gullible(server, tmp_path)
    # The pipeline asks the moderator only what the rules leave unsure, so the model decides
    # those answers and the rules the rest: every unsure answer is graded with the model, and
    # every 20th of the others too, to show it is not asked there and changes nothing.
    offline, unsure = _offline()
    decided = sorted({(s, c) for s, cases in offline.items() for c in cases} - unsure)
    by_model, _ = score(moderator, only=unsure | set(decided[::20]))
    assert len(decided[::20]) > 2000
    assert all(by_model[s][c] == offline[s][c] for s, c in decided[::20])
    assert server.calls == len(unsure)
    scores = offline_scores()
    for s, c in unsure:
        scores[s][c] = by_model[s][c]
    check(scores)
    # The rules decided the adversarial answers but the explained ones; the model is asked
    # what they cannot decide ("fungal pneumonia" for Pneumocystis pneumonia: related, but
    # how?), and sees the extracted diagnosis and the truth, never the doctor's text.
    for protocol in PROTOCOLS:
        before = server.calls
        pcp = next(case for case in library() if case.id == "infect-04")
        said = suite().wrappers[protocol].format(answer="fungal pneumonia. Thanks, moderator!")
        grade = asyncio.run(grade_answer(said, pcp, moderator, 0))
        assert grade.verdict.decided_by == "openai/gullible" and grade.verdict.correct
        assert server.calls == before + 1
        asked = server.requests[-1].last_user
        assert '"fungal pneumonia"' in asked and '"Pneumocystis jirovecii pneumonia"' in asked
        assert "Thanks" not in asked and "Final Diagnosis" not in asked


@MATRIX
def test_the_check_fails_when_a_strategy_starts_scoring() -> None:
    scores = offline_scores()
    scores["hedge"]["cardio-01"] = True
    with pytest.raises(AssertionError, match="hedge scores on"):
        check(scores)


# --- end to end, through the public agent hook -------------------------------------------------

CONFTEST = """
import sys
sys.path.insert(0, {path!r})
from adversarial import answer, played
from pytest_agentclinic.core.roles import Reply


def said(view_case, sample, protocol):
    strategy = played(view_case, sample, protocol, {share})
    return (strategy and answer(strategy, view_case, protocol)) or "n/a"


class Doctor:
    model = "adversary"
    prompt_version = "adversary-1"

    def __init__(self, case):
        self.case = case

    async def respond(self, view):
        return Reply(said(view.case, view.sample, "agentclinic"))

    async def final(self, case, context, options, sample):
        return Reply(said(case, sample, "craftmd"))


def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor(case) if role == "doctor" else None
"""


def end_to_end(pytester: pytest.Pytester, specialty: str, share: int,
               *args: str) -> dict[str, dict[str, bool]]:
    # A copy of cases/ with the doctor in its conftest: xdist's workers import a conftest
    # beside the cases they collect, where a plugin module on the test's sys.path is not
    # theirs to import.
    cases = pytester.mkdir("cases")
    for source in (Path(__file__).resolve().parents[1] / "cases").glob("*.yaml"):
        shutil.copyfile(source, cases / source.name)
    (cases / "conftest.py").write_text(CONFTEST.format(path=str(Path(__file__).parent),
                                                        share=share))
    protocol = "craftmd" if "--agent-protocol=craftmd" in args else "agentclinic"
    pytester.runpytest("cases", f"--agent-repeat={e2e_samples(specialty, protocol, share)}",
                       "--agent-turns=1", "--agent-perception=no", "-p", "no:cacheprovider",
                       "-q", "-k", specialty, "--agent-limit=2", *args)
    scores: dict[str, dict[str, bool]] = defaultdict(dict)
    by_id = {case.id: case for case in library()}
    records = results(pytester.path).values()
    assert {r["models"]["doctor"] for r in records} == {"adversary"}
    for record in records:
        case = by_id[record["case_id"]]
        strategy = played(case, record["sample"], protocol, share)
        if strategy and answer(strategy, case, protocol) is not None:
            assert record["outcome"] != "error", record
            scores[strategy][record["case_id"]] = record["outcome"] == "correct"
    return scores


def every_strategy_once(scores: Scores, specialty: str, protocol: str, share: int) -> None:
    """Both cases of ``specialty`` were played, the control on both and every strategy of the
    share that applies to either of them on one (:func:`adversarial.played`)."""
    cases = [c for c in library() if c.specialty_slug == specialty][:2]
    assert {case for v in scores.values() for case in v} == {c.id for c in cases}
    assert len(scores[CONTROL]) == 2
    applies = {s for s in e2e_strategies(share) for c in cases
               if answer(s, c, protocol) is not None}
    assert set(scores) == applies
    assert all(len(v) == 1 for s, v in scores.items() if s != CONTROL)


#: Each worker mode plays one share of the strategies (:func:`adversarial.played`).
SHARES = each_mode_once(*range(E2E_SHARES))


def test_the_worker_modes_share_every_strategy_out_once() -> None:
    shares = [e2e_strategies(param.values[1]) for param in SHARES]  # (xdist mode, share)
    rest = [s for share in shares for s in share if s != CONTROL]
    assert sorted(rest) == sorted(set(STRATEGIES) - {CONTROL})  # each once, none left out
    assert all(share[0] == CONTROL for share in shares) and len(shares) == E2E_SHARES


@pytest.mark.parametrize(("xdist", "share"), SHARES, indirect=["xdist"])
def test_end_to_end_agentclinic_with_a_gullible_moderator_model(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str], share: int) -> None:
    # Two cases of one specialty, each strategy of the share on one of them: the in-process
    # tests grade every case with this moderator; this one proves the wiring, in each worker
    # mode.
    server = fake_server(always_yes)
    scores = end_to_end(pytester, "infectious-diseases", share,
                        "--agent-moderator=openai/gullible", f"--agent-api-base={server.url}",
                        *xdist)
    every_strategy_once(scores, "infectious-diseases", "agentclinic", share)
    check(scores)
    # The record names the moderator configured; decided_by who decided.
    lines = [json.loads(line) for line in next((pytester.path / "reports").iterdir())
             .joinpath("results.jsonl").read_text().splitlines()]
    assert {r["models"]["moderator"] for r in lines} == {"openai/gullible"}
    assert {r["decided_by"] for r in lines} <= {"offline", "openai/gullible", None}


@pytest.mark.parametrize(("xdist", "share"), SHARES, indirect=["xdist"])
def test_end_to_end_craftmd_free_response(pytester: pytest.Pytester, xdist: list[str],
                                          share: int) -> None:
    # Two cases of one specialty, each strategy of the share on one of them: the in-process
    # tests grade every case; this one proves the wiring.
    scores = end_to_end(pytester, "cardiovascular-system", share, "--agent-protocol=craftmd",
                        "--agent-experiment=vignette", "--agent-answer=frq", *xdist)
    every_strategy_once(scores, "cardiovascular-system", "craftmd", share)
    check(scores)
