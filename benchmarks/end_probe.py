"""End-phase probe: time stamps (CLOCK_MONOTONIC, comparable across processes) of each
process's last item, session finish, unconfigure and exit, and of named steps of the final
reports; optionally a profile of each process from its session's finish to its exit."""
import atexit
import functools
import importlib
import os
import time

import pytest

OUT = os.environ["END_PROBE_DIR"]
STEPS = [s for s in os.environ.get("END_PROBE_STEPS", "").split(",") if s]
_name = "controller"
_lines: list[str] = []
_last_item = [0.0]
_prof = [None]


def _mark(event: str, t: float | None = None) -> None:
    _lines.append(f"{_name}\t{event}\t{time.monotonic() if t is None else t:.4f}")


def _dump() -> None:
    _mark("last_item", _last_item[0])
    _mark("atexit")
    _lines.append(f"{_name}\tcpu\t{time.monotonic():.4f}\t{time.process_time():.4f}")
    if _prof[0] is not None:
        import pstats
        _prof[0].disable()
        stats = pstats.Stats(_prof[0])
        for profile in _threads:
            profile.disable()
            stats.add(profile)
        stats.dump_stats(os.path.join(OUT, f"{_name}.prof"))
    with open(os.path.join(OUT, f"{_name}.tsv"), "a") as fh:
        fh.write("\n".join(_lines) + "\n")


def _wrap(spec: str) -> None:
    module_name, _, qual = spec.partition(":")
    module = importlib.import_module(module_name)
    owner, attr = module, qual
    if "." in qual:
        cls, attr = qual.split(".")
        owner = getattr(module, cls)
    fn = getattr(owner, attr)

    @functools.wraps(fn)
    def timed(*a, **k):
        t = time.monotonic()
        try:
            return fn(*a, **k)
        finally:
            _lines.append(f"{_name}\tstep {qual}\t{t:.4f}\t{time.monotonic() - t:.4f}")
    setattr(owner, attr, timed)


def _profile_threads() -> None:
    """Each thread started from now on has its own profile of its CPU time, added to the
    process's (the runner's event loop makes the model calls)."""
    import cProfile
    import threading

    run = threading.Thread.run

    def profiled(self):
        profile = cProfile.Profile(time.thread_time)
        _threads.append(profile)
        profile.enable()
        try:
            run(self)
        finally:
            profile.disable()

    threading.Thread.run = profiled


_threads: list = []


def pytest_configure(config):
    global _name
    if os.environ.get("END_PROBE_PROFILE") == "all":  # the whole run, not only its end
        import cProfile
        _prof[0] = cProfile.Profile(time.thread_time)
        _prof[0].enable()
        _profile_threads()
    if hasattr(config, "workerinput"):
        _name = config.workerinput["workerid"]
    else:
        for spec in STEPS:
            _wrap(spec)
    atexit.register(_dump)


def pytest_runtest_logfinish(nodeid, location):
    _last_item[0] = time.monotonic()


def pytest_runtest_logreport(report):
    if _name == "controller" and report.when == "teardown":
        _last_item[0] = time.monotonic()


def pytest_testnodedown(node, error):
    _mark(f"nodedown {node.gateway.id}")


_stacks = []


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    _mark("sessionfinish_begin")
    if _name == "controller":  # where a stalled end phase waits: every thread's stack
        import faulthandler
        _stacks.append(open(os.path.join(OUT, "controller.stacks"), "w"))  # noqa: SIM115
        faulthandler.dump_traceback_later(3.0, repeat=True, file=_stacks[0])
    if os.environ.get("END_PROBE_PROFILE") == "end":
        import cProfile
        _prof[0] = cProfile.Profile()
        _prof[0].enable()
    yield
    if _stacks:
        import faulthandler
        faulthandler.cancel_dump_traceback_later()
    _mark("sessionfinish_end")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    _mark("terminal_summary_begin")
    yield
    _mark("terminal_summary_end")


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    _mark("unconfigure")
