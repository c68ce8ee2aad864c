"""pytest entry point: thin hooks that hand over to :class:`.session.AgentClinicSession`.

pytest loads this plugin in every run of its user's environment, most of which have nothing
to do with agents. Such a run (no paths on the command line, no ``agent_cases`` in the ini,
no ``--agent-*`` option: it can collect no case file) imports the options' declarations
only; the session, its protocols, agents, grading, reports, pydantic models, numpy and the
HTTP clients are imported by runs that can use them (``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..core import extensions
from ..protocols import registry
from . import hookspecs
from .options import OPTIONS, add_options
from .state import session_key

if TYPE_CHECKING:
    from .collect import CaseFile
    from .session import AgentClinicSession


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    _check_ini_keys(config)
    if _may_collect_cases(config):
        from .item_memory import ReturnFreedMemory

        # First: malloc's arenas are limited before the session starts its threads.
        config.pluginmanager.register(ReturnFreedMemory(), "agentclinic-return-freed")
        state = _start_session(config)
        config.stash[session_key] = state
        _register_plugins(config, state)
    _tell_problems(config)


def _tell_problems(config: pytest.Config) -> None:
    """A broken or conflicting extension is a warning in every run (one that asks for it by
    name gets the same message as its usage error). Those found until now (the options'
    protocols, the case formats the named paths were checked with) are config-time warnings
    of pytest's warnings summary: a ``warnings.warn`` while pytest configures goes to
    stderr, an xdist worker's too, each worker's again. A worker leaves them to its
    controller, which loads the same extensions. Those found later (a case format at
    collection, report tables at the run's end) are warned of as they are found."""
    problems = extensions.problems()  # each is told once
    if not hasattr(config, "workerinput"):
        for message in problems:
            config.issue_config_time_warning(pytest.PytestConfigWarning(message),
                                             stacklevel=2)
    extensions.on_problem = _warn


def _start_session(config: pytest.Config) -> AgentClinicSession:
    """The run's session: its settings resolved, its run named (an xdist worker takes its
    controller's name)."""
    from .case_paths import extra_args
    from .session import AgentClinicSession, default_run_name
    from .settings import resolve

    settings = resolve(config)
    _check_named_formats(config, settings.case_paths)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        from .xdist_hooks import WORKER_KEY

        run_name = workerinput.get(WORKER_KEY) or settings.run_name or default_run_name()
    else:
        run_name = settings.run_name or default_run_name()
    # A plain `pytest`: the ini's case paths are collected too, where pytest's own search
    # would not reach them.
    config.args += extra_args(config, settings.case_paths)
    return AgentClinicSession(config, settings, run_name)


def _register_plugins(config: pytest.Config, state: AgentClinicSession) -> None:
    """The session and the plugins of its features (xdist's only when xdist is there)."""
    from .item_memory import FreezeCollected, ReleaseReported
    from .junit import EncounterTimes, MeasuredItems

    config.pluginmanager.register(state, "agentclinic-session")
    config.pluginmanager.register(EncounterTimes(), "agentclinic-encounter-times")
    config.pluginmanager.register(MeasuredItems(config), "agentclinic-junit-items")
    config.pluginmanager.register(ReleaseReported(), "agentclinic-release-reported")
    config.pluginmanager.register(FreezeCollected(), "agentclinic-freeze-collected")
    if state.settings.subset.description is not None:
        from .subset import SubsetPlugin

        # Registered before the shard's plugin: pluggy calls it after, on the shard's cases.
        config.pluginmanager.register(SubsetPlugin(state.settings.subset),
                                      "agentclinic-subset")
    _register_operations(config, state)
    if config.pluginmanager.hasplugin("xdist"):
        from .xdist_hooks import XdistHooks, worker_lookahead

        config.pluginmanager.register(XdistHooks(state), "agentclinic-xdist")
        if state.plays and not state.is_worker:
            from .worker_arenas import WorkerArenas

            config.pluginmanager.register(WorkerArenas(), "agentclinic-worker-arenas")
        if state.is_worker:
            state.executor.lookahead = worker_lookahead(config)


def _register_operations(config: pytest.Config, state: AgentClinicSession) -> None:
    """Running at scale, a plugin per feature: the run's counters (shared between xdist's
    processes), the cost limit, the status line (not on a worker: the controller shows it),
    none of them in a run that only collects; and the shard (registered after the subset:
    pluggy calls it first)."""
    ops = state.settings.operations
    if state.plays:
        _register_counters(config, state)
    if ops.shard is not None:
        from .shards import ShardFilter

        config.pluginmanager.register(ShardFilter(ops.shard), "agentclinic-shard")


def _register_counters(config: pytest.Config, state: AgentClinicSession) -> None:
    from .cost_limit import CostLimit
    from .counters import RunStatus, SharedCounters, publish_every

    ops, executor = state.settings.operations, state.executor
    counters = SharedCounters(config, lambda: RunStatus.of(executor.runner, state.caller.stats),
                              publish_every(ops.max_cost_usd, ops.progress_every))
    config.pluginmanager.register(counters, "agentclinic-counters")
    cost = CostLimit(ops.max_cost_usd, counters, state.summary_extra)
    executor.runner.admit = cost.admit
    config.pluginmanager.register(cost, "agentclinic-cost-limit")
    if not state.is_worker:
        from .status_line import StatusLine

        line = StatusLine(config, ops.progress_every, counters,
                          lambda tick: setattr(executor, "on_wait", tick))
        config.pluginmanager.register(line, "agentclinic-status-line")


def _check_ini_keys(config: pytest.Config) -> None:
    """An ``agent_*`` ini key the plugin does not know is a usage error naming the closest
    known one: pytest would only warn at the end, after a run with the default (offline)
    doctor in place of the one meant (``agent_doctr = gpt-4o``)."""
    # pytest's own list of the ini keys no plugin declared (it warns of them at the end).
    unknown_keys: set[str] = getattr(config, "_get_unknown_ini_keys", set)()
    unknown = sorted(k for k in unknown_keys if k.startswith("agent_"))
    if not unknown:
        return
    import difflib

    known = ["agent_cases", *(opt.ini for opt in (*OPTIONS, *registry.all_options()))]
    lines = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        lines.append(f"{config.inipath}: unknown ini option {key!r}{hint}")
    raise pytest.UsageError("\n".join(lines))


def _check_named_formats(config: pytest.Config, ini_paths: tuple[Path, ...]) -> None:
    """A case file named on the command line whose format's extension failed to load: its
    problem is this run's usage error (other runs only warn of it)."""
    from ..cases import formats
    from .case_paths import case_roots

    for root in case_roots(config, ini_paths):
        if root.suffix in formats.suffixes() or root.name.endswith(".specialties.json"):
            continue
        problem = (extensions.problem_of(extensions.CASE_FORMATS, root.suffix)
                   or extensions.problem_of(extensions.CASE_FORMATS, root.suffix.lstrip(".")))
        if problem is not None:
            raise pytest.UsageError(f"{root.name}: {problem}")


def pytest_unconfigure() -> None:
    extensions.on_problem = None


def _warn(message: str) -> None:
    # Found later in the run (a case format at collection, report tables at its end).
    warnings.warn(pytest.PytestConfigWarning(message), stacklevel=2)


def _may_collect_cases(config: pytest.Config) -> bool:
    """Whether this run can involve agents: an ``--agent-*`` option given (it is then
    checked, whatever the run collects), or a path that can hold cases (a case file named,
    a path ``agent_cases`` covers, a named folder holding a file that looks like cases:
    :func:`.case_paths.may_involve_agents`)."""
    if any(config.getoption("agent_" + opt.name) is not None or config.getini(opt.ini)
           for opt in (*OPTIONS, *registry.all_options())):
        return True
    from .case_paths import may_involve_agents

    ini_paths = tuple(Path(p) for p in config.getini("agent_cases"))
    return may_involve_agents(config, ini_paths)


def pytest_report_header() -> str:
    """The plugin's version (pytest's ``plugins:`` line shows the installed metadata's)."""
    from .. import __version__

    return f"agentclinic: pytest-agentclinic {__version__}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    config = parent.config
    state = config.stash.get(session_key, None)
    if state is None:  # a run that collects no case file
        return None
    from .case_paths import case_nodeid, case_origin
    from .collect import CaseFile

    origin = case_origin(config, file_path, state.settings.case_paths)
    if origin is None:
        return None
    return CaseFile.from_parent(parent, path=file_path, origin=origin,
                                nodeid=case_nodeid(config, file_path))
