"""runs.merging: the run owner parses each record as its item reports; the end of the run
only sorts and writes them, and a record whose report never arrived is still merged."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from helpers import make_case, play_three_under, write_yaml_cases

from pytest_agentclinic.core.measures import EncounterMeasures
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.transcript import Perception, Usage
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


#: In the run's owner: whether numpy was imported when each item's report arrived, and how
#: many xdist workers had finished by then (numpy, ~12.5 MB, is the final tables' alone).
WATCH_NUMPY = """
import json, sys
import pytest

seen = {"down": 0, "reports": []}

@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_testnodedown(node, error):
    seen["down"] += 1

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_logreport(report):
    seen["reports"].append(["numpy" in sys.modules, seen["down"]])
    yield

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        seen["at_finish"] = "numpy" in sys.modules
        with open("numpy-seen.json", "w") as fh:
            json.dump(seen, fh)
    yield
"""


def test_the_run_owner_imports_numpy_only_once_a_worker_has_finished(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """numpy is the final tables' (~12.5 MB): imported while every worker still held its
    items, it added to the process tree's peak. The tables' warm-up waits for the first
    worker to finish (without xdist: for the session's finish). In a process of its own:
    this one imported numpy already (conftest.py)."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 7)])
    pytester.makeconftest(WATCH_NUMPY)
    pytester.runpytest_subprocess("c.yaml", "-p", "no:cacheprovider", "--agent-run-name=np",
                       *xdist).assert_outcomes(passed=6)
    seen = json.loads((pytester.path / "numpy-seen.json").read_text())
    assert len(seen["reports"]) >= 6  # every item's reports, in the owner
    assert not any(numpy for numpy, down in seen["reports"] if not down)
    if not seen["down"]:
        assert not seen["at_finish"]
    summary = json.loads((pytester.path / "reports" / "np" / "summary.json").read_text())
    assert summary["by_doctor"]["offline"]["n"] == 6


def _full_record(i: int) -> ResultRecord:
    """A record as a played encounter's: a doctor whose calls took their own time, roles
    that made none, ratings, measures, and every third one with something of its own."""
    return _record(i).model_copy(update={
        "usage": {"doctor": Usage(calls=2, prompt_tokens=300 + i, completion_tokens=20 + i % 7,
                                  cost_usd=0.001 * i, latency_s=0.25 + i / 1000),
                  "patient": Usage(), "moderator": Usage()},
        "perception": Perception(confidence=10, compliance=9, consultation=10),
        "tests_requested": ["Vital signs", "Complete blood count"],
        "started_at": 1_700_000_000.0 + i, "duration_s": 1.5 + i / 100,
        "transcript": f"reports/r/transcripts/c__t-{i:02d}-{i * 7919:08x}.json",
        "conditions": {"urgency": "high"} if i % 3 == 0 else {},
        "given": "Y" if i % 3 == 0 else "X", "outcome": "incorrect" if i % 3 == 0 else "correct",
        "measures": EncounterMeasures(method="elicit-1", facts=5, facts_elicited=i % 5,
                                      key_facts=1, key_facts_elicited=1, questions=7,
                                      repeated_questions=0, redundant_questions=1,
                                      tests_ordered=2, test_spend_usd=12.5 * i,
                                      tests_unpriced=["Biopsy"], elicited_at={1: 2, 3: i}),
    })


@pytest.mark.parametrize("parse_after", [None, 0, 7])
def test_the_records_held_while_the_run_plays_come_back_the_same(
        tmp_path: Path, parse_after: int | None) -> None:
    """Held compressed while the workers play, parsed once one finishes (``parse_after``
    records in; None: at the end): each record equals its line parsed anew, field by field,
    with the same fields given, and results.jsonl holds each line as its worker wrote it."""
    worker = ResultsStream(tmp_path, "results.gw0.jsonl")
    merge = RunningMerge(ResultsStream(tmp_path))
    texts = {}
    for count, i in enumerate(range(20, 0, -1)):
        if count == parse_after:
            merge.parse_held()
        text = texts[f"c.yaml::t-{i:02d}"] = worker.append(_full_record(i))
        merge.add(f"c.yaml::t-{i:02d}", text, "gw0")
    worker.close()
    records = merge.finish()
    assert [r.nodeid for r in records] == sorted(texts)
    for record in records:
        fresh = ResultRecord.model_validate_json(texts[record.nodeid])
        assert record == fresh
        assert record.model_dump_json() == texts[record.nodeid]
        assert record.model_fields_set == fresh.model_fields_set
        assert record.usage["doctor"].model_fields_set == fresh.usage["doctor"].model_fields_set
        assert record.measures is not None and fresh.measures is not None
        assert record.measures.model_fields_set == fresh.measures.model_fields_set
    assert (tmp_path / RESULTS).read_text() == "".join(texts[n] + "\n" for n in sorted(texts))


def _held_per_record(add: object, texts: list[tuple[str, str]]) -> float:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for nodeid, text in texts:
            add(nodeid, text, "gw0")  # type: ignore[operator]
        return (tracemalloc.get_traced_memory()[0] - before) / len(texts)
    finally:
        tracemalloc.stop()


def test_the_records_held_while_every_worker_plays_are_compressed(tmp_path: Path) -> None:
    """The run's owner held each arrived record parsed: ~3.2 KB a record, its largest
    growth at 10,000 encounters. While every worker plays it holds a fifth of that at most;
    once a worker has finished (:meth:`RunningMerge.parse_held`) it holds them parsed."""
    worker = ResultsStream(tmp_path, "results.gw0.jsonl")
    texts = [(f"c.yaml::t-{i:02d}", worker.append(_full_record(i))) for i in range(400)]
    worker.close()
    held = RunningMerge(ResultsStream(tmp_path))
    parsed = RunningMerge(ResultsStream(tmp_path))
    parsed.parse_held()
    _held_per_record(held.add, texts[:50])  # the first records' shared parts
    _held_per_record(parsed.add, texts[:50])
    assert _held_per_record(held.add, texts[50:]) < _held_per_record(parsed.add, texts[50:]) / 5
    assert [r.nodeid for r in held.finish()] == sorted(nodeid for nodeid, _text in texts)
