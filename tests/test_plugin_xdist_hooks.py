"""Under xdist the workers are let go before the final reports are written.

Worker mode is the point of this test: it runs ``-n 2`` only (see the ``xdist`` fixture)."""

from __future__ import annotations

import json

import pytest
from helpers import make_case, write_yaml_cases

CONFTEST = '''
import json, os
from pathlib import Path

HERE = Path(__file__).parent


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # a worker says which process it is
        (HERE / f"worker-{os.getpid()}.pid").write_text(str(os.getpid()))
        return
    from pytest_agentclinic.report import rundir

    original = rundir.write_reports

    def spied(*args, **kwargs):
        alive = []
        for pidfile in HERE.glob("worker-*.pid"):
            pid = int(pidfile.read_text())
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue  # gone
            if state != "Z":
                alive.append(pid)
        (HERE / "alive.json").write_text(json.dumps(alive))
        return original(*args, **kwargs)

    rundir.write_reports = spied
'''


def test_the_workers_are_gone_when_the_reports_are_written(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    result = pytester.runpytest_subprocess("c.yaml", "-n", "2", "-p", "no:cacheprovider",
                                           "--agent-run-name=r")
    result.assert_outcomes(passed=4)
    assert len(list(pytester.path.glob("worker-*.pid"))) == 2
    assert json.loads((pytester.path / "alive.json").read_text()) == []
    assert (pytester.path / "reports" / "r" / "report.html").is_file()
    result.stdout.fnmatch_lines(["*accuracy*"])


WORKER_EXIT = '''
import atexit, os
from pathlib import Path

HERE = Path(__file__).parent


class Held:
    """Freed only by the interpreter's teardown (a module global)."""

    def __init__(self, fd):
        self.fd = fd

    def __del__(self, _write=os.write):
        _write(self.fd, b"torn down")


def pytest_configure(config):
    global HELD
    if hasattr(config, "workerinput"):
        fd = os.open(HERE / f"teardown-{os.getpid()}", os.O_WRONLY | os.O_CREAT)
        HELD = Held(fd)
        atexit.register(lambda: (HERE / f"atexit-{os.getpid()}").write_text("ran"))
'''


def test_a_worker_ends_without_the_interpreter_teardown(pytester: pytest.Pytester) -> None:
    # Freeing a worker's ~130 MB of items one by one held the run's end for seconds.
    pytester.makeconftest(WORKER_EXIT)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    result = pytester.runpytest_subprocess("c.yaml", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    assert "node down" not in result.stdout.str() + result.stderr.str()
    markers = sorted(pytester.path.glob("teardown-*"))
    assert len(markers) == 2
    assert [m.read_text() for m in markers] == ["", ""]  # no object freed at exit
    # The exit handlers registered in the worker still ran.
    assert [p.read_text() for p in sorted(pytester.path.glob("atexit-*"))] == ["ran", "ran"]


GONE_BEFORE_TEARDOWN = '''
import json, os, time
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        (HERE / f"worker-{os.getpid()}.pid").write_text(str(os.getpid()))


def _alive():
    alive = []
    for pidfile in HERE.glob("worker-*.pid"):
        try:
            stat = Path(f"/proc/{pidfile.read_text()}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] != "Z":
            alive.append(int(pidfile.read_text()))
    return alive


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        return
    # Before xdist's own session end, which tells the workers to go.
    deadline = time.monotonic() + 20
    while _alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    (HERE / "alive.json").write_text(json.dumps(_alive()))
'''


def test_a_worker_leaves_without_waiting_for_the_controller(pytester: pytest.Pytester) -> None:
    # Waiting for the controller's word to go held the end of the run 1-2.5 s (loaded).
    pytester.makeconftest(GONE_BEFORE_TEARDOWN)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    result = pytester.runpytest_subprocess("c.yaml", "-n", "2", "-p", "no:cacheprovider",
                                           "--agent-run-name=r")
    result.assert_outcomes(passed=4)
    assert "node down" not in result.stdout.str() + result.stderr.str()
    assert len(list(pytester.path.glob("worker-*.pid"))) == 2
    assert json.loads((pytester.path / "alive.json").read_text()) == []
    assert (pytester.path / "reports" / "r" / "report.html").is_file()
