from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import scipy.stats  # noqa: F401  (see below)
from helpers import SHARED

from pytest_agentclinic.llm import client
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, Script

# numpy (under scipy) cannot be imported twice in one process, and pytester's in-process runs
# drop the modules a run imported: import it here, once, before any run (the gate uses it).


@pytest.fixture(scope="session")
def warm_litellm() -> None:
    """Import litellm and everything its first call imports, in this process.

    pytester's in-process runs drop the modules imported during a run; litellm's lazily
    imported parts, dropped and imported again by the next run, leave pytest unable to find
    any pytest11 entry point. Importing them once out here keeps every run identical.
    """
    import diskcache  # noqa: F401

    with FakeOpenAIServer() as server:
        asyncio.run(client.acomplete("openai/warm-up", [{"role": "user", "content": "hi"}],
                                     api_base=server.url, timeout=10,
                                     params={"api_key": "sk-warm-up"}))


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch,
                warm_litellm: None) -> Iterator[Callable[[Script], FakeOpenAIServer]]:
    """Start scripted OpenAI-compatible servers on 127.0.0.1 (stopped after the test)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key")
    servers: list[FakeOpenAIServer] = []

    def start(script: Script) -> FakeOpenAIServer:
        server = FakeOpenAIServer(script).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


#: The worker arguments of a pytester run: no ``-n``, ``-n 0`` and ``-n 2``.
XDIST_MODES = {"no-xdist": [], "n0": ["-n", "0"], "n2": ["-n", "2"]}
#: Every ``-n 2`` variant costs two worker start-ups (~5 s); the suite runs those of the tests
#: marked ``xdist_sample`` (one or more per area) and all of them with this set to 1.
FULL_XDIST = os.environ.get("AGENTCLINIC_FULL_XDIST") == "1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_sample: always run this test's -n 2 variant")


@pytest.fixture(params=list(XDIST_MODES))
def xdist(request: pytest.FixtureRequest) -> list[str]:
    """Run a pytester test once per worker mode (as syrupy tests itself under xdist): pass
    ``*xdist`` to ``runpytest``. Collection, reporting and gating must not depend on it."""
    if (request.param == "n2" and not FULL_XDIST
            and request.node.get_closest_marker("xdist_sample") is None):
        pytest.skip("-n 2 variant sampled out of the default suite (AGENTCLINIC_FULL_XDIST=1 "
                    "runs it)")
    return XDIST_MODES[request.param]


@pytest.fixture
def shared() -> Path:
    if not (SHARED / "agentclinic").is_dir():
        pytest.skip(f"upstream datasets not found at {SHARED} (CI has ../shared beside the repo)")
    return SHARED
