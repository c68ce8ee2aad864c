"""A split run's staggered start: the controller holds the setup of all but its lead workers
until the leads have started their first encounters (or a timeout), and a lead starts more of
its share ahead to keep its pace busy meanwhile."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.plugin import xdist_hooks, xdist_stagger
from pytest_agentclinic.plugin.shares import LEAD_KEY, lead_ahead, signal_started
from pytest_agentclinic.plugin.xdist_stagger import Stagger, lead_calls_per_s

# -- the controller's hold, with stand-in nodes


class Node:
    def __init__(self, name: str, popen: bool = True) -> None:
        self.workerinput: dict[str, Any] = {}
        self.gateway = SimpleNamespace(id=name, spec=SimpleNamespace(popen=popen))
        self.shutting_down = False  # xdist's: its connection ended, or it was told to end


def _signal_later(node: Node, after: float) -> threading.Thread:
    def touch() -> None:
        time.sleep(after)
        Path(node.workerinput[LEAD_KEY][0]).touch()

    thread = threading.Thread(target=touch)
    thread.start()
    return thread


def _setup(stagger: Stagger, nodes: list[Node], first: int = 0) -> list[float]:
    """Configure the nodes in turn (as xdist does; shares from ``first`` on); when each
    configure returned."""
    started, returned = time.monotonic(), []
    for index, node in enumerate(nodes, first):
        stagger.configure(node, index)
        returned.append(time.monotonic() - started)
    return returned


def test_a_held_node_is_set_up_once_every_lead_has_signalled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xdist_stagger, "HOLD_TIMEOUT_S", 30.0)
    nodes = [Node(f"gw{i}") for i in range(4)]
    stagger = Stagger(4, 2, calls_per_s=None)
    stagger.configure(nodes[0], 0)
    stagger.configure(nodes[1], 1)
    assert stagger.held_per_lead == 1.0  # two held, two leads
    threads = [_signal_later(nodes[0], 0.2), _signal_later(nodes[1], 0.6)]
    returned = _setup(stagger, nodes[2:], first=2)
    for thread in threads:
        thread.join()
    assert 0.5 <= returned[0] < 10  # waited for the later lead, not for the timeout
    assert returned[1] - returned[0] < 0.1  # the hold is over for every later node
    assert all(LEAD_KEY not in node.workerinput for node in nodes[2:])
    assert stagger.held_s is not None and stagger.held_s >= 0.5


def test_a_lead_that_never_signals_holds_the_others_until_the_timeout_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xdist_stagger, "HOLD_TIMEOUT_S", 0.5)
    nodes = [Node(f"gw{i}") for i in range(3)]
    returned = _setup(Stagger(3, 1, calls_per_s=None), nodes)
    assert 0.4 <= returned[1] < 5
    assert returned[2] - returned[1] < 0.1


def test_a_crashed_or_remote_lead_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xdist_stagger, "HOLD_TIMEOUT_S", 30.0)
    crashed, remote = Node("gw0"), Node("gw1", popen=False)
    stagger = Stagger(3, 2, calls_per_s=None)
    stagger.configure(crashed, 0)
    stagger.configure(remote, 1)
    assert LEAD_KEY not in remote.workerinput  # it could not write the controller's file
    crashed.shutting_down = True
    assert _setup(stagger, [Node("gw2")], first=2)[0] < 5


def test_nothing_is_held_with_no_more_workers_than_cores() -> None:
    for workers, leads in ((2, 2), (1, 1), (2, 4)):
        stagger = Stagger(workers, leads, calls_per_s=None)
        nodes = [Node(f"gw{i}") for i in range(workers)]
        assert max(_setup(stagger, nodes)) < 0.5
        assert all(LEAD_KEY not in node.workerinput for node in nodes)


def test_the_leads_folder_goes_once_the_hold_is_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xdist_stagger, "HOLD_TIMEOUT_S", 30.0)
    lead, held = Node("gw0"), Node("gw1")
    stagger = Stagger(2, 1, calls_per_s=2.5)
    stagger.configure(lead, 0)
    signal, calls, per_lead = lead.workerinput[LEAD_KEY]
    assert (calls, per_lead) == (2.5, 1.0)
    Path(signal).touch()
    stagger.configure(held, 1)
    assert not Path(signal).parent.exists()


# -- how far a lead starts ahead


def test_a_lead_starts_ahead_what_its_pace_spends_while_the_held_workers_start() -> None:
    # 3,000 RPM over 8 workers: 6.25 calls a second; 3 held workers per lead, each as long
    # to start as the lead's 1.2 s: 3.6 s of calls, one encounter each at least.
    assert lead_ahead(16, 6.25, 3.0, 1.2) == 23
    assert lead_ahead(16, 1.0, 3.0, 1.2) == 16  # its call slots' worth at least
    assert lead_ahead(16, None, 3.0, 1.2) == 16  # no RPM: nothing paces the calls


def test_a_lead_signals_once_its_first_call_is_out(tmp_path: Path) -> None:
    signal = tmp_path / "gw0"
    config: Any = SimpleNamespace(workerinput={LEAD_KEY: [str(signal), None, 1.0]})
    out = threading.Event()
    signal_started(config, out.is_set)
    time.sleep(0.2)
    assert not signal.exists()  # its first request's path still has the cores
    out.set()
    deadline = time.monotonic() + 10
    while not signal.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert signal.exists()
    started_none = tmp_path / "gw1"
    config = SimpleNamespace(workerinput={LEAD_KEY: [str(started_none), None, 1.0]})
    signal_started(config)
    assert started_none.exists()  # no encounter to wait for: at once
    signal_started(SimpleNamespace(workerinput={}))  # type: ignore[arg-type]  # not a lead


def _settings(rpm: float | None, limits_url: str | None = None,
              budgets: dict[str, Any] | None = None) -> Any:
    return SimpleNamespace(call=SimpleNamespace(
        budget=SimpleNamespace(rpm=rpm), budgets=budgets or {}, limits_url=limits_url))


def test_a_leads_pace_is_its_share_of_the_runs_rpm() -> None:
    assert lead_calls_per_s(_settings(3000), 8, 2) == 3000 / 60 / 8
    # A limits server: the leads alone take slots of the shared schedule.
    assert lead_calls_per_s(_settings(3000, "redis://127.0.0.1:1/0"), 8, 2) == 3000 / 60 / 2
    models = {"m": SimpleNamespace(rpm=6000)}
    assert lead_calls_per_s(_settings(None, budgets=models), 4, 2) == 6000 / 60 / 4
    assert lead_calls_per_s(_settings(None), 8, 2) is None


# -- whole runs, in every worker mode (gw0 the one lead of -n 2)

CASES = [make_case(i) for i in range(1, 11)]

#: Each process writes when it configured and when it finished collecting; each names the
#: cases whose doctor it made (an encounter starting).
STAMPS = """
import json, os, time


def _me(config):
    return getattr(config, "workerinput", {}).get("workerid", "main")


def _stamp(config, event):
    with open(f"{event}-{_me(config)}.txt", "w") as out:
        out.write(repr(time.time()))


def pytest_configure(config):
    _stamp(config, "configured")


def pytest_collection_finish(session):
    _stamp(session.config, "collected")


def pytest_agentclinic_make_agent(role, model, case, config):
    if role == "doctor":
        with open(f"started-{_me(config)}.txt", "a") as out:
            out.write(case.id + "\\n")
"""

#: The lead collects slowly: on its own, the held worker would have configured long before.
SLOW_LEAD = STAMPS + """

def pytest_collection_modifyitems(config):
    if _me(config) == "gw0":
        time.sleep(1.5)
"""

#: The lead waits in its collection until the held worker has configured (at most 30 s).
LEAD_WAITS_FOR_GW1 = STAMPS + """

def pytest_collection_modifyitems(config):
    if _me(config) != "gw0":
        return
    deadline = time.monotonic() + 30
    while not os.path.exists("configured-gw1.txt") and time.monotonic() < deadline:
        time.sleep(0.05)
    with open("gw0-waited.txt", "w") as out:
        out.write(str(os.path.exists("configured-gw1.txt")))
"""

#: The held worker waits in its collection until the lead has started its share's 5
#: encounters (at most 20 s): xdist sends no item before the held worker has collected.
GW1_WAITS_FOR_THE_LEADS_SHARE = STAMPS + """

def pytest_collection_modifyitems(config):
    if _me(config) != "gw1":
        return
    deadline = time.monotonic() + 20
    def started():
        if not os.path.exists("started-gw0.txt"):
            return 0
        with open("started-gw0.txt") as fh:
            return len(fh.read().split())
    while started() < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    with open("gw1-saw.txt", "w") as out:
        out.write(str(started()))
"""

#: The lead's first process crashes in its collection (its replacement does not).
LEAD_CRASHES_ONCE = STAMPS + """

def pytest_collection_modifyitems(config):
    if _me(config) == "gw0" and not os.path.exists("crashed"):
        open("crashed", "w").close()
        os._exit(1)
"""


def _stamp(path: Path, event: str, worker: str) -> float:
    return float((path / f"{event}-{worker}.txt").read_text())


def _started(path: Path) -> list[str]:
    return [line for p in sorted(path.glob("started-*.txt"))
            for line in p.read_text().splitlines()]


def _records(path: Path) -> list[str]:
    lines = (path / "reports" / "r" / "results.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["case_id"] for line in lines)


def _run(pytester: pytest.Pytester, conftest: str, xdist: list[str],
         *args: str) -> pytest.RunResult:
    write_yaml_cases(pytester.path / "c.yaml", CASES)
    (pytester.path / "conftest.py").write_text(conftest)
    result = pytester.runpytest("c.yaml", "-p", "no:randomly", "--agent-run-name=r", *args,
                                *xdist)
    result.assert_outcomes(passed=len(CASES))
    assert _records(pytester.path) == sorted(c["id"] for c in CASES)
    # Each case played once, by one process (an encounter started ahead took its item's).
    assert sorted(_started(pytester.path)) == sorted(c["id"] for c in CASES)
    return result


@pytest.fixture
def one_lead(monkeypatch: pytest.MonkeyPatch) -> None:
    """One core, as the controller counts them: under -n 2, gw0 leads and gw1 is held."""
    monkeypatch.setattr(xdist_hooks, "cores", lambda: 1)
    monkeypatch.setattr(xdist_stagger, "HOLD_TIMEOUT_S", 30.0)


def test_the_held_worker_starts_once_the_lead_has_started_its_encounters(
        pytester: pytest.Pytester, xdist: list[str], one_lead: None) -> None:
    # Every worker was set up at once: eight interpreters shared two cores from the start,
    # and the first request waited for them all to have started (~4 s at 10,000 cases).
    _run(pytester, SLOW_LEAD, xdist)
    if xdist == ["-n", "2"]:
        assert (_stamp(pytester.path, "configured", "gw1")
                > _stamp(pytester.path, "collected", "gw0"))


def test_a_lead_that_never_signals_does_not_stall_the_run(
        pytester: pytest.Pytester, xdist: list[str], one_lead: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xdist_stagger, "HOLD_TIMEOUT_S", 1.0)
    started = time.monotonic()
    _run(pytester, LEAD_WAITS_FOR_GW1, xdist)
    if xdist == ["-n", "2"]:
        assert (pytester.path / "gw0-waited.txt").read_text() == "True"
        assert time.monotonic() - started < 25  # not the lead's 30 s


def test_a_lead_starts_more_of_its_share_ahead_and_its_items_take_the_results(
        pytester: pytest.Pytester, xdist: list[str], one_lead: None) -> None:
    # 60,000 RPM over 2 workers: the lead's pace spends hundreds of calls while the held
    # worker starts; its start-ahead is its whole share (5 cases), not its 2 call slots.
    _run(pytester, GW1_WAITS_FOR_THE_LEADS_SHARE, xdist, "--agent-rpm=60000",
         "--agent-concurrency=2")
    if xdist == ["-n", "2"]:
        assert (pytester.path / "gw1-saw.txt").read_text() == "5"


def test_a_lead_that_crashes_is_not_waited_for_and_its_replacement_plays_its_share(
        pytester: pytest.Pytester, xdist: list[str], one_lead: None) -> None:
    started = time.monotonic()
    result = _run(pytester, LEAD_CRASHES_ONCE, xdist)
    if xdist == ["-n", "2"]:
        result.stdout.fnmatch_lines(["*gw0*node down*"])
        assert time.monotonic() - started < 25  # not the hold's 30 s


@pytest.mark.parametrize("unsplit", [["--agent-limit=6"], ["--dist", "loadfile"]],
                         ids=["agent-limit", "loadfile"])
def test_a_run_that_does_not_split_holds_no_worker(pytester: pytest.Pytester, one_lead: None,
                                                   unsplit: list[str]) -> None:
    # (-n 2 only: xdist's workers are the point.) Its workers start no encounter before
    # xdist sends items, so no lead would ever signal:
    # holding would only make the run wait (the hold's 30 s here).
    write_yaml_cases(pytester.path / "c.yaml", CASES)
    (pytester.path / "conftest.py").write_text(SLOW_LEAD)
    started = time.monotonic()
    result = pytester.runpytest("c.yaml", "-p", "no:randomly", "--agent-run-name=r",
                                "-n", "2", *unsplit)
    result.assert_outcomes(passed=6 if "--agent-limit=6" in unsplit else len(CASES))
    assert time.monotonic() - started < 25
    assert (_stamp(pytester.path, "configured", "gw1")
            < _stamp(pytester.path, "collected", "gw0"))  # set up at once, as ever
