"""A run's cases split between xdist's workers: each collects its share, the controller
schedules the collections that differ, and the run reads as a full collection's would."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.cases.shard import shard_of
from pytest_agentclinic.plugin.events import WORKER_KEY as EVENTS_KEY
from pytest_agentclinic.plugin.events import RunEvents
from pytest_agentclinic.plugin.shares import SHARE_KEY, WorkerShare
from pytest_agentclinic.plugin.xdist_hooks import XdistHooks
from pytest_agentclinic.plugin.xdist_split import Shares, SplitScheduling

# -- the worker's share


def test_a_share_deals_the_cases_round_robin_across_files() -> None:
    shares = [WorkerShare(i, 3) for i in range(3)]
    taken = [[share.takes("d", f"c{n}") for share in shares] for n in range(7)]
    assert [row.index(True) for row in taken] == [0, 1, 2, 0, 1, 2, 0]
    assert all(sum(row) == 1 for row in taken)


def test_a_share_under_a_shard_deals_only_the_shards_cases() -> None:
    ids = [f"c{n}" for n in range(40)]
    mine = [i for i in ids if shard_of("d", i, 2) == 1]
    shares = [WorkerShare(i, 2, shard=(1, 2)) for i in range(2)]
    dealt = [[i for i in ids if share.takes("d", i)] for share in shares]
    assert sorted(dealt[0] + dealt[1]) == sorted(mine)
    assert abs(len(dealt[0]) - len(dealt[1])) <= 1  # balanced within the shard


def test_a_crashed_workers_replacement_gets_its_share() -> None:
    shares = Shares(3)
    nodes = [object() for _ in range(3)]
    assert [shares.assign(n) for n in nodes] == [[0, 3], [1, 3], [2, 3]]
    shares.release(nodes[1])
    assert shares.assign(object()) == [1, 3]
    assert shares.assign(object()) is None  # every share held: this one collects everything


# -- the controller's scheduler, with stand-in nodes


class Node:
    def __init__(self, share: int | None, count: int) -> None:
        self.workerinput: dict[str, Any] = {} if share is None else {SHARE_KEY: [share, count]}
        self.gateway = SimpleNamespace(id=f"gw{share}")
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


class Config:
    def __init__(self, nodes: int, dist: str = "load") -> None:
        self.values = {"tx": [f"{nodes}*popen"], "dist": dist}
        self.reports: list[pytest.CollectReport] = []
        self.hook = SimpleNamespace(pytest_collectreport=lambda report: self.reports.append(
            report))

    def getvalue(self, name: str) -> Any:
        return self.values[name]


def _is_case(nodeid: str) -> bool:
    return nodeid.startswith("c.yaml::")


def _scheduler(config: Config, depth: int = 2) -> tuple[SplitScheduling, list[list[str]]]:
    told: list[list[str]] = []
    return SplitScheduling(config, None, depth, _is_case, told.append), told  # type: ignore[arg-type]


def _run(sched: SplitScheduling, collections: dict[Node, list[str]]) -> dict[Node, list[str]]:
    """Collect, schedule and play every item to the end: what each node ran."""
    for node in collections:
        sched.add_node(node)
    for node, ids in collections.items():
        sched.add_node_collection(node, ids)
    assert sched.collection_is_completed
    assert not sched.has_pending  # xdist shows the count only then
    sched.schedule()
    ran: dict[Node, list[str]] = {node: [] for node in collections}
    while not sched.tests_finished:
        progressed = False
        for node, ids in collections.items():
            pending = sched.node2pending.get(node, [])
            # A worker runs an item once it holds the next one, or once it is shut down.
            if len(pending) >= 2 or (pending and node.shutting_down):
                index = pending[0]
                ran[node].append(ids[index])
                sched.mark_test_complete(node, index)
                progressed = True
        assert progressed, "the scheduler stalled"
    for node, ids in collections.items():  # the last item of each node, once shut down
        for index in list(sched.node2pending.get(node, [])):
            ran[node].append(ids[index])
            sched.mark_test_complete(node, index)
    return ran


def test_only_encounter_items_each_runs_on_the_worker_that_collected_it() -> None:
    nodes = [Node(i, 2) for i in range(2)]
    cases = [f"c.yaml::t-{n:02d}[x]" for n in range(9)]
    collections = {nodes[0]: cases[0::2], nodes[1]: cases[1::2]}
    sched, told = _scheduler(Config(2))
    ran = _run(sched, collections)
    assert [sorted(t) for t in told] == [sorted(cases)]  # the union, once
    assert ran == collections  # each share on its node, in its order
    assert all(n.shutting_down for n in nodes)


def test_mixed_items_ordinary_tests_are_balanced_and_cases_stay_with_their_share() -> None:
    nodes = [Node(i, 2) for i in range(2)]
    plain = [f"test_p.py::test_p[{n}]" for n in range(40)]
    cases = [f"c.yaml::t-{n:02d}[x]" for n in range(6)]
    collections = {nodes[0]: plain + cases[0::2], nodes[1]: plain + cases[1::2]}
    sched, told = _scheduler(Config(2))
    ran = _run(sched, collections)
    assert len(told[0]) == 46
    everything = ran[nodes[0]] + ran[nodes[1]]
    assert sorted(everything) == sorted(plain + cases)  # each once
    for node, ids in collections.items():
        assert {i for i in ran[node] if _is_case(i)} == {i for i in ids if _is_case(i)}
    assert all(ran[n] and any(not _is_case(i) for i in ran[n]) for n in nodes)


def test_fewer_cases_than_workers_the_idle_ones_are_let_go() -> None:
    nodes = [Node(i, 3) for i in range(3)]
    sched, _told = _scheduler(Config(3))
    ran = _run(sched, {nodes[0]: ["c.yaml::t-01[x]"], nodes[1]: [], nodes[2]: []})
    assert ran == {nodes[0]: ["c.yaml::t-01[x]"], nodes[1]: [], nodes[2]: []}
    assert all(n.shutting_down for n in nodes)


def test_no_cases_at_all_is_plain_load_balancing() -> None:
    nodes = [Node(i, 2) for i in range(2)]
    plain = [f"test_p.py::test_p[{n}]" for n in range(30)]
    sched, _told = _scheduler(Config(2))
    ran = _run(sched, {nodes[0]: plain, nodes[1]: plain})
    assert sorted(ran[nodes[0]] + ran[nodes[1]]) == sorted(plain)
    assert ran[nodes[0]] and ran[nodes[1]]


def test_loadgroup_sends_a_group_whole() -> None:
    nodes = [Node(i, 2) for i in range(2)]
    grouped = [f"test_g.py::test_g[{n}]@heavy" for n in range(6)]
    plain = [f"test_p.py::test_p[{n}]" for n in range(6)]
    cases = ["c.yaml::t-01[x]", "c.yaml::t-02[x]"]
    ids = grouped + plain
    sched, _told = _scheduler(Config(2, dist="loadgroup"))
    ran = _run(sched, {nodes[0]: [*ids, cases[0]], nodes[1]: [*ids, cases[1]]})
    holders = [n for n in nodes if any(i.endswith("@heavy") for i in ran[n])]
    assert len(holders) == 1
    assert [i for i in ran[holders[0]] if i.endswith("@heavy")] == grouped


def test_loadgroup_reads_no_group_in_a_parameter_with_an_at_sign() -> None:
    # An "@" inside a parameter's id (an address, "user@host") names no group: xdist reads a
    # group only after the id's closing bracket, and so must the split, or every test whose
    # parameter ends alike is sent whole to one worker.
    nodes = [Node(i, 2) for i in range(2)]
    plain = [f"test_p.py::test_p[user{n}@host]" for n in range(12)]
    cases = ["c.yaml::t-01[x]", "c.yaml::t-02[x]"]
    sched, _told = _scheduler(Config(2, dist="loadgroup"))
    ran = _run(sched, {nodes[0]: [*plain, cases[0]], nodes[1]: [*plain, cases[1]]})
    assert sorted(ran[nodes[0]] + ran[nodes[1]]) == sorted([*plain, *cases])
    assert all(any(i in plain for i in ran[n]) for n in nodes)


def test_a_difference_the_split_does_not_explain_is_a_collection_error() -> None:
    nodes = [Node(i, 2) for i in range(2)]
    config = Config(2)
    sched, told = _scheduler(config)
    for node in nodes:
        sched.add_node(node)
    sched.add_node_collection(nodes[0], ["test_p.py::test_a", "c.yaml::t-01[x]"])
    sched.add_node_collection(nodes[1], ["test_p.py::test_b", "c.yaml::t-02[x]"])
    assert sched.collection_is_completed
    sched.schedule()
    assert told == [] and nodes[0].sent == [] and nodes[1].sent == []
    assert sched.tests_finished
    [report] = config.reports
    assert report.failed and "test_p.py::test_a" in str(report.longrepr)
    assert "c.yaml::t-01" not in str(report.longrepr)


def test_a_crashed_workers_cases_wait_for_its_replacement() -> None:
    nodes = [Node(0, 2), Node(1, 2)]
    cases = [f"c.yaml::t-{n:02d}[x]" for n in range(12)]
    collections = {nodes[0]: cases[0::2], nodes[1]: cases[1::2]}
    sched, _told = _scheduler(Config(2), depth=3)
    for node in nodes:
        sched.add_node(node)
    for node, ids in collections.items():
        sched.add_node_collection(node, ids)
    sched.schedule()
    crashed_in = sched.remove_node(nodes[1])  # dies holding three of its items
    assert crashed_in == cases[1]
    assert not sched.tests_finished
    assert len(nodes[0].sent) == 3  # the other node takes none of the crashed share's
    replacement = Node(1, 2)
    sched.add_node(replacement)
    sched.add_node_collection(replacement, cases[1::2])
    sched.schedule()
    assert [cases[1::2][i] for i in replacement.sent] == cases[3::2][:3]  # after the crash


# -- whole runs, in every worker mode

PLAIN = """
import pytest

@pytest.mark.parametrize("i", range(4))
def test_plain(i):
    assert i != 3
"""

RECORD_COLLECTED = """
import json, os


def pytest_collection_finish(session):
    worker = getattr(session.config, "workerinput", {})
    name = worker.get("workerid", "main")
    with open(f"collected-{name}.json", "w") as out:
        json.dump({"ids": [i.nodeid for i in session.items],
                   "share": worker.get("agentclinic_share")}, out)
"""

#: Cases the offline agents solve, and two they miss (no finding names the diagnosis).
SOLVED = [make_case(i, specialty="Dermatology" if i % 2 else "Cardiology") for i in range(1, 11)]
MISSED = [make_case(i, tests={"Skin Biopsy": "Nonspecific."}, diagnosis=f"Lichen {i}",
                    synonyms=[], choices=[f"Lichen {i}", "a", "b", "c"]) for i in (11, 12)]


def _write(path: Path) -> None:
    write_yaml_cases(path / "c.yaml", SOLVED + MISSED)
    (path / "test_plain.py").write_text(PLAIN)
    (path / "conftest.py").write_text(RECORD_COLLECTED)


def _records(path: Path, run: str) -> list[str]:
    lines = (path / "reports" / run / "results.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["nodeid"] for line in lines)


def _collected(path: Path) -> dict[str, dict[str, Any]]:
    return {p.stem.removeprefix("collected-"): json.loads(p.read_text())
            for p in path.glob("collected-*.json")}


def _item(case: dict[str, Any]) -> str:
    return f"c.yaml::{case['id']}[{case['specialty'].lower()}-offline]"


#: One run of the cases and ``test_plain.py`` per worker mode, read by the tests of what a
#: run collects, decodes, keeps and imports (each watched by its part of the run's conftest:
#: a ``-n 2`` run starts two workers, ~1 s of CPU): the mode's first test plays it, the
#: module's tests share one worker under ``--dist loadgroup``.
_PLAYED: dict[str, tuple[pytest.RunResult, Path]] = {}
pytestmark = pytest.mark.xdist_group("xdist_split")


def played(pytester: pytest.Pytester, xdist: list[str]) -> tuple[pytest.RunResult, Path]:
    """The mode's run (its result and its folder), over the parse cache a ``--collect-only``
    run left (the cases read back, as a rerun reads them), with every watcher's files."""
    mode = " ".join(xdist) or "no-xdist"
    if mode not in _PLAYED:
        _write(pytester.path)
        (pytester.path / "conftest.py").write_text(
            RECORD_COLLECTED + _COUNT_DECODED + _COUNT_REPORTS + _REPORT_MODULES)
        pytester.runpytest("c.yaml", "--collect-only", "-p", "no:randomly")  # the parse cache
        for stale in pytester.path.glob("*.json"):  # what the watchers wrote of that run
            stale.unlink()
        result = pytester.runpytest("c.yaml", "test_plain.py", "-p", "no:randomly",
                                    "--agent-run-name=r", *xdist)
        _PLAYED[mode] = (result, pytester.path)
    return _PLAYED[mode]


def _written(path: Path, kind: str) -> dict[str, Any]:
    """What a watcher of the conftest wrote, by process (``kind-<process>.json``)."""
    return {p.stem.removeprefix(f"{kind}-"): json.loads(p.read_text())
            for p in path.glob(f"{kind}-*.json")}


def test_a_split_run_reads_as_a_full_collections(pytester: pytest.Pytester,
                                                 xdist: list[str]) -> None:
    result, path = played(pytester, xdist)
    result.assert_outcomes(passed=10 + 3, failed=2 + 1)
    cases = SOLVED + MISSED
    assert _records(path, "r") == sorted(map(_item, cases))
    summary = json.loads((path / "reports" / "r" / "summary.json").read_text())
    [row] = next(t for t in summary["tables"] if t["id"] == "by_doctor")["data"]
    assert (summary["items"], row["n"], row["correct"]) == (12, 12, 10)
    collected = _collected(path)
    if xdist != ["-n", "2"]:
        assert collected["main"]["share"] is None
        assert len(collected["main"]["ids"]) == 12 + 4
        return
    result.stdout.fnmatch_lines(["2 workers [16 items]"])
    workers = [collected["gw0"], collected["gw1"]]
    assert sorted(w["share"][0] for w in workers) == [0, 1]
    shares = [{i for i in w["ids"] if i.startswith("c.yaml")} for w in workers]
    assert not shares[0] & shares[1] and shares[0] | shares[1] == set(map(_item, cases))
    assert sorted(map(len, shares)) == [6, 6]  # every other case
    assert all({i for i in w["ids"] if i.startswith("test_plain")} ==
               {f"test_plain.py::test_plain[{n}]" for n in range(4)} for w in workers)


#: Counts the cases a process holds decoded at once while it collects (each case is made by
#: ``Case.model_validate_json``, parsed or read back from the parse cache).
_COUNT_DECODED = """
import weakref

from pytest_agentclinic.core.case import Case

_decode = Case.model_validate_json
_made = []  # a weak reference to each case made (a frozen case is not hashable)
_most = [0]


def _counted(cls, *args, **kwargs):
    case = _decode(*args, **kwargs)
    _made.append(weakref.ref(case))
    _most[0] = max(_most[0], sum(made() is not None for made in _made))
    return case


Case.model_validate_json = classmethod(_counted)


def pytest_collection_modifyitems(config):
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    with open(f"decoded-{worker}.json", "w") as out:
        json.dump(_most[0], out)
"""


def test_a_split_worker_decodes_its_share_of_the_cases_only(pytester: pytest.Pytester,
                                                           xdist: list[str]) -> None:
    # Each worker read back, and held decoded at once, every case of the run, though it
    # made items of its share only: at 10,000 cases ~30 MB a worker the allocator kept.
    result, path = played(pytester, xdist)
    result.assert_outcomes(passed=10 + 3, failed=2 + 1)
    cases = SOLVED + MISSED
    assert _records(path, "r") == sorted(map(_item, cases))
    most = _written(path, "decoded")
    if xdist != ["-n", "2"]:
        assert most == {"main": len(cases)}  # one process plays every case
        return
    assert set(most) == {"gw0", "gw1"}
    # Its six cases, and one other worker's at a time while the protocol expands the file.
    assert all(held <= len(cases) // 2 + 1 for held in most.values()), most


#: How many reports of encounters each process's terminal reporter holds at its end.
_COUNT_REPORTS = """

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    reporter = session.config.pluginmanager.getplugin("terminalreporter")
    held = sum(report.nodeid.startswith("c.yaml") for reports in reporter.stats.values()
               for report in reports if hasattr(report, "nodeid"))
    with open(f"reports-{worker}.json", "w") as out:
        json.dump(held, out)


def pytest_runtest_teardown(item):
    if item.nodeid.startswith("c.yaml::t-11"):
        print("said in the teardown of t-11")  # captured: its report must be kept
"""


def test_a_worker_keeps_no_encounter_reports_the_run_summary_is_whole(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    # A worker's terminal reporter kept every report of its encounters (three an item, ~3
    # KB) to the run's end, for a summary only the controller shows; the controller (or the
    # one process) kept each passed setup's and teardown's too (~1.5 KB each under xdist),
    # which the summary reads only for a teardown's captured output.
    result, path = played(pytester, xdist)
    result.assert_outcomes(passed=10 + 3, failed=2 + 1)
    for missed in MISSED:  # in the summary, in whichever order the workers ended them
        result.stdout.fnmatch_lines([f"*FAILED c.yaml::{missed['id']}*"])
    # A failure's teardown output is still shown under it.
    result.stdout.fnmatch_lines(["*Captured stdout teardown*", "said in the teardown of t-11"])
    held = _written(path, "reports")
    items = len(SOLVED + MISSED)
    assert held.pop("main") == items + 1  # each call's, and t-11's teardown with its output
    assert held == ({"gw0": 0, "gw1": 0} if xdist == ["-n", "2"] else {})


@pytest.mark.parametrize("selection, chosen", [
    (["-k", "t-03 or t-08 or plain"], ["t-03", "t-08"]),
    (["-m", "cardiology"], [c["id"] for c in SOLVED if c["specialty"] == "Cardiology"]),
    (["--deselect", "c.yaml::t-05[dermatology-offline]"],
     [c["id"] for c in SOLVED + MISSED if c["id"] != "t-05"]),
    (["--agent-shard", "2/3"], [c["id"] for c in SOLVED + MISSED
                                if shard_of("t", c["id"], 3) == 2]),
], ids=["k", "m", "deselect", "shard"])
def test_selection_is_the_same_split_or_not(pytester: pytest.Pytester, xdist: list[str],
                                            selection: list[str], chosen: list[str]) -> None:
    _write(pytester.path)
    result = pytester.runpytest("c.yaml", "-p", "no:randomly", "--agent-run-name=r",
                                "--strict-markers", *selection, *xdist)
    cases = {c["id"]: c for c in SOLVED + MISSED}
    assert _records(pytester.path, "r") == sorted(_item(cases[i]) for i in chosen)
    missed = sum(cases[i] in MISSED for i in chosen)
    result.assert_outcomes(passed=len(chosen) - missed, failed=missed)


def test_last_failed_reruns_the_failures_only(pytester: pytest.Pytester,
                                              xdist: list[str]) -> None:
    _write(pytester.path)
    first = pytester.runpytest("c.yaml", "test_plain.py", "-p", "no:randomly",
                               "--agent-run-name=one", *xdist)
    first.assert_outcomes(passed=13, failed=3)
    again = pytester.runpytest("c.yaml", "test_plain.py", "-p", "no:randomly", "--lf",
                               "--agent-run-name=two", *xdist)
    again.assert_outcomes(failed=3)
    assert _records(pytester.path, "two") == sorted(map(_item, MISSED))


@pytest.mark.parametrize("dist", ["loadfile", "loadscope", "worksteal"])
def test_other_distribution_modes_keep_full_collection(pytester: pytest.Pytester,
                                                       dist: str) -> None:
    _write(pytester.path)
    result = pytester.runpytest("c.yaml", "test_plain.py", "-p", "no:randomly", "-n", "2",
                                "--dist", dist, "--agent-run-name=r")
    result.assert_outcomes(passed=13, failed=3)
    collected = _collected(pytester.path)
    assert [w["share"] for w in collected.values()] == [None, None]
    assert all(len(w["ids"]) == 16 for w in collected.values())


def test_a_run_without_cases_installs_nothing(pytester: pytest.Pytester) -> None:
    (pytester.path / "test_plain.py").write_text(PLAIN)
    (pytester.path / "conftest.py").write_text(RECORD_COLLECTED + """

def pytest_xdist_make_scheduler(config, log):
    with open("scheduler.txt", "w") as out:
        out.write(",".join(sorted(name for name, _ in config.pluginmanager.list_name_plugin()
                                  if name and name.startswith("agentclinic-"))))
""")
    result = pytester.runpytest("test_plain.py", "-n", "2")
    result.assert_outcomes(passed=3, failed=1)
    assert (pytester.path / "scheduler.txt").read_text() == ""
    assert [w["share"] for w in _collected(pytester.path).values()] == [None, None]


def test_a_node_going_down_gives_back_its_share_and_hands_over_its_events() -> None:
    # Two branches each added a pytest_testnodedown to XdistHooks; the second definition
    # silently replaced the first, and a crashed worker's share was never given back.
    hooks = XdistHooks.__new__(XdistHooks)  # the hook alone, without a pytest session
    hooks.state = SimpleNamespace(events=RunEvents("main"), reports=None)  # type: ignore[assignment]
    hooks.shares = Shares(2)
    nodes = [object(), object()]
    for node in nodes:
        hooks.shares.assign(node)
    worker = RunEvents("gw0")
    worker.add({"process": "gw0", "category": "builtins:UserWarning", "message": "lost"})
    gone = SimpleNamespace(workeroutput={EVENTS_KEY: worker.to_json()})
    hooks.shares.release(nodes[0])
    hooks.shares.assign(gone)
    hooks.pytest_testnodedown(gone, None)
    assert hooks.shares.assign(object()) == [0, 2]  # the share came back
    extra: dict[str, Any] = {}
    with pytest.warns(UserWarning, match="lost"):
        hooks.state.events.emit(extra)
    assert extra["events"][0]["process"] == "gw0"


#: gw1 holds its collection back until gw0 has started an encounter (at most 20 s), and
#: every process names the cases whose doctor it made (an encounter starting).
WAIT_FOR_GW0 = RECORD_COLLECTED + """
import time


def pytest_agentclinic_make_agent(role, model, case, config):
    if role == "doctor":
        worker = getattr(config, "workerinput", {}).get("workerid", "main")
        with open(f"started-{worker}.txt", "a") as out:
            out.write(case.id + "\\n")


def pytest_collection_modifyitems(config):
    if getattr(config, "workerinput", {}).get("workerid") != "gw1":
        return
    deadline = time.monotonic() + 20
    while not os.path.exists("started-gw0.txt") and time.monotonic() < deadline:
        time.sleep(0.05)
    with open("gw1-waited.txt", "w") as out:
        out.write(str(os.path.exists("started-gw0.txt")))
"""


def test_a_worker_starts_its_first_encounters_before_the_slowest_collection(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    # xdist sends the first item once every worker's collection has reached the
    # controller: gw0 started no encounter until gw1 had collected (gw1 waited its 20 s).
    _write(pytester.path)
    (pytester.path / "conftest.py").write_text(WAIT_FOR_GW0)
    chosen = [c for c in SOLVED + MISSED if c["id"] not in ("t-03", "t-04")]
    result = pytester.runpytest("c.yaml", "test_plain.py", "-p", "no:randomly",
                                "--agent-run-name=r", "-k", "not t-03 and not t-04",
                                "--agent-concurrency=2", *xdist)
    result.assert_outcomes(passed=len(chosen) - len(MISSED) + 3, failed=len(MISSED) + 1)
    assert _records(pytester.path, "r") == sorted(map(_item, chosen))
    started = [line for p in sorted(pytester.path.glob("started-*.txt"))
               for line in p.read_text().splitlines()]
    # Each selected case played once, by one process; none deselected started ahead.
    assert sorted(started) == sorted(c["id"] for c in chosen)
    if xdist == ["-n", "2"]:
        assert (pytester.path / "gw1-waited.txt").read_text() == "True"


#: Which of the final reports' modules each process has imported when its first item runs.
_REPORT_MODULES = """
import sys
import pytest

WATCHED = ("pytest_agentclinic.plugin.reports", "pytest_agentclinic.report.rundir",
           "pytest_agentclinic.report.tables", "pytest_agentclinic.report.summary")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item):
    worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
    if not os.path.exists(f"modules-{worker}.json"):
        with open(f"modules-{worker}.json", "w") as out:
            json.dump([m for m in WATCHED if m in sys.modules], out)
"""


def test_a_worker_imports_none_of_the_final_reports(pytester: pytest.Pytester,
                                                    xdist: list[str]) -> None:
    # A worker imported the final reports' modules (23 modules, ~10 ms and 1.2 MB in each
    # of 8 workers), which only the run directory's owner uses.
    result, path = played(pytester, xdist)
    result.assert_outcomes(passed=10 + 3, failed=2 + 1)
    assert _records(path, "r") == sorted(map(_item, SOLVED + MISSED))
    imported = _written(path, "modules")
    if xdist == ["-n", "2"]:
        assert imported == {"gw0": [], "gw1": []}
    else:  # one process plays and reports
        assert "pytest_agentclinic.plugin.reports" in imported["main"]
