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
    loaded = sorted(m for m in ("aiohttp", "litellm") if m in sys.modules)
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
    assert calls == 2 and "aiohttp" in _imported(pytester)

    again = pytester.runpytest_subprocess(*args, "--agent-run-name=b")
    again.assert_outcomes(passed=1, failed=1)
    assert server.calls == calls  # every reply from the cache
    assert _imported(pytester) == set()

    # A new case over the same cache: its first miss loads the transport and is answered.
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2), make_case(3)])
    more = pytester.runpytest_subprocess(*args, "--agent-run-name=c")
    more.assert_outcomes(passed=1, failed=2)
    assert server.calls == calls + 1
    assert "aiohttp" in _imported(pytester)
