"""Bounded replies: a hostile reply or error body costs its own item and no other.

A reply past ``--agent-max-reply-bytes`` is an error for its item (never cached, never
graded); a provider's error message is kept to its first line on both transports; grading
reads a bounded part of an answer; the watchdog names the code that held the loop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest
from helpers import each_mode_once, llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.llm import client
from pytest_agentclinic.llm.errors import RequestError, TransientError
from pytest_agentclinic.llm.openai_http import OpenAIHTTP
from pytest_agentclinic.plugin.blocked import blocked_in
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
#: Over the default cap (4 MiB), small enough for a quick test.
HUGE = "DIAGNOSIS READY: Condition3 disease. " + "x" * 6_000_000


def _one_huge(req: FakeRequest) -> FakeReply:
    case = next(i for i in range(1, 7) if f"complaint {i}." in req.system)
    if case == 3:
        return FakeReply(HUGE)
    return FakeReply(f"DIAGNOSIS READY: Condition{case} disease")


# The transport does not change with the worker mode: litellm runs once, in this process
# (under -n 2 each worker imported it, ~5 s of CPU), the aiohttp path under -n 2 and -n 0.
@pytest.mark.parametrize(("xdist", "transport"), each_mode_once("auto", "litellm"),
                         indirect=["xdist"])
def test_a_huge_reply_is_an_error_for_its_item_only_and_never_cached(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str], transport: str,
        warm_litellm: None) -> None:
    server = fake_server(_one_huge)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 7)])
    result = pytester.runpytest("c.yaml", "--agent-run-name=r", "--agent-retries=0",
                                *llm_args(server, ("doctor",), transport=transport), *xdist)
    records = results(pytester.path)
    outcomes = sorted(r["outcome"] for r in records.values())
    assert outcomes == ["correct"] * 5 + ["error"]
    error = next(r["error"] for r in records.values() if r["outcome"] == "error")
    assert "--agent-max-reply-bytes" in error and len(error) < 400
    assert len(result.stdout.str()) < 100_000
    cached = sum(p.stat().st_size for p in (pytester.path / ".agentclinic_cache").rglob("*")
                 if p.is_file())
    assert cached < 1_000_000  # the reply was not stored
    run = pytester.path / "reports" / "r"
    assert max(p.stat().st_size for p in run.rglob("*") if p.is_file()) < 1_000_000


def test_the_cap_is_an_option(pytester: pytest.Pytester, fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease " + "y" * 500))
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.runpytest("c.yaml", "--agent-max-reply-bytes=300", "--agent-retries=0",
                       *llm_args(server, ("doctor",)))
    record = next(iter(results(pytester.path).values()))
    assert record["outcome"] == "error" and "over --agent-max-reply-bytes (300)" in record["error"]
    bad = pytester.runpytest("c.yaml", "--agent-max-reply-bytes=0")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--agent-max-reply-bytes: expected a whole number >= 1*"])


def _call(server: FakeOpenAIServer, transport: str, max_bytes: int = 4_194_304) -> object:
    messages = [{"role": "user", "content": "hi"}]

    async def fast() -> object:
        http = OpenAIHTTP(2)
        try:
            return await http.acomplete("openai/m", messages, api_base=server.url, timeout=30,
                                        params={}, max_bytes=max_bytes)
        finally:
            await http.aclose()

    if transport == "auto":
        return asyncio.run(fast())
    return asyncio.run(client.acomplete("openai/m", messages, api_base=server.url, timeout=30,
                                        params={}, max_bytes=max_bytes))


@pytest.mark.parametrize("transport", ["auto", "litellm"])
@pytest.mark.parametrize(("status", "kind"), [(400, RequestError), (500, TransientError)])
def test_a_huge_error_message_is_kept_to_its_first_line(
        fake_server: Start, transport: str, status: int, kind: type[Exception],
        warm_litellm: None) -> None:
    message = "upstream exploded " + "z" * 3_000_000 + "\nsecond line"
    server = fake_server(lambda req: FakeReply(message, status=status))
    with pytest.raises(kind) as caught:
        _call(server, transport)
    text = str(caught.value)
    assert "upstream exploded" in text and len(text) < 600 and "second line" not in text
    assert '{"error"' not in text  # the message, even from a body read only in part


def test_a_reply_past_the_cap_is_refused_without_a_length_too(fake_server: Start) -> None:
    server = fake_server(lambda req: FakeReply("w" * 5000))
    with pytest.raises(RequestError, match="over --agent-max-reply-bytes"):
        _call(server, "auto", max_bytes=1000)


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(1000))


def test_the_watchdog_names_the_code_that_holds_the_loop() -> None:
    from pytest_agentclinic.grading.reading.extract import extract

    stop = threading.Event()
    agent = threading.Thread(target=_spin, args=(stop,))
    agent.start()
    try:
        time.sleep(0.05)
        said = blocked_in(agent)
    finally:
        stop.set()
        agent.join()
    assert "_spin (tests/test_llm_caller_bounded_replies.py:" in said and "custom agent" in said

    # ~0.7 s of CPU in extract (2 MB): a thread cannot finish it within the 0.05 s before
    # the look, whatever the load (10 MB took 3 s of the suite's CPU to the same effect).
    text = "The patient has a rash and fever, maybe psoriasis. " * 40_000
    harness = threading.Thread(target=extract, args=(text,))
    harness.start()
    time.sleep(0.05)
    said = blocked_in(harness)
    harness.join()
    assert said.startswith("in the harness's own ") and "pytest_agentclinic/" in said, said


def test_grading_a_long_answer_reads_a_bounded_part(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentclinic.core.case import Case
    from pytest_agentclinic.grading.judging import pipeline, rules
    from pytest_agentclinic.grading.judging.moderator import OfflineModerator

    read: list[int] = []
    real = rules.extract  # type: ignore[attr-defined]  # the one entry's first stage

    def counting(text: str, **kwargs: bool) -> object:
        read.append(len(text))
        return real(text, **kwargs)

    monkeypatch.setattr(rules, "extract", counting)
    case = Case(**{**make_case(1), "dataset": "t"})
    answer = "Condition1 disease. " + "The rash itches at night. " * 400_000  # ~10 MB
    grade = asyncio.run(pipeline.grade_answer(answer, case, OfflineModerator(), 0))
    assert grade.outcome == "correct"
    assert read and max(read) <= 100_000


def test_litellm_does_not_scrub_error_bodies_on_the_loop(warm_litellm: None) -> None:
    # litellm's own scrub of an error text is one large regex in Python (0.36 s of CPU per MB
    # per pass, on the event loop): our redaction of the first line replaces it.
    import litellm._logging

    client._load()
    assert not litellm._logging._ENABLE_SECRET_REDACTION
