"""The transport: rate limits, the shared 429 pause, adaptive concurrency, deployments through
litellm's Router, and the connection pool's size."""

from __future__ import annotations

import asyncio
import bisect
import heapq
import json
import multiprocessing
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.llm.deployments import ModelsFileError, load
from pytest_agentclinic.llm.limiter import (
    CATCH_UP_S,
    RPM_BURST_S,
    RPM_MARGIN,
    Budget,
    ModelGate,
    Schedule,
)
from pytest_agentclinic.llm.rate_headers import wait_from_headers
from pytest_agentclinic.testing.fake_server import (
    FakeOpenAIServer,
    FakeReply,
    FakeRequest,
    RateLimit,
    Script,
)

Start = Callable[[Script], FakeOpenAIServer]


def diagnose(req: FakeRequest) -> FakeReply:
    """A doctor that asks once, then concludes."""
    if req.doctor_turn == 0:
        return FakeReply("Where does it hurt?")
    return FakeReply("DIAGNOSIS READY: Condition1 disease")


# ------------------------------------------------------------------ the gate, in isolation

_real_sleep = asyncio.sleep


class FakeTime:
    """A virtual clock for the gate: ``asyncio.sleep`` (patched in) parks the sleeper on a
    timer heap, and :meth:`drive` fires the timers in order, each ``late`` seconds after it
    was due (a loaded event loop's late wake-ups), advancing the clock: no wall-clock."""

    def __init__(self, late: float = 0.0) -> None:
        self.now = 1000.0
        self.late = late
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = 0

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._order += 1
        heapq.heappush(self._timers, (self.now + max(delay, 0.0) + self.late, self._order,
                                      future))
        await future

    def stall(self, seconds: float) -> None:
        self.now += seconds

    async def drive(self, work: Any) -> Any:
        task = asyncio.ensure_future(work)
        while not task.done():
            for _ in range(20):  # let every woken task run up to its next sleep
                await _real_sleep(0)
            if self._timers:
                due, _n, future = heapq.heappop(self._timers)
                self.now = max(self.now, due)
                future.set_result(None)
        return task.result()


def _starts(fake: FakeTime, gate: ModelGate, calls: int, tokens: int = 0) -> list[float]:
    """When each of ``calls`` calls, all queued at once, got through ``gate``."""
    async def one() -> float:
        started = await gate.acquire(tokens)
        gate.release(started, reserved=tokens, used=tokens)
        return fake.now

    async def run() -> list[float]:
        return sorted(await asyncio.gather(*(one() for _ in range(calls))))

    return asyncio.run(fake.drive(run()))


def _most_in(times: list[float], window: float) -> int:
    """The most starts within any ``window`` seconds."""
    return max(bisect.bisect_right(times, t + window - 1e-9) - i for i, t in enumerate(times))


def test_rpm_keeps_a_fixed_schedule_through_late_wake_ups(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 600 RPM at the 98% margin: a slot every 102 ms; every wake-up 30 ms late. The old gate
    # set each next start to "now + interval", adding every late wake-up to the schedule.
    fake = FakeTime(late=0.030)
    monkeypatch.setattr(asyncio, "sleep", fake.sleep)
    gate = ModelGate("m", Budget(rpm=600), max_in_flight=200, clock=fake.clock)
    times = _starts(fake, gate, 200)
    rate = 600 * RPM_MARGIN / 60
    burst = rate * RPM_BURST_S  # what may start at once after an idle spell (7.35)
    ideal = (200 - int(burst) - 1) / rate
    assert times[-1] - times[0] <= ideal + CATCH_UP_S
    # Never more than a provider enforcing 600 RPM per second allows: a bucket of one
    # second's requests (10), refilled at 10 a second.
    for window in (0.01, 0.25, 1.0, 5.0):
        assert _most_in(times, window) <= 10 + 10 * window
    assert _most_in(times[10:], 1.0) <= int(rate) + 1  # after the burst: the rate itself


def test_a_stall_moves_the_schedule_back_instead_of_flooding() -> None:
    now = [0.0]
    schedule = Schedule(rate=10.0, capacity=1.0, catch_up=0.1, clock=lambda: now[0])
    slots = [schedule.reserve() for _ in range(50)]  # 0.0, 0.1, ... 4.9
    now[0] = 3.0  # the loop stalled for three seconds: 30 slots passed
    starts = []
    for slot in slots:
        now[0] = max(now[0], schedule.due(slot))
        schedule.late(slot)
        starts.append(now[0])
    # Catching up sends at most catch_up x rate + 1 together, then the schedule resumes.
    assert _most_in(starts, 0.1) <= 2
    assert starts[-1] == pytest.approx(3.0 - 0.1 + 49 * 0.1)


def test_an_idle_spell_allows_no_more_than_the_burst() -> None:
    now = [0.0]
    schedule = Schedule(rate=10.0, capacity=7.5, clock=lambda: now[0])
    schedule.reserve()
    now[0] = 100.0  # idle: the bucket refilled, but holds 7.5 requests at most
    due = [schedule.due(schedule.reserve()) for _ in range(20)]
    assert sum(d <= 100.0 for d in due) == 7
    assert due[-1] == pytest.approx(100.0 + (20 - 7.5) / 10)


def test_a_429_holds_the_schedule_without_a_burst_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTime(late=0.005)
    monkeypatch.setattr(asyncio, "sleep", fake.sleep)
    gate = ModelGate("m", Budget(rpm=600), max_in_flight=50, clock=fake.clock)
    gate.pause(2.0)
    until = fake.now + 2.0
    times = _starts(fake, gate, 20)
    assert times[0] >= until
    assert _most_in(times, 0.5) <= 6  # spaced at the rate from the pause's end: no burst


def test_tpm_keeps_its_schedule_through_late_wake_ups(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTime(late=0.3)
    monkeypatch.setattr(asyncio, "sleep", fake.sleep)
    gate = ModelGate("m", Budget(tpm=60000), max_in_flight=200, clock=fake.clock)
    times = _starts(fake, gate, 150, tokens=1000)
    rate = 60000 * RPM_MARGIN / 60  # 980 tokens a second, a bucket of a minute's
    assert times[-1] - times[0] <= (150 * 1000 - 60000 * RPM_MARGIN) / rate + 1.0
    # Within any minute: at most the bucket plus a minute's refill.
    assert _most_in(times, 60.0) * 1000 <= 2 * 60000 * RPM_MARGIN + 1000


def test_a_429_pauses_every_call_of_the_model_and_halves_adaptive_concurrency() -> None:
    async def run() -> tuple[float, int, int]:
        gate = ModelGate("m", Budget(), max_in_flight=16)
        assert gate.adaptive and gate.limit == 16
        started = await gate.acquire()
        gate.release(started, rate_limited=True, retry_after=0.3)
        loop = asyncio.get_running_loop()
        begin = loop.time()
        other = await gate.acquire()  # another call of the model waits out the pause
        waited = loop.time() - begin
        gate.release(other, timed_out=True)  # a timeout backs off too
        return waited, gate.limit, gate.stats.rate_limited

    waited, limit, refused = asyncio.run(run())
    assert waited >= 0.28
    assert limit == 4 and refused == 1


def test_one_wave_of_429s_halves_once_and_successes_grow_the_limit_again() -> None:
    async def run() -> list[int]:
        gate = ModelGate("m", Budget(), max_in_flight=8)
        wave = [await gate.acquire() for _ in range(8)]
        for started in wave:
            gate.release(started, rate_limited=True, retry_after=0.0)
        seen = [gate.limit]
        for _ in range(4 + 5):
            gate.release(await gate.acquire(), used=10)
        seen.append(gate.limit)
        return seen

    assert asyncio.run(run()) == [4, 6]


def test_calls_beyond_the_limit_wait_for_a_slot() -> None:
    async def run() -> int:
        gate = ModelGate("m", Budget(), max_in_flight=2)
        peak = 0

        async def one() -> None:
            nonlocal peak
            started = await gate.acquire()
            peak = max(peak, gate.in_flight)
            await asyncio.sleep(0.01)
            gate.release(started, used=1)

        await asyncio.gather(*(one() for _ in range(10)))
        return peak

    assert asyncio.run(run()) == 2


def test_tpm_holds_calls_until_the_tokens_refill() -> None:
    async def run() -> float:
        gate = ModelGate("m", Budget(tpm=60000), max_in_flight=8)  # 980 tokens a second
        loop = asyncio.get_running_loop()
        first = await gate.acquire(58000)  # 800 of the 58800 left
        gate.release(first, reserved=58000, used=58800)  # charged what it really used: 0 left
        begin = loop.time()
        second = await gate.acquire(500)
        gate.release(second, reserved=500, used=500)
        return loop.time() - begin

    assert asyncio.run(run()) >= 0.45


@pytest.mark.parametrize(("headers", "wait"), [
    ({"Retry-After": "2"}, 2.0), ({"retry-after-ms": "250"}, 0.25),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}, 90.0),
    ({"llm_provider-x-ratelimit-remaining-tokens": "0",
      "llm_provider-x-ratelimit-reset-tokens": "20ms"}, 0.02),
    ({"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1s"}, None),
    ({"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}, None), ({}, None)])
def test_wait_from_rate_limit_headers(headers: dict[str, str], wait: float | None) -> None:
    assert wait_from_headers(headers) == (pytest.approx(wait) if wait is not None else None)


# --------------------------------------------------------------- against a limited server

def _serve_limited(rpm: float, burst: float, queue: Any) -> None:
    with FakeOpenAIServer(diagnose, RateLimit(rpm=rpm, burst=burst)) as server:
        queue.put(server.url)
        time.sleep(600)


def _stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/_stats", timeout=10) as response:
        stats: dict[str, Any] = json.load(response)
        return stats


@pytest.mark.parametrize("transport", ["auto", "litellm"], ids=["aiohttp", "litellm"])
def test_rpm_limit_keeps_the_provider_from_refusing(pytester: pytest.Pytester,
                                                    fake_server: Start, transport: str) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 9)])
    # The provider runs in its own process: in this one it would share the GIL with the run
    # and see requests bunched by its own starvation, not by the client. Its bucket holds
    # one second's requests, as a provider enforcing a minute's limit per second does.
    ctx = multiprocessing.get_context("fork")
    queue: Any = ctx.Queue()
    process = ctx.Process(target=_serve_limited, args=(1200, 20, queue), daemon=True)
    process.start()
    try:
        url = queue.get(timeout=30)
        server = SimpleNamespace(url=url)
        limited = pytester.runpytest("c.yaml", "--agent-rpm=1200", "--agent-concurrency=8",
                                     *llm_args(server, ("doctor",),  # type: ignore[arg-type]
                                               transport=transport))
        stats = _stats(url)
    finally:
        process.kill()
    limited.assert_outcomes(passed=1, failed=7)
    assert stats["calls"] == 16 and stats["refused"] == 0


def test_without_a_limit_429s_are_absorbed_not_errors(pytester: pytest.Pytester,
                                                      fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 13)])
    server = FakeOpenAIServer(diagnose, RateLimit(rpm=1200, burst=2)).__enter__()
    try:
        result = pytester.runpytest("c.yaml", "--agent-concurrency=12",
                                    *llm_args(server, ("doctor",)))
    finally:
        server.__exit__(None, None, None)
    # 12 calls at once against 2 allowed: refusals happen, but every encounter completes.
    result.assert_outcomes(passed=1, failed=11)
    assert server.refused > 0
    assert all(r["outcome"] != "error" for r in results(pytester.path).values())


def test_bad_limits_are_usage_errors(pytester: pytest.Pytester) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-rpm=0")
    result.stderr.fnmatch_lines(["*--agent-rpm: expected a number > 0, got '0'*"])
    result = pytester.runpytest("c.yaml", "--agent-transport=curl")
    result.stderr.fnmatch_lines(["*--agent-transport: 'curl' is not one of: auto, litellm*"])


# ---------------------------------------------------------------------------- deployments

def models_file(path: Path, *servers: FakeOpenAIServer, rpm: int | None = None) -> Path:
    entries = [{"model_name": "doctor-llm",
                "litellm_params": {"model": "openai/fake", "api_base": s.url,
                                   "api_key": "sk-fake", **({"rpm": rpm} if rpm else {})}}
               for s in servers]
    path.write_text(yaml.safe_dump({"model_list": entries}))
    return path


def test_deployments_share_the_load_and_survive_one_dying(pytester: pytest.Pytester,
                                                          fake_server: Start) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 13)])
    survivor = fake_server(lambda req: diagnose(req))
    dying: list[FakeOpenAIServer] = []

    def die_after_three(req: FakeRequest) -> FakeReply:
        if req.index == 3:  # killed mid-run, with calls in flight
            threading.Thread(target=dying[0].__exit__, args=(None, None, None)).start()
            return FakeReply("never sent", delay=5)
        return diagnose(req)

    dying.append(fake_server(die_after_three))
    models_file(pytester.path / "models.yaml", survivor, dying[0])
    result = pytester.runpytest("c.yaml", "--agent-models=models.yaml",
                                "--agent-doctor=doctor-llm", "--agent-concurrency=4",
                                "--agent-backoff=0.01", "--agent-timeout=10",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=11)  # 0 lost encounters
    assert dying[0].calls >= 4 and survivor.calls > 0
    records = results(pytester.path).values()
    assert all(r["outcome"] in ("correct", "incorrect") for r in records)
    # The cache key holds the group's name: which deployment answered does not matter.
    replay = pytester.runpytest("c.yaml", "--agent-models=models.yaml",
                                "--agent-doctor=doctor-llm", "--agent-cache=replay",
                                "--agent-run-name=replay", "-p", "no:cacheprovider")
    replay.assert_outcomes(passed=1, failed=11)


def test_models_file_problems_name_file_entry_and_field(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text("model_list:\n  - model_name: a\n    litellm_params: {model: openai/x}\n"
                    "  - model_name: a\n    litellm_params: {api_base: http://h/v1}\n")
    with pytest.raises(ModelsFileError, match=r"models.yaml: deployment 2 \(a\): field "
                                              r"'litellm_params.model' is missing"):
        load(path)
    path.write_text("model_list:\n  - model_name: a\n    litellm_params: {model: m, rpm: -1}\n")
    with pytest.raises(ModelsFileError, match=r"deployment 1 .*'rpm' must be a positive"):
        load(path)
    path.write_text(yaml.safe_dump({"model_list": [
        {"model_name": "a", "litellm_params": {"model": "m", "rpm": 100}},
        {"model_name": "a", "rpm": 50, "litellm_params": {"model": "n"}},
        {"model_name": "b", "litellm_params": {"model": "m", "tpm": 9}},
        {"model_name": "b", "litellm_params": {"model": "n"}}]}))
    budgets = load(path).budgets
    assert budgets == {"a": Budget(rpm=150.0, tpm=None), "b": Budget(rpm=None, tpm=None)}


def test_models_file_error_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    (pytester.path / "models.yaml").write_text("model_list: [1]\n")
    result = pytester.runpytest("c.yaml", "--agent-models=models.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-models: *models.yaml: deployment 1: expected a "
                                 "mapping*"])


# ------------------------------------------------------------------------------- the pool

def test_fast_path_pool_is_the_concurrency() -> None:
    from pytest_agentclinic.llm.openai_http import OpenAIHTTP

    async def run() -> int:
        fast = OpenAIHTTP(1024)
        limit = fast._client().limit
        await fast.aclose()
        return int(limit)

    assert asyncio.run(run()) == 1024


# ------------------------------------------------------------------ calls in flight

def test_slots_go_to_the_earliest_items_first() -> None:
    from pytest_agentclinic.llm.limiter import PrioritySlots

    async def run() -> list[int]:
        slots = PrioritySlots(1)
        order: list[int] = []
        await slots.acquire(0)

        async def item(priority: int) -> None:
            await slots.acquire(priority)
            order.append(priority)
            slots.release()

        waiting = [asyncio.ensure_future(item(p)) for p in (5, 3, 9, 1)]
        await asyncio.sleep(0.01)
        assert order == [] and slots.held == 1
        slots.release()
        await asyncio.gather(*waiting)
        assert slots.held == 0
        return order

    assert asyncio.run(run()) == [1, 3, 5, 9]


@pytest.mark.parametrize("transport", ["auto", "litellm"], ids=["aiohttp", "litellm"])
def test_timeouts_halve_the_calls_in_flight(fake_server: Start, tmp_path: Path,
                                            transport: str) -> None:
    from pytest_agentclinic.llm.cache import CacheMode, ResponseCache
    from pytest_agentclinic.llm.caller import CallSettings, ModelCaller
    from pytest_agentclinic.llm.errors import InfrastructureError
    from pytest_agentclinic.llm.retry import RetryPolicy

    server = fake_server(lambda req: FakeReply("late", delay=2.0))
    caller = ModelCaller(CallSettings(api_base=server.url, timeout=0.3, concurrency=8,
                                      transport=transport, policy=RetryPolicy(attempts=1)),
                         ResponseCache(tmp_path, CacheMode.OFF))

    async def run() -> list[Any]:
        calls = [caller.complete(role="doctor", model="openai/slow", case_id=f"c{i}", sample=0,
                                 messages=[{"role": "user", "content": "hi"}],
                                 prompt_version="v") for i in range(8)]
        done = await asyncio.gather(*calls, return_exceptions=True)
        await caller.aclose()
        return done

    outcomes = asyncio.run(run())
    assert all(isinstance(o, InfrastructureError) for o in outcomes)
    gate = caller.gates["openai/slow"]
    assert gate.stats.timeouts == 8 and gate.limit == 4  # one wave, one halving


def test_xdist_workers_split_the_rate_limits() -> None:
    from pytest_agentclinic.plugin.settings import Given, _call

    config = SimpleNamespace(workerinput={"workercount": 4})
    settings = _call(config, Given.from_values({"rpm": "600"}), Path("."))  # type: ignore[arg-type]
    assert settings.budget == Budget(rpm=150.0, tpm=None)
    assert Budget(rpm=600, tpm=1000).share(1) == Budget(rpm=600, tpm=1000)


def busy_share(server: FakeOpenAIServer, slots: int) -> float:
    """The share of ``slots`` x the server's busy span spent answering requests."""
    served = server.served
    span = max(b for _a, b in served) - min(a for a, _b in served)
    return sum(b - a for a, b in served) / (slots * span)


def test_craftmd_items_waiting_on_a_conversation_hold_no_slot(pytester: pytest.Pytester,
                                                              fake_server: Start) -> None:
    from test_protocols_craftmd import clinician, craft_case

    write_yaml_cases(pytester.path / "c.yaml", [craft_case(i) for i in range(1, 5)])

    def slow(req: FakeRequest) -> FakeReply:
        reply = clinician(req)
        return FakeReply(reply.content, delay=0.2)

    server = fake_server(slow)
    result = pytester.runpytest("c.yaml", "--agent-protocol=craftmd", "--agent-concurrency=2",
                                "--agent-experiment=multiturn", "--agent-experiment=singleturn",
                                "--agent-answer=frq", *llm_args(server, ("doctor", "patient")))
    result.assert_outcomes(passed=2, failed=6)  # the script diagnoses case 1's condition
    # Two slots, kept busy: when the slots counted items, both held one case's two items,
    # waiting on one conversation (a chain of calls), and the slots were ~60% busy.
    assert busy_share(server, 2) >= 0.75


def test_litellm_import_leaves_the_loop_turning_and_its_pool_fits() -> None:
    # One fresh interpreter for both (an import of litellm is seconds of CPU).
    code = """
import asyncio, time
from pytest_agentclinic.llm import client
client.preload(1024)  # --agent-concurrency 1024

async def main():
    gaps, done = [], asyncio.Event()

    async def tick():
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    started = time.perf_counter()
    await client.aload()
    done.set()
    await ticker
    print(max(gaps), time.perf_counter() - started)

asyncio.run(main())
from litellm import constants
print(constants.AIOHTTP_CONNECTOR_LIMIT_PER_HOST, constants.AIOHTTP_CONNECTOR_LIMIT)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    longest, total = float(out[0]), float(out[1])
    # The import takes seconds; the loop kept turning meanwhile (GIL switches included).
    assert longest < total / 3, (longest, total)
    # litellm caps a host at 500 connections unless told otherwise before its import.
    assert out[2:] == ["1024", "2048"]


def test_calls_held_back_after_their_request_slot_take_a_new_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 20 calls admitted by the schedule, then all held (e.g. waiting for a call slot) for
    # 5 s: leaving together would send 20 requests at once to a 600 RPM provider.
    fake = FakeTime()
    monkeypatch.setattr(asyncio, "sleep", fake.sleep)
    gate = ModelGate("m", Budget(rpm=600), max_in_flight=50, clock=fake.clock)

    async def one() -> float:
        admitted = await gate.acquire()
        await asyncio.sleep(5.0 - (fake.now - 1000.0))  # held until t = 5 s
        await gate.resume(admitted)
        gate.release(admitted, used=1)
        return fake.now

    async def run() -> list[float]:
        return sorted(await asyncio.gather(*(one() for _ in range(20))))

    times = asyncio.run(fake.drive(run()))
    # Within what a provider enforcing 600 RPM per second allows (a bucket of 10, refilled
    # at 10 a second), not 20 at once.
    for window in (0.01, 0.25, 1.0):
        assert _most_in(times, window) <= 10 + 10 * window
