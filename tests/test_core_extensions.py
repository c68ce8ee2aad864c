"""The extension API (issue 25): a protocol is labelled by its own name, the core takes what
is graded and measured from the protocol, vocabularies are open, case formats and report
tables are registries, and an installed distribution (tests/example_triage) plugs a third
protocol in through entry points, read by the pytest plugin and the CLI alike."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, results, write_yaml_cases
from pydantic import ValidationError

from pytest_agentclinic import api
from pytest_agentclinic.core.transcript import ItemHeader
from pytest_agentclinic.protocols.agentclinic import AgentClinic

EXAMPLE = Path(__file__).parent / "example_triage"
TRIAGE_TITLE = "triage: under- and over-triage by expected urgency"
#: The HTML page's card title of the triage table (cards start with a capital).
TRIAGE_CARD = "Triage: under- and over-triage by expected urgency"
triage_installed = pytest.mark.skipif(
    not any(p.name == "triage" for p in entry_points(group="pytest_agentclinic.protocols")),
    reason="tests/example_triage is not installed (CI installs it: pip install "
           "./tests/example_triage)")

# --------------------------------------------------------------------- the protocol's name


def test_a_header_has_no_default_protocol() -> None:
    with pytest.raises(ValidationError, match="protocol"):
        ItemHeader(case_id="c", dataset="d", specialty="s",  # type: ignore[call-arg]
                   models={}, sample=0, turn_budget=1)


def test_a_subclass_must_name_itself() -> None:
    class Unnamed(AgentClinic):
        pass

    with pytest.raises(ValueError, match="must set its own `name`"):
        api.register_protocol(Unnamed)


SUBCLASS = '''
from pytest_agentclinic import api
from pytest_agentclinic.protocols.agentclinic import AgentClinic


class MyClinic(AgentClinic):
    name = "myclinic"

    def tables(self, records, resamples):
        return [api.Table("myclinic: every case", ["case"], [[r.case_id] for r in records])]


api.register_protocol(MyClinic)
'''


def test_a_subclassed_protocol_is_labelled_and_reported_by_its_own_name(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    pytester.makeconftest(SUBCLASS)
    run = pytester.runpytest("c.yaml", "--agent-protocol=myclinic", "-p", "no:cacheprovider",
                             "--agent-run-name=m", *xdist)
    run.assert_outcomes(passed=2)
    assert {r["protocol"] for r in results(pytester.path).values()} == {"myclinic"}
    transcript = next((pytester.path / "reports" / "m" / "transcripts").glob("*t-01*"))
    assert json.loads(transcript.read_text())["protocol"] == "myclinic"
    run.stdout.fnmatch_lines(["*myclinic: every case*"])

# --------------------------------------------------------------------- open vocabularies


def test_records_keep_roles_and_kinds_a_protocol_adds() -> None:
    said = api.Utterance(turn=1, role="nurse", kind="vitals", text="BP 80/40", model="m")
    t = api.Transcript(protocol="triage", case_id="c", dataset="d", specialty="s",
                       models={"nurse": "m"}, sample=0, turn_budget=2, utterances=[said])
    again = api.Transcript.model_validate_json(t.model_dump_json())
    assert (again.protocol, again.utterances[0].role, again.utterances[0].kind) == (
        "triage", "nurse", "vitals")
    assert set(again.usage_by_role()) == {"nurse"}
    with pytest.raises(ValidationError):
        api.Utterance(turn=1, role="", kind="vitals", text="x", model="m")


def test_a_case_has_an_open_typed_metadata_map() -> None:
    base = {"id": "c", "dataset": "d", "objective": "o", "patient": {}, "diagnosis": "x"}
    case = api.Case.model_validate({**base, "metadata": {"urgency": "emergent",
                                                         "scores": [1, 2.5, None]}})
    assert case.metadata == {"urgency": "emergent", "scores": [1, 2.5, None]}
    with pytest.raises(ValidationError):
        api.Case.model_validate({**base, "metadata": {"when": object()}})
    with pytest.raises(ValidationError):  # the other fields stay closed: a typo is an error
        api.Case.model_validate({**base, "urgncy": "emergent"})

# --------------------------------------------------------------------- registries


def _pipe_reader(path: Path, text: str) -> Any:
    for line, row in enumerate(text.splitlines(), 1):
        case_id, diagnosis = row.split("|")
        yield line, {"id": case_id, "objective": "o", "patient": {}, "diagnosis": diagnosis}


def test_a_case_format_is_registered_by_suffix(tmp_path: Path) -> None:
    api.register_case_format(".pipe", _pipe_reader)
    (tmp_path / "a.pipe").write_text("c-1|Gout\nc 2|Gout\n")
    cases, errors = api.load_cases(tmp_path / "a.pipe")
    assert [c.id for c in cases] == ["c-1"]
    assert [(e.line, e.field) for e in errors] == [(2, "id")]  # validated like any case
    with pytest.raises(ValueError, match="built in"):
        api.register_case_format(".yaml", _pipe_reader)


def test_a_failing_format_reader_is_one_error_for_its_file(tmp_path: Path) -> None:
    def broken(path: Path, text: str) -> Any:
        raise KeyError("oops")

    api.register_case_format("broken", broken)
    (tmp_path / "a.broken").write_text("x\n")
    cases, errors = api.load_cases(tmp_path / "a.broken")
    assert cases == [] and len(errors) == 1 and "KeyError" in errors[0].message


def _record(protocol: str, case_id: str) -> api.ResultRecord:
    return api.ResultRecord(protocol=protocol, case_id=case_id, dataset="d", specialty="s",
                            models={"doctor": "offline"}, sample=0, turn_budget=1, run="r",
                            nodeid=f"x::{case_id}", outcome="correct", expected="e",
                            given="e", turns_used=1, duration_s=0.0)


def test_report_tables_are_registered_by_protocol(tmp_path: Path) -> None:
    def count(records: Any, resamples: int) -> list[api.Table]:
        return [api.Table("toolbox: records", ["n"], [[str(len(records))]])]

    api.register_report_tables("toolbox", count)
    records = [_record("toolbox", "a"), _record("toolbox", "b"), _record("other", "c")]
    path = api.write_records(tmp_path, records)
    assert api.read_records(path) == records
    tables = {t.title: t for t in api.build_report(api.read_records(tmp_path), 100)}
    assert tables["toolbox: records"].rows == [["2"]]  # only its own protocol's records

def test_report_says_which_protocols_of_the_records_are_not_installed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_agentclinic.cli import main

    api.write_records(tmp_path, [_record("ghost", "a"), _record("agentclinic", "b")])
    assert main(["report", str(tmp_path), "--resamples=100", "--no-html"]) == 0
    err = capsys.readouterr().err
    assert "protocol 'ghost' is not installed" in err and "'agentclinic'" not in err


def test_report_conditions_are_open_to_a_protocols_own() -> None:
    from pytest_agentclinic.report.conditions import check_gate_on, varied_fields

    records = [_record("triage", f"c{i}").model_copy(
        update={"conditions": {"scale": scale}}) for i in range(4) for scale in ("esi3", "esi5")]
    assert varied_fields(records) == ("scale",)
    by_condition = next(t for t in api.build_report(records, 100)
                        if t.title == "accuracy by condition")
    assert sorted(row[1] for row in by_condition.rows) == ["scale=esi3", "scale=esi5"]
    assert "pooled over 2 scale values" in api.build_report(records, 100)[0].title
    assert check_gate_on(["scale=esi3"], ("scale",)) == ("scale=esi3",)
    with pytest.raises(ValueError, match="FIELD one of"):
        check_gate_on(["scale=esi3"])


# --------------------------------------------------------------------- the stable api


class _Oracle:
    model = "oracle"
    prompt_version = "1"

    async def respond(self, view: api.TurnView) -> api.Reply:
        return api.Reply("DIAGNOSIS READY: " + view.case.diagnosis)


def test_play_encounter_plays_one_case_with_the_agents_given(tmp_path: Path) -> None:
    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(1)])
    (case,), errors = api.load_cases(path)
    assert errors == []
    t = asyncio.run(api.play_encounter("agentclinic", case, {"doctor": _Oracle()},
                                       turn_budget=5))
    assert (t.protocol, t.outcome, t.models["doctor"]) == ("agentclinic", "correct", "oracle")
    grade = asyncio.run(api.grade_free_response(f"DIAGNOSIS READY: {case.diagnosis}", case))
    assert grade.outcome == "correct"

# --------------------------------------------------------------------- the example package


def test_the_example_protocol_is_short() -> None:
    code = (EXAMPLE / "agentclinic_triage" / "__init__.py").read_text().splitlines()
    assert len(code) <= 150


TRIAGE_CASES = """\
# id; urgency; complaint; vitals; working diagnosis
tri-01; emergent; crushing chest pain for an hour; BP 85/50, HR 120; myocardial infarction
tri-02; urgent; fever and cough for three days; T 39.1, SpO2 95%; pneumonia
tri-03; routine; ankle sprain yesterday, walking; BP 120/80, HR 72; ankle sprain
tri-04; emergent; headache, feels tired; BP 210/130, HR 90; hypertensive emergency
"""


@triage_installed
def test_an_installed_protocol_runs_and_reports_everywhere(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    (pytester.path / "er.triage").write_text(TRIAGE_CASES)
    run = pytester.runpytest("er.triage", "--agent-protocol=triage", "-p", "no:cacheprovider",
                             "--agent-run-name=t", "-rN", *xdist)
    # The offline doctor misses the hypertensive emergency (no red-flag word).
    run.assert_outcomes(passed=3, failed=1)
    run.stdout.fnmatch_lines(["*mistriage: routine*", "*expected:   emergent*",
                              "*why:*triage-rules: routine for emergent*",
                              f"*{TRIAGE_TITLE}*"])
    assert "misdiagnosis" not in run.stdout.str()
    records = results(pytester.path)
    assert {r["protocol"] for r in records.values()} == {"triage"}
    assert sorted(r["expected"] for r in records.values()) == [
        "emergent", "emergent", "routine", "urgent"]
    assert all(r["measures"] is None for r in records.values())  # no diagnostic measures
    run_dir = pytester.path / "reports" / "t"
    transcript = json.loads(next((run_dir / "transcripts").glob("*tri-01*")).read_text())
    assert [u["role"] for u in transcript["utterances"]] == ["doctor", "nurse", "doctor"]
    summary = json.loads((run_dir / "summary.json").read_text())
    triage = next(t for t in summary["tables"] if t["title"] == TRIAGE_TITLE)
    assert ["emergent", "2", "1", "0"] in triage["rows"]
    assert TRIAGE_CARD in (run_dir / "report.html").read_text()
    # A fresh process rebuilds the report from the records alone, the triage table included.
    (run_dir / "summary.json").unlink()
    (run_dir / "report.html").unlink()
    rebuilt = subprocess.run(
        [sys.executable, "-c", "import sys; from pytest_agentclinic.cli import main; "
         "sys.exit(main(sys.argv[1:]))", "report", str(run_dir), "--resamples=100"],
        capture_output=True, text=True, check=False)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert TRIAGE_TITLE in rebuilt.stdout
    assert TRIAGE_CARD in (run_dir / "report.html").read_text()
    assert TRIAGE_TITLE in [t["title"] for t in
                            json.loads((run_dir / "summary.json").read_text())["tables"]]


@triage_installed
def test_entry_points_are_read_once_per_group() -> None:
    from pytest_agentclinic.core import extensions

    assert "triage" in api.protocol_names()
    before = extensions.declared.cache_info()
    api.protocol_names()
    api.get_protocol("triage")
    assert extensions.declared.cache_info().misses == before.misses
