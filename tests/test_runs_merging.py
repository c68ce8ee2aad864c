"""runs.merging: the run owner parses each record as its item reports; the end of the run
only sorts and writes them, and a record whose report never arrived is still merged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import make_case, play_three_under, write_yaml_cases

from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.runs.merging import RunningMerge
from pytest_agentclinic.runs.results import RESULTS, ResultsStream, record_text

#: Counts the records parsed by the run's owner from its session's finish on.
COUNT_END_PARSES = """
import json
import pytest
from pytest_agentclinic.core.records import ResultRecord

parsed = {"at_end": 0}
ending = [False]
original = ResultRecord.model_validate_json.__func__

def counting(cls, *args, **kwargs):
    if ending[0]:
        parsed["at_end"] += 1
    return original(cls, *args, **kwargs)

ResultRecord.model_validate_json = classmethod(counting)

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    ending[0] = not hasattr(session.config, "workerinput")
    yield
    if ending[0]:
        with open("parsed-at-end.json", "w") as fh:
            json.dump(parsed, fh)
"""

#: The owner never hears of t-02's record: its reports lose it before anyone reads them.
LOSE_ONE = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_logreport(report):
    if "t-02" in report.nodeid and not hasattr(report, "_lost"):
        report.user_properties = [(n, v) for n, v in report.user_properties
                                  if n != "agentclinic_result"]
    yield
"""


def _nodeids(run_dir: Path) -> list[str]:
    return [json.loads(line)["nodeid"] for line in (run_dir / RESULTS).read_text().splitlines()]


def test_the_records_are_parsed_as_items_report_not_at_the_end(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    pytester.makeconftest(COUNT_END_PARSES)
    pytester.runpytest("c.yaml", "-p", "no:cacheprovider", "--agent-run-name=m",
                       *xdist).assert_outcomes(passed=4)
    assert json.loads((pytester.path / "parsed-at-end.json").read_text()) == {"at_end": 0}
    run_dir = pytester.path / "reports" / "m"
    nodeids = _nodeids(run_dir)
    assert nodeids == sorted(nodeids) and len(nodeids) == 4
    assert not list(run_dir.glob("results.*.jsonl"))  # the workers' files are merged
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["by_doctor"]["offline"]["n"] == 4


def test_a_record_whose_report_never_arrived_is_merged_from_the_files(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    pytester.makeconftest(LOSE_ONE)
    pytester.runpytest("c.yaml", "-p", "no:cacheprovider", "--agent-run-name=lost",
                       *xdist).assert_outcomes(passed=4)
    run_dir = pytester.path / "reports" / "lost"
    nodeids = _nodeids(run_dir)
    assert len(nodeids) == 4 and nodeids == sorted(nodeids)
    assert any("t-02" in n for n in nodeids)
    assert not list(run_dir.glob("results.*.jsonl"))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["by_doctor"]["offline"]["n"] == 4


def _record(i: int) -> ResultRecord:
    return ResultRecord(run="r", nodeid=f"c.yaml::t-{i:02d}", protocol="agentclinic",
                        case_id=f"t-{i:02d}", dataset="d", specialty="Dermatology",
                        models={"doctor": "offline"}, sample=0, turn_budget=4,
                        outcome="correct", expected="X", given="X", turns_used=1,
                        duration_s=0.1)


def test_a_controller_finds_its_workers_lines_and_sorts_them_at_the_end(
        tmp_path: Path) -> None:
    """Under xdist: the texts arrive in each worker's order, interleaved; nothing is written
    until the end, which sorts them and removes the workers' files."""
    workers = {w: ResultsStream(tmp_path, f"results.{w}.jsonl") for w in ("gw0", "gw1")}
    merge = RunningMerge(ResultsStream(tmp_path))
    for i, worker in ((3, "gw0"), (1, "gw1"), (2, "gw0"), (4, "gw1")):
        text = workers[worker].append(_record(i))
        merge.add(f"c.yaml::t-{i:02d}", text, worker)
        merge.add(f"c.yaml::t-{i:02d}", text, worker)  # its teardown's report carries it too
    assert not (tmp_path / RESULTS).exists()  # one copy of each record during the run
    for stream in workers.values():
        stream.close()
    records = merge.finish()
    assert [r.case_id for r in records] == ["t-01", "t-02", "t-03", "t-04"]
    assert _nodeids(tmp_path) == [r.nodeid for r in records]
    assert not list(tmp_path.glob("results.*.jsonl"))


def test_a_worker_line_that_never_arrived_is_read_from_its_file(tmp_path: Path) -> None:
    worker = ResultsStream(tmp_path, "results.gw0.jsonl")
    merge = RunningMerge(ResultsStream(tmp_path))
    for i in (1, 2):
        worker.append(_record(i))
    merge.add("c.yaml::t-02", record_text(_record(2)), "gw0")
    worker.close()
    assert [r.case_id for r in merge.finish()] == ["t-01", "t-02"]
    assert _nodeids(tmp_path) == ["c.yaml::t-01", "c.yaml::t-02"]


def test_one_process_sorts_the_lines_its_recorder_wrote(tmp_path: Path) -> None:
    stream = ResultsStream(tmp_path)
    merge = RunningMerge(stream)
    for i in (2, 1):
        text = stream.append(_record(i))
        merge.add(f"c.yaml::t-{i:02d}", text)
    assert [r.case_id for r in merge.finish()] == ["t-01", "t-02"]
    assert _nodeids(tmp_path) == ["c.yaml::t-01", "c.yaml::t-02"]


#: Records, in every process, how many objects the heap held frozen once the session had
#: finished, and once every plugin had unconfigured (pytest's last garbage collection runs
#: in its own pytest_unconfigure).
FREEZE_COUNTS = """
import gc, json
import pytest

seen = {}

@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_sessionfinish(session):
    yield
    seen["finished"] = gc.get_freeze_count()

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    seen["unconfigured"] = gc.get_freeze_count()
    name = getattr(config, "workerinput", {}).get("workerid", "main")
    with open(f"freeze-{name}.json", "w") as fh:
        json.dump(seen, fh)
"""


def test_the_heap_is_frozen_before_pytests_last_garbage_collection(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    play_three_under(pytester, FREEZE_COUNTS, "f", *xdist)
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("freeze-*.json")]
    assert seen and all(s["unconfigured"] > s["finished"] for s in seen)


#: Counts, in the run's owner, the calls of the reports' warm-up and what they were given.
COUNT_WARM_UPS = """
import json
import pytest
import pytest_agentclinic.plugin.reports as reports

calls = []
warm = reports.warm_reports

def counting(record):
    calls.append(record.nodeid)
    warm(record)

reports.warm_reports = counting

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    yield
    if not hasattr(session.config, "workerinput"):
        with open("warm-ups.json", "w") as fh:
            json.dump(calls, fh)
"""


def test_the_reports_code_is_warmed_once_while_the_encounters_play(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    play_three_under(pytester, COUNT_WARM_UPS, "w", *xdist)
    calls = json.loads((pytester.path / "warm-ups.json").read_text())
    assert len(calls) == 1 and calls[0] in _nodeids(pytester.path / "reports" / "w")
