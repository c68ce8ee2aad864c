"""A re-run that the response cache answers whole loads no HTTP transport: the served-model
probe goes through urllib, and the fast path's warm-up waits for the first cache miss."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from helpers import llm_args, make_case, write_yaml_cases

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, Script

Start = Callable[[Script], FakeOpenAIServer]

#: Each pytest process (an xdist worker too) says which transports it imported.
CONFTEST = '''
import json, os, sys

def pytest_unconfigure(config):
    loaded = sorted(m for m in ("aiohttp", "h11", "litellm") if m in sys.modules)
    with open(f"imported-{os.getpid()}.json", "w") as out:
        json.dump(loaded, out)
'''


def _imported(pytester: pytest.Pytester) -> set[str]:
    found: set[str] = set()
    for path in pytester.path.glob("imported-*.json"):
        found |= set(json.loads(path.read_text()))
        path.unlink()
    return found


def test_a_fully_cached_rerun_imports_no_transport(pytester: pytest.Pytester,
                                                   fake_server: Start,
                                                   xdist: list[str]) -> None:
    pytester.makeconftest(CONFTEST)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    args = ["c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no", *xdist]
    first = pytester.runpytest_subprocess(*args, "--agent-run-name=a")
    first.assert_outcomes(passed=1, failed=1)
    calls = server.calls
    # The fast path's client is h11's; aiohttp (~11 MB a process) is never loaded.
    assert calls == 2 and _imported(pytester) == {"h11"}

    again = pytester.runpytest_subprocess(*args, "--agent-run-name=b")
    again.assert_outcomes(passed=1, failed=1)
    assert server.calls == calls  # every reply from the cache
    assert _imported(pytester) == set()

    # A new case over the same cache: its first miss loads the transport and is answered.
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2), make_case(3)])
    more = pytester.runpytest_subprocess(*args, "--agent-run-name=c")
    more.assert_outcomes(passed=1, failed=2)
    assert server.calls == calls + 1
    assert _imported(pytester) == {"h11"}


#: Each process that plays encounters says whether its transport's import had started by
#: the end of its configuration (the warm-up thread), i.e. before its first call.
WARMING = '''
import json, sys, threading
import pytest

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    warming = "h11" in sys.modules or any(
        t.name == "agentclinic-http-import" for t in threading.enumerate())
    with open(f"warming-{worker}.json", "w") as out:
        json.dump(warming, out)
'''


def _warming(pytester: pytest.Pytester) -> dict[str, bool]:
    found = {p.stem.removeprefix("warming-"): json.loads(p.read_text())
             for p in pytester.path.glob("warming-*.json")}
    for path in pytester.path.glob("warming-*.json"):
        path.unlink()
    return found


def test_a_first_runs_workers_load_their_transport_before_the_first_call(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    # Under xdist the controller opens the cache (creating its database) before its workers
    # start: each worker took the cache for a previous run's and imported its client at its
    # first call, on the first request's path (~0.1 s of CPU, 0.45 s under load).
    pytester.makeconftest(WARMING)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
    args = ["c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no", *xdist]
    pytester.runpytest_subprocess(*args, "--agent-run-name=a").assert_outcomes(
        passed=1, failed=1)
    players = ["gw0", "gw1"] if xdist == ["-n", "2"] else ["main"]
    warming = _warming(pytester)
    assert {p: warming[p] for p in players} == dict.fromkeys(players, True)

    # Over the filled cache, the transport still waits for the first miss.
    pytester.runpytest_subprocess(*args, "--agent-run-name=b").assert_outcomes(
        passed=1, failed=1)
    warming = _warming(pytester)
    assert {p: warming[p] for p in players} == dict.fromkeys(players, False)
