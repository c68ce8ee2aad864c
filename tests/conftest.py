from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import scipy.stats  # noqa: F401  (see below)
from helpers import SHARED, UNUSED_PLUGINS, XDIST_MODES
from xdist_groups import pytest_collection_modifyitems  # noqa: F401  (a hook)

import pytest_agentclinic.plugin.session  # (see below)
import pytest_agentclinic.protocols.agentclinic
import pytest_agentclinic.protocols.craftmd  # noqa: F401
from pytest_agentclinic.grading import terminology_cache
from pytest_agentclinic.llm import client
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, Script

# numpy (under scipy) cannot be imported twice in one process, and pytester's in-process runs
# drop the modules a run imported: import it here, once, before any run (the gate uses it).
# The plugin's stack likewise: a run of test files names no case file, so the plugin does
# not import it, and a class imported anew by each in-process run would not equal the last.

# pytester points HOME at each test's own directory, so every run (and each of its -n 2
# workers) would build the terminology's index again (~2 s). Every run of the session uses
# the index where a user's runs find it.
_index_dir = terminology_cache.writable_cache_dir()
if _index_dir is not None:
    os.environ.setdefault(terminology_cache.ENV, str(_index_dir))

# Every python process the suite starts (the -n 2 runs' workers, the subprocess runs, the
# documented recipes' pytest) imports the package. Where the environment sets
# PYTHONDONTWRITEBYTECODE (containers and CI images often do), each one compiled the
# package's modules from source again, ~0.2 s of CPU a worker, and each in-process run the
# modules it imports anew: the suite writes the bytecode once (``__pycache__`` is
# gitignored) and every process reads it.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

# pytest plugins of the test environment that no test uses cost every pytest process the
# tests start (and each of its xdist workers) ~0.5 s of CPU: they run without them.
_addopts = os.environ.get("PYTEST_ADDOPTS", "")
if UNUSED_PLUGINS not in _addopts:
    os.environ["PYTEST_ADDOPTS"] = f"{_addopts} {UNUSED_PLUGINS}".strip()



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


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, its runs without the unused plugins (pytester clears ``PYTEST_ADDOPTS`` when
    it starts; a test may set its own after this)."""
    monkeypatch.setenv("PYTEST_ADDOPTS", UNUSED_PLUGINS)
    return pytester


@pytest.fixture(params=list(XDIST_MODES))
def xdist(request: pytest.FixtureRequest) -> list[str]:
    """Run a pytester test once per worker mode (as syrupy tests itself under xdist): pass
    ``*xdist`` to every ``runpytest`` of the test. Collection, reporting and gating must not
    depend on it: every pytester test of them takes this fixture, where output differs
    legitimately (the order of lines, what only the controller prints) its assertions hold
    in every mode. Where a test has another axis whose values do not depend on the worker
    mode, :func:`helpers.each_mode_once` pairs them instead of multiplying them.

    The tests that run pytest without it, and why:

    * worker mode is the point of the test itself:
      ``test_plugin_operations.py::test_status_line_and_max_cost_hold_for_the_whole_run_under_xdist``
      and ``::test_a_run_without_encounters_prints_no_status_line`` (each runs ``-n 2`` for
      what only xdist does);
      ``test_runs_results.py::test_a_killed_run_keeps_its_finished_records`` (kills a
      ``python -m pytest`` subprocess mid-run, itself parametrized over no ``-n`` and
      ``-n 2``); ``test_plugin_xdist_hooks.py`` (how xdist's workers end, ``-n 2``);
      ``test_plugin_xdist_stagger.py``'s runs that do not split (what the controller holds
      under ``-n 2`` when one core leads);
      ``test_xdist_groups.py`` (the suite's groups under ``--dist loadgroup``);
    * about the transport and the LLM client, not collection, reporting or gating:
      ``test_llm_client.py``, ``test_llm_limiter.py``, ``test_llm_errors.py``,
      ``test_llm_served.py``, ``test_plugin_fault_suite.py``, ``test_plugin_real_model.py``;
    * a run that is the input of other tests, or a recipe run as written:
      ``test_report_html.py``'s ``plugin_run`` fixture (the browser tests' run),
      ``test_docs_ci.py`` (the documented CI workflows), and the runs that are only the
      input of ``agentclinic merge`` or the baseline or reference a test compares its run
      with (``test_cases_shard.py``, ``test_runs_summary.py``, ``test_report_gate.py``,
      ``test_plugin_operations.py``'s uncapped run):
      the run under test takes ``*xdist``, its inputs are played in one process.
    """
    return XDIST_MODES[str(request.param)]


@pytest.fixture
def shared() -> Path:
    if not (SHARED / "agentclinic").is_dir():
        pytest.skip(f"upstream datasets not found at {SHARED} (CI has ../shared beside the repo)")
    return SHARED
