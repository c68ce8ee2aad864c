"""The C library's malloc hands back the pages Python freed (issue 37: peak memory).

glibc keeps freed pages in each malloc arena, and makes an arena per thread that allocates
while another holds one: each process of a run keeps to a few arenas and trims its heap once
collected and every ``TRIM_EVERY`` items (``item_memory.ReturnFreedMemory``).
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.plugin import item_memory
from pytest_agentclinic.plugin.item_memory import ReturnFreedMemory, glibc_malloc

#: A process that plays encounters: no xdist, or an xdist worker.
PLAYING: pytest.Config = SimpleNamespace(option=SimpleNamespace(dist="no"))  # type: ignore[assignment]


#: The large-block threshold kept at glibc's default (its dynamic raise left off).
MMAP = ("mallopt", -3, 128 * 1024)


class FakeMalloc:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad, 0))
        return 1


def test_a_process_keeps_to_few_arenas_and_trims_once_collected_and_every_few_items(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    malloc = FakeMalloc()
    plugin = ReturnFreedMemory(malloc)
    plugin.pytest_configure(PLAYING)
    assert malloc.calls == [("mallopt", -8, item_memory.ARENAS), MMAP]
    _finish(plugin)
    for index in range(2 * item_memory.TRIM_EVERY + 1):
        plugin.pytest_runtest_logfinish(nodeid=f"c.yaml::t{index}", location=None)
    assert malloc.calls[2:] == [("malloc_trim", 0, 0)] * 3
    assert plugin.trims == 3


def test_xdist_s_controller_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """It plays no encounter; its threads are execnet's."""
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    malloc = FakeMalloc()
    plugin = ReturnFreedMemory(malloc)
    plugin.pytest_configure(SimpleNamespace(option=SimpleNamespace(dist="load")))  # type: ignore[arg-type]
    _finish(plugin)
    plugin.pytest_runtest_logfinish(nodeid="c.yaml::t", location=None)
    assert malloc.calls == [] and plugin.trims == 0
    worker = SimpleNamespace(option=SimpleNamespace(dist="load"), workerinput={})
    ReturnFreedMemory(malloc).pytest_configure(worker)  # type: ignore[arg-type]
    assert malloc.calls == [("mallopt", -8, item_memory.ARENAS), MMAP]


def _finish(plugin: ReturnFreedMemory) -> None:
    """The collection's end, as pluggy calls a wrapper: it trims after the other hooks."""
    wrapper = plugin.pytest_collection_finish(session=None)  # type: ignore[arg-type]
    next(wrapper)
    calls = plugin.trims
    with pytest.raises(StopIteration):
        wrapper.send(None)
    assert plugin.trims in (calls, calls + 1)


def test_the_environment_s_arena_limit_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    malloc = FakeMalloc()
    ReturnFreedMemory(malloc).pytest_configure(PLAYING)
    assert malloc.calls == [MMAP]
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    malloc = FakeMalloc()
    ReturnFreedMemory(malloc).pytest_configure(PLAYING)
    assert malloc.calls == []


def test_a_worker_started_with_the_limit_takes_it_out_of_its_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", str(item_memory.ARENAS))
    malloc = FakeMalloc()
    worker = SimpleNamespace(option=SimpleNamespace(dist="load"),
                             workerinput={item_memory.ARENAS_SET_KEY: True})
    ReturnFreedMemory(malloc).pytest_configure(worker)  # type: ignore[arg-type]
    assert "MALLOC_ARENA_MAX" not in os.environ
    assert malloc.calls == [MMAP]  # glibc read the limit at the start


def test_elsewhere_than_glibc_nothing_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "confstr", lambda name: None)
    assert glibc_malloc() is None
    plugin = ReturnFreedMemory()
    plugin.pytest_configure(PLAYING)
    _finish(plugin)
    assert plugin.trims == 0




TRIMS = """
import json

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    name = getattr(session.config, "workerinput", {}).get("workerid", "main")
    plugin = session.config.pluginmanager.getplugin("agentclinic-return-freed")
    with open(f"trims-{name}.json", "w") as out:
        json.dump(None if plugin is None else plugin.trims, out)
"""


@pytest.mark.skipif(not item_memory.is_glibc(), reason="the C library is not glibc")
def test_every_process_of_a_run_trims_its_heap(pytester: pytest.Pytester,
                                               xdist: list[str]) -> None:
    assert glibc_malloc() is not None
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i, "Neurology") for i in range(1, 4)])
    pytester.makeconftest(TRIMS)
    result = pytester.runpytest("c.yaml", "-p", "no:cacheprovider", *xdist)
    assert result.ret == 0
    trims = {p.name: json.loads(p.read_text()) for p in pytester.path.glob("trims-*.json")}
    workers = int(xdist[1]) if xdist else 0
    assert set(trims) == {"trims-main.json"} | {f"trims-gw{i}.json" for i in range(workers)}
    # Every process that plays encounters trimmed once collected; xdist's controller, which
    # plays none, never.
    assert all(count >= 1 for name, count in trims.items() if name != "trims-main.json")
    assert (trims["trims-main.json"] == 0) == bool(workers)


def _worker_report(index: int) -> pytest.TestReport:
    """A passed call's report as xdist's controller has it: every string decoded anew."""
    from execnet.gateway_base import dumps_internal, loads_internal

    name = f"t-{index}[x]"
    data = pytest.TestReport(
        nodeid=f"c.yaml::{name}", location=("c.yaml", 0, name), keywords={},
        outcome="passed", longrepr=None, when="call", duration=0.5)._to_json()
    data.update(worker_id="gw1", testrun_uid="f" * 32, item_index=index)
    return pytest.TestReport._from_json(loads_internal(dumps_internal(data)))


def test_the_controller_keeps_one_string_for_each_repeated_field_of_its_reports() -> None:
    """xdist's controller decodes every report's strings anew and pytest keeps each passed
    call's report to the end: its outcome, phase, worker, run id and file are one string each
    over the run's reports, the rest of each report as it was."""
    from pytest_agentclinic.plugin.item_memory import ReleaseReported

    plugin = ReleaseReported()
    plugin.pytest_configure(SimpleNamespace(pluginmanager=SimpleNamespace(  # type: ignore[arg-type]
        getplugin=lambda name: None)))
    first, second = _worker_report(1), _worker_report(2)
    assert first.outcome is not second.outcome  # as decoded
    for report in (first, second):
        wrapper = plugin.pytest_runtest_logreport(report)
        next(wrapper)
        with pytest.raises(StopIteration):
            wrapper.send(None)
    for name in ("outcome", "when", "worker_id", "testrun_uid"):
        assert getattr(first, name) is getattr(second, name)
    assert first.location[0] is second.location[0]
    assert (first.outcome, first.when) == ("passed", "call")
    assert first.location == ("c.yaml", 0, "t-1[x]")
    assert (second.nodeid, second.location[2], second.worker_id) == (
        "c.yaml::t-2[x]", "t-2[x]", "gw1")


ARENAS_SEEN = """
import json, os, subprocess, sys


def test_arenas(worker_id):
    with open("/proc/self/environ", "rb") as fh:
        at_start = [v for v in fh.read().split(b"\\0") if v.startswith(b"MALLOC_ARENA_MAX=")]
    child = subprocess.run([sys.executable, "-c",
                            "import os; print(os.environ.get('MALLOC_ARENA_MAX'))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    with open(f"arenas-{worker_id}.json", "w") as out:
        json.dump({"at_start": [v.decode() for v in at_start],
                   "now": os.environ.get("MALLOC_ARENA_MAX"), "child": child}, out)
"""


@pytest.mark.skipif(not item_memory.is_glibc(), reason="the C library is not glibc")
def test_xdist_workers_start_with_one_arena_and_no_test_inherits_the_limit(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    # mallopt in a worker's configure came after execnet's thread had an arena of its own
    # (~3 MB of a worker's free pages kept): glibc reads the limit at a process's start.
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i, "Neurology") for i in range(1, 3)])
    pytester.makepyfile(test_arenas=ARENAS_SEEN)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    try:
        result = pytester.runpytest("c.yaml", "test_arenas.py", "-p", "no:cacheprovider",
                                    "-p", "no:randomly", *xdist)
        assert "MALLOC_ARENA_MAX" not in os.environ  # the controller's is back as it was
    finally:
        monkeypatch.undo()
    result.assert_outcomes(passed=3)
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("arenas-*.json")]
    assert len(seen) == 1
    worker = seen[0]
    # Not in what the test sees, nor in what it starts.
    assert (worker["now"], worker["child"]) == (None, "None")
    if xdist[-1:] == ["2"]:  # the worker was started with it (without xdist the test runs
        # in this process, which limits its arenas itself: mallopt)
        assert worker["at_start"] == [f"MALLOC_ARENA_MAX={item_memory.ARENAS}"]


@pytest.mark.skipif(not item_memory.is_glibc(), reason="the C library is not glibc")
def test_the_user_s_arena_limit_reaches_the_workers_unchanged(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1, "Neurology")])
    pytester.makepyfile(test_arenas=ARENAS_SEEN)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    result = pytester.runpytest("c.yaml", "test_arenas.py", "-p", "no:cacheprovider",
                                "-p", "no:randomly", "-n", "2")
    result.assert_outcomes(passed=2)
    assert os.environ["MALLOC_ARENA_MAX"] == "4"
    (worker,) = [json.loads(p.read_text()) for p in pytester.path.glob("arenas-*.json")]
    assert worker == {"at_start": ["MALLOC_ARENA_MAX=4"], "now": "4", "child": "4"}
