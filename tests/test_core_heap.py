"""What a run lets go of as it goes, and that what it keeps is the same.

Peak memory is measured by ``benchmarks/bench_scale.py``; these tests prove that the ways
memory is saved (records read back from results.jsonl, shared parts of loaded records, case
files built a case at a time, items submitted a bounded lead ahead, items and reports
released once logged) leave the results as they were.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from helpers import make_case, osce_line, play_three_under, write_yaml_cases

from pytest_agentclinic.cases import yaml_stream
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.transcript import Perception, Usage
from pytest_agentclinic.plugin.scheduling import Ahead
from pytest_agentclinic.report.rundir import ResultsStream, load_records, write_results


def record(case: str, **over: Any) -> ResultRecord:
    fields: dict[str, Any] = dict(
        protocol="agentclinic", run="r", nodeid=f"f.yaml::{case}[x]", case_id=case, dataset="d",
        specialty="Neurology",
        models={"doctor": "offline", "patient": "offline"}, sample=0, turn_budget=20,
        outcome="correct", expected="x", given="x", turns_used=4, duration_s=1.0,
        usage={"doctor": Usage(calls=1, prompt_tokens=5), "patient": Usage()},
        perception=Perception(confidence=5))
    fields.update(over)
    return ResultRecord(**fields)


# --- results.jsonl -----------------------------------------------------------------------

def test_the_stream_gives_back_its_records_in_item_order(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text(record("old").model_dump_json() + "\n")
    stream = ResultsStream(tmp_path)
    written = [record(c) for c in ("c", "a", "b")]
    for r in written:
        stream.append(r)
    assert written[0].nodeid in stream and "f.yaml::d[x]" not in stream
    back = stream.finish()
    assert back == sorted(written, key=lambda r: r.nodeid)
    # The file is rewritten in item order with this run's records only (a reused run name).
    assert load_records(tmp_path) == back
    assert ResultsStream(tmp_path / "none").finish() == []


def test_loaded_records_that_share_equal_parts_stay_independent(tmp_path: Path) -> None:
    written = [record("a"), record("b", usage={"doctor": Usage(calls=2), "patient": Usage()})]
    write_results(tmp_path, written)
    first, second = load_records(tmp_path)
    assert [first, second] == written
    first.given = "changed"
    first.usage["patient"] = Usage(calls=9)
    assert second == written[1] and second.usage["patient"] == Usage()
    alone = ResultRecord.model_validate_json(written[1].model_dump_json())
    assert second.model_fields_set == alone.model_fields_set
    copy = second.model_copy(update={"given": "y"})
    assert copy.given == "y" and second.given == "x"
    assert [r.model_dump_json() for r in load_records(tmp_path)] == [
        r.model_dump_json() for r in written]


def test_loaded_records_share_equal_containers_and_stay_equal(tmp_path: Path) -> None:
    written = [record("a", tests_requested=["CBC"]), record("b", tests_requested=["CBC"]),
               record("c", models={"doctor": "m"}, given="y")]
    write_results(tmp_path, written)
    a, b, c = load_records(tmp_path)
    assert [a, b, c] == written
    # Every record names the same models and tests: one dict and one list for them all.
    assert a.models is b.models and a.tests_requested is b.tests_requested
    assert a.conditions is b.conditions and a.served is b.served
    # Equal contents of another type, or other contents, are not shared.
    assert c.models == {"doctor": "m"} and c.models is not a.models
    assert a.conditions == {} and a.refusals == [] and a.served == {}
    assert a.given is a.expected and c.given == "y"
    a.models = {"doctor": "other"}  # replaced, never changed in place
    assert b.models == written[1].models


def test_the_caches_of_per_text_work_are_bounded() -> None:
    """Each new case's text entered every cache: they held ~7 KB an item at 8,000 items."""
    from pytest_agentclinic.core import text
    from pytest_agentclinic.grading import wording
    from pytest_agentclinic.grading.reading import extract, mcq
    from pytest_agentclinic.grading.terms import equivalence, kinds, truth_forms
    from pytest_agentclinic.metrics import facts

    caches = [equivalence.compare, extract.extract, mcq._choose, truth_forms.forms_of,
              wording.root, wording.lone_slip, kinds.kind]
    assert all(c.cache_info().maxsize == text.CACHE_ENTRIES for c in caches)
    # One encounter's texts (utterances, facts): fewer (core.text.TEXT_ENTRIES).
    one_off = [text.tokens, text.content, facts.tokens]
    assert all(c.cache_info().maxsize == text.TEXT_ENTRIES for c in one_off)
    for i in range(text.CACHE_ENTRIES + 100):
        kinds.kind(f"condition{i} disease")
        text.tokens(f"I have had problem number {i} for two weeks.")
    assert kinds.kind.cache_info().currsize == text.CACHE_ENTRIES
    assert text.tokens.cache_info().currsize == text.TEXT_ENTRIES


def test_clear_caches_empties_every_per_text_cache_and_they_fill_again() -> None:
    """The final reports reuse what the caches held: ~1 KB an item of an 8,000-item run."""
    from pytest_agentclinic.core import text
    from pytest_agentclinic.grading.terms import kinds

    kinds.kind("acute bronchitis")
    text.tokens("I have had a cough for two weeks.")
    assert kinds.kind.cache_info().currsize and text.tokens.cache_info().currsize
    text.clear_caches()
    assert kinds.kind.cache_info().currsize == text.tokens.cache_info().currsize == 0
    assert kinds.kind("acute bronchitis") == kinds.kind("acute bronchitis")
    assert kinds.kind.cache_info().hits == 1


def test_a_run_lets_the_per_text_caches_go_before_its_reports(
        pytester: pytest.Pytester) -> None:
    """In this process (no -n): the caches the encounters filled are empty once it ends."""
    from pytest_agentclinic.core import text

    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 3)])
    text.tokens("a text from before the run")
    assert text.tokens.cache_info().currsize > 0
    pytester.runpytest_inprocess("c.yaml", "-p", "no:cacheprovider",
                                 "--agent-run-name=caches").assert_outcomes(passed=2)
    assert text.tokens.cache_info().currsize == 0


# --- case files --------------------------------------------------------------------------
def test_the_cases_of_a_file_share_equal_sets_of_given_fields(tmp_path: Path) -> None:
    """Pydantic keeps, per model, the set of the fields its input gave: ~1.1 KB a case held
    by each of 8,000 items, when all name the same fields. Case models are frozen, so one
    set stands for every equal one."""
    from pytest_agentclinic.cases.loaders import load_case_file
    from pytest_agentclinic.core.case import Case

    other = make_case(3, difficulty="hard")
    del other["patient"]["social_history"]
    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), make_case(2), other])
    (_, a), (_, b), (_, c) = load_case_file(path).cases
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert a.patient.__pydantic_fields_set__ is b.patient.__pydantic_fields_set__
    assert a.patient.symptoms.__pydantic_fields_set__ is b.patient.symptoms.__pydantic_fields_set__
    # Another set of given fields keeps its own, and every set says what its input gave.
    assert c.__pydantic_fields_set__ is not a.__pydantic_fields_set__
    for case in (a, b, c):
        alone = Case.model_validate(case.model_dump(exclude_unset=True))
        assert case.model_fields_set == alone.model_fields_set
        assert case.patient.model_fields_set == alone.patient.model_fields_set
    assert "difficulty" in c.model_fields_set and "difficulty" not in a.model_fields_set
    assert c.patient.__pydantic_fields_set__ is not a.patient.__pydantic_fields_set__
    copy = a.model_copy(update={"diagnosis": "x"})
    assert copy.__pydantic_fields_set__ is not a.__pydantic_fields_set__
    assert b.model_fields_set == a.model_fields_set


def test_cases_relabelled_by_a_sidecar_share_their_sets_too(tmp_path: Path) -> None:
    from pytest_agentclinic.cases.loaders import load_case_file

    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1), make_case(2)])
    (tmp_path / "c.specialties.json").write_text(json.dumps(
        {"cases": {"0": {"specialty": "Neurology"}, "1": {"specialty": "Neurology"}}}))
    (_, a), (_, b) = load_case_file(path).cases
    assert a.specialty == b.specialty == "Neurology"
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert "specialty" in a.model_fields_set


def test_only_frozen_models_share_their_parts() -> None:
    """An unfrozen model's set grows on assignment: shared, it would grow for every model."""
    from pydantic import BaseModel

    from pytest_agentclinic.core.heap import FrozenParts

    class Loose(BaseModel):
        a: int = 0
        b: int = 0

    shared = FrozenParts()
    one, two = Loose(a=1), Loose(a=2)
    shared.share(one)
    shared.share(two)
    one.b = 3
    assert two.model_fields_set == {"a"} and one.model_fields_set == {"a", "b"}


def test_the_cases_of_a_file_share_equal_strings_keys_included(tmp_path: Path) -> None:
    """Each JSONL record is parsed on its own: the names every case repeats were a string
    apiece per case (~1 KB a case of AgentClinic-MedQA and of CRAFT-MD's vignettes)."""
    from pytest_agentclinic.cases.loaders import load_case_file

    path = tmp_path / "medqa.jsonl"
    path.write_text("\n".join(osce_line(i) for i in range(3)) + "\n")
    loaded = load_case_file(path)
    (_, a), (_, b), (_, c) = loaded.cases
    assert a.patient.demographics is b.patient.demographics is c.patient.demographics
    assert a.patient.symptoms.primary is b.patient.symptoms.primary
    assert a.specialty is b.specialty and a.dataset is b.dataset
    (key_a, vitals_a), = a.physical_exam.items()
    (key_b, vitals_b), = b.physical_exam.items()
    assert key_a is key_b and vitals_a == vitals_b
    assert next(iter(vitals_a)) is next(iter(vitals_b))  # nested keys too
    # Equal, not the same case: what differs stays each case's own.
    assert a.diagnosis != b.diagnosis and a.patient.history != b.patient.history
    alone = load_case_file(_one_line_copy(path, tmp_path))
    assert [c.model_dump() for _, c in alone.cases] == [a.model_dump()]


def _one_line_copy(path: Path, folder: Path) -> Path:
    copy = folder / "one" / path.name
    copy.parent.mkdir()
    copy.write_text(path.read_text().splitlines()[0] + "\n")
    return copy


DOCUMENTS = {
    "cases": "dataset: d\ncases:\n  - {id: a, tests: [x, y]}\n  - id: b\n",
    "a list": "- {id: a}\n- [1, 2]\n",
    "anchors across cases": "cases:\n - &c {id: a, d: [1]}\n - *c\n - {<<: *c, id: b}\nlast: *c\n",
    "a merge key at the top": "base: &b {x: 1}\n<<: *b\ncases: [1, 2]\n",
    "an anchored list": "cases: &l [1, 2]\nagain: *l\n",
    "tags": "one: !!set {a, b}\ntwo: !!omap [{a: 1}]\nthree: !!seq [1]\n",
    "a tagged top": "!!omap\n- a: 1\n",
    "keys of other types": "1: [a]\ntrue: [b]\n'cases': [c]\n",
    "a scalar": "hello\n",
    "empty": "",
    "comments only": "# nothing\n",
}


@pytest.mark.parametrize("text", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_case_files_are_built_as_yaml_load_builds_them(text: str) -> None:
    assert yaml_stream.load(text) == yaml.load(text, Loader=yaml.SafeLoader)


def test_a_repeated_key_is_refused_where_yaml_load_keeps_the_last() -> None:
    text = "cases: [1]\ncases: [2, 3]\n"
    assert yaml.load(text, Loader=yaml.SafeLoader) == {"cases": [2, 3]}
    with pytest.raises(yaml_stream.DuplicateKey) as got:
        yaml_stream.load(text)
    mark = got.value.problem_mark
    assert got.value.key == "cases" and mark is not None and mark.line == 1


@pytest.mark.parametrize("text", ["a: 1\n---\nb: 2\n", "cases:\n - [1,\n - 2\n"])
def test_a_bad_case_file_raises_what_yaml_load_raises(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.load(text, Loader=yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError) as got:
        yaml_stream.load(text)
    assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]
    assert got.value.problem_mark.line == expected.value.problem_mark.line  # type: ignore[attr-defined]


# --- scheduling --------------------------------------------------------------------------

def test_each_item_is_submitted_once_and_a_bounded_lead_ahead() -> None:
    items = [object() for _ in range(50)]
    session = SimpleNamespace(items=items)
    ahead = Ahead(lead=8)
    handed: list[object] = []
    for i, item in enumerate(items):
        handed += ahead(session, item)  # type: ignore[arg-type]
        later = len(handed) - i - 1  # submitted, not run yet
        assert min(4, len(items) - i - 1) <= later <= 8
    assert handed == items
    assert ahead(session, items[-1]) == []  # type: ignore[arg-type]  # a rerun: nothing new
    stranger = object()
    assert ahead(session, stranger) == [stranger]  # type: ignore[arg-type]


# --- items and reports -------------------------------------------------------------------

#: Writes, per process, what the items and the reports still hold once the session ends.
HOLDINGS = """
import json, os
from pytest_agentclinic.plugin.item import EncounterItem

def released(item):
    try:
        item.spec
    except AttributeError:
        return True
    return False

def pytest_sessionfinish(session):
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    reports = [r for rs in (tr.stats.values() if tr else []) for r in rs
               if hasattr(r, "user_properties")]
    items = [i for i in session.items if isinstance(i, EncounterItem)]
    name = getattr(session.config, "workerinput", {}).get("workerid", "main")
    with open(f"holdings-{name}.json", "w") as fh:
        json.dump({"reports": len(reports),
                   "reports_with_record": sum(any(n == "agentclinic_result"
                                                  for n, _ in r.user_properties)
                                              for r in reports),
                   "items": len(items), "released": sum(map(released, items)),
                   "items_with_record": sum(bool(i.user_properties) for i in items),
                   "items_with_path": sum(i.transcript_path is not None for i in items),
                   "marks": len({id(m) for i in items for m in i.own_markers}),
                   "reports_with_keywords": sum(bool(r.keywords) for r in reports)}, fh)
"""


def test_items_and_reports_let_the_record_go_once_logged_and_junit_keeps_it(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    play_three_under(pytester, HOLDINGS, "rel", "--junitxml=j.xml", *xdist)
    holdings = {p.stem: json.loads(p.read_text()) for p in pytester.path.glob("holdings-*.json")}
    # Under xdist each worker holds (and runs) its share of the cases.
    assert sum(h["released"] for h in holdings.values()) == 3
    assert sum(h["items_with_record"] + h["reports_with_record"]
               for h in holdings.values()) == 0
    # pytest keeps every report for its summary: the calls' (a passed setup's or teardown's
    # is read only for its captured output, and these have none).
    assert holdings["holdings-main"]["reports"] == 3
    # Nor the transcript's path (the record names it), nor a mark of its own per item.
    assert sum(h["items_with_path"] for h in holdings.values()) == 0
    assert all(h["marks"] <= 1 for h in holdings.values())  # one specialty: one mark
    # Nor the keywords, in the process that played the item or in xdist's controller.
    assert holdings["holdings-main"]["reports_with_keywords"] == 0
    lines = (pytester.path / "reports" / "rel" / "results.jsonl").read_text().splitlines()
    properties = [p.get("value") for p in ET.parse(pytester.path / "j.xml").iter("property")
                  if p.get("name") == "agentclinic_result"]
    assert sorted(json.loads(v)["nodeid"] for v in properties if v) == [
        json.loads(line)["nodeid"] for line in lines]
