"""pytest entry point: thin hooks that hand over to :class:`AgentClinicSession`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cases.loaders import looks_like_case_file
from . import hookspecs
from .collect import CaseFile
from .junit import EncounterTimes
from .operations import OperationsPlugin
from .session import AgentClinicSession, default_run_name
from .settings import add_options, resolve

session_key = pytest.StashKey[AgentClinicSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    settings = resolve(config)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        from .xdist_hooks import WORKER_KEY

        run_name = workerinput.get(WORKER_KEY) or settings.run_name or default_run_name()
    else:
        run_name = settings.run_name or default_run_name()
    state = AgentClinicSession(config, settings, run_name)
    config.stash[session_key] = state
    config.pluginmanager.register(state, "agentclinic-session")
    config.pluginmanager.register(EncounterTimes(), "agentclinic-encounter-times")
    config.pluginmanager.register(OperationsPlugin(state), "agentclinic-operations")
    if config.pluginmanager.hasplugin("xdist"):
        from .xdist_hooks import XdistHooks, worker_lookahead

        config.pluginmanager.register(XdistHooks(state), "agentclinic-xdist")
        if workerinput is not None:
            state.lookahead = worker_lookahead(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    if looks_like_case_file(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


def session_of(config: pytest.Config) -> AgentClinicSession:
    """The session state registered for ``config``."""
    return config.stash[session_key]
