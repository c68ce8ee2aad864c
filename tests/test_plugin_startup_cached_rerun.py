"""A re-run that the response cache answers whole loads no HTTP transport: the served-model
probe goes through urllib, and the fast path's warm-up waits for the first cache miss.

Both tests read one sequence of runs per worker mode (:func:`played`): a first run, a rerun
over its cache, and a run with a new case; each process of each run says which transports it
imported and whether its transport's import had started by the end of its configuration.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

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


def _imported(pytester: pytest.Pytester) -> set[str]:
    found: set[str] = set()
    for path in pytester.path.glob("imported-*.json"):
        found |= set(json.loads(path.read_text()))
        path.unlink()
    return found


def _warming(pytester: pytest.Pytester) -> dict[str, bool]:
    found = {p.stem.removeprefix("warming-"): json.loads(p.read_text())
             for p in pytester.path.glob("warming-*.json")}
    for path in pytester.path.glob("warming-*.json"):
        path.unlink()
    return found


@dataclass
class Run:
    """What one run left: its result, the server's calls after it, the transports its
    processes imported and whether each one's import had started at its configure."""

    result: pytest.RunResult
    calls: int
    imported: set[str]
    warming: dict[str, bool]


#: The three runs of each worker mode, played once by the first test that needs them (the
#: tests of this module share one worker under ``--dist loadgroup``).
_PLAYED: dict[str, list[Run]] = {}
pytestmark = pytest.mark.xdist_group("startup_cached_rerun")


def played(pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> list[Run]:
    """The first run over an empty cache (two cases), the rerun over its cache, and a run
    with a third case over the same cache, in a subprocess each, under ``xdist``."""
    mode = " ".join(xdist) or "no-xdist"
    if mode not in _PLAYED:
        pytester.makeconftest(CONFTEST + WARMING)
        write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
        server = fake_server(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease"))
        args = ["c.yaml", *llm_args(server, ("doctor",)), "--agent-perception=no", *xdist]
        runs = []
        for name in "abc":
            if name == "c":
                write_yaml_cases(pytester.path / "c.yaml",
                                 [make_case(1), make_case(2), make_case(3)])
            result = pytester.runpytest_subprocess(*args, f"--agent-run-name={name}")
            runs.append(Run(result, server.calls, _imported(pytester),
                            _warming(pytester)))
        _PLAYED[mode] = runs
    return _PLAYED[mode]


def test_a_fully_cached_rerun_imports_no_transport(pytester: pytest.Pytester,
                                                   fake_server: Start,
                                                   xdist: list[str]) -> None:
    first, again, more = played(pytester, fake_server, xdist)
    first.result.assert_outcomes(passed=1, failed=1)
    calls = first.calls
    # The fast path's client is h11's; aiohttp (~11 MB a process) is never loaded.
    assert calls == 2 and first.imported == {"h11"}

    again.result.assert_outcomes(passed=1, failed=1)
    assert again.calls == calls  # every reply from the cache
    assert again.imported == set()

    # A new case over the same cache: its first miss loads the transport and is answered.
    more.result.assert_outcomes(passed=1, failed=2)
    assert more.calls == calls + 1
    assert more.imported == {"h11"}


def test_a_first_runs_workers_load_their_transport_before_the_first_call(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    # Under xdist the controller opens the cache (creating its database) before its workers
    # start: each worker took the cache for a previous run's and imported its client at its
    # first call, on the first request's path (~0.1 s of CPU, 0.45 s under load).
    first, again, _ = played(pytester, fake_server, xdist)
    first.result.assert_outcomes(passed=1, failed=1)
    players = ["gw0", "gw1"] if xdist == ["-n", "2"] else ["main"]
    assert {p: first.warming[p] for p in players} == dict.fromkeys(players, True)

    # Over the filled cache, the transport still waits for the first miss.
    again.result.assert_outcomes(passed=1, failed=1)
    assert {p: again.warming[p] for p in players} == dict.fromkeys(players, False)
