"""pytest entry point: thin hooks that hand over to :class:`AgentClinicSession`."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import hookspecs
from .case_paths import case_nodeid, case_origin, extra_args
from .collect import CaseFile, ReleaseReported
from .junit import EncounterTimes, MeasuredItems
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
    # A plain `pytest`: the ini's case paths are collected too, where pytest's own search
    # would not reach them.
    config.args += extra_args(config, settings.case_paths)
    state = AgentClinicSession(config, settings, run_name)
    config.stash[session_key] = state
    config.pluginmanager.register(state, "agentclinic-session")
    config.pluginmanager.register(EncounterTimes(), "agentclinic-encounter-times")
    config.pluginmanager.register(MeasuredItems(config), "agentclinic-junit-items")
    config.pluginmanager.register(ReleaseReported(), "agentclinic-release-reported")
    if settings.subset.description is not None:
        from .subset import SubsetPlugin

        # Registered before the shard's plugin: pluggy calls it after, on the shard's cases.
        config.pluginmanager.register(SubsetPlugin(settings.subset), "agentclinic-subset")
    config.pluginmanager.register(OperationsPlugin(state), "agentclinic-operations")
    if config.pluginmanager.hasplugin("xdist"):
        from .xdist_hooks import XdistHooks, worker_lookahead

        config.pluginmanager.register(XdistHooks(state), "agentclinic-xdist")
        if workerinput is not None:
            state.lookahead = worker_lookahead(config)


def pytest_report_header() -> str:
    """The plugin's version (pytest's ``plugins:`` line shows the installed metadata's)."""
    from .. import __version__

    return f"agentclinic: pytest-agentclinic {__version__}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    config = parent.config
    origin = case_origin(config, file_path, session_of(config).settings.case_paths)
    if origin is None:
        return None
    return CaseFile.from_parent(parent, path=file_path, origin=origin,
                                nodeid=case_nodeid(config, file_path))


def session_of(config: pytest.Config) -> AgentClinicSession:
    """The session state registered for ``config``."""
    return config.stash[session_key]
