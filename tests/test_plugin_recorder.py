"""plugin.recorder: an item's record is dumped to JSON and redacted once, and that one text
is what results.jsonl, the JUnit property and the controller's copy carry."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import play_three_under

from pytest_agentclinic.core.redact import MASK, register
from pytest_agentclinic.core.transcript import Transcript, Utterance
from pytest_agentclinic.runs import transcripts

SECRET = "tok-Recorder-Transcript-5521"

#: What both counting conftests share: a wrapper counting calls while an item runs
#: (``counts`` is the conftest's own), and the hook that says when one does.
COUNTING = """
running = [False]

def counted(original, key, when=lambda *a, **k: True):
    def wrapper(*args, **kwargs):
        if running[0] and when(*args, **kwargs):
            counts[key] += 1
        return original(*args, **kwargs)
    return wrapper
"""
WHILE_RUNNING = """
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    running[0] = True
    counts["items"] += 1
    yield
    running[0] = False
"""

#: Counts, while each item runs, the dumps of a result record and the redactions of its
#: dump (the functions are replaced wherever a module of the package holds them).
COUNT = """
import json, os, sys
import pytest
from pytest_agentclinic.core import redact as redact_module
from pytest_agentclinic.core.records import ResultRecord

counts = {"dumps": 0, "redactions": 0, "items": 0}
""" + COUNTING + """
def of_record(value, *args, **kwargs):
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return '"nodeid"' in text and '"transcript"' in text

def pytest_configure(config):
    ResultRecord.model_dump_json = counted(ResultRecord.model_dump_json, "dumps")
    ResultRecord.model_dump = counted(ResultRecord.model_dump, "dumps")
    originals = {name: getattr(redact_module, name) for name in ("redact", "redact_data")}
    wrapped = {name: counted(f, "redactions", of_record) for name, f in originals.items()}
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("pytest_agentclinic"):
            for name, original in originals.items():
                if getattr(module, name, None) is original:
                    setattr(module, name, wrapped[name])

""" + WHILE_RUNNING + """
def pytest_unconfigure(config):
    name = getattr(config, "workerinput", {}).get("workerid", "main")
    with open(f"counts-{name}.json", "w") as fh:
        json.dump(counts, fh)
"""


def test_a_record_is_dumped_and_redacted_once_per_item(pytester: pytest.Pytester,
                                                        xdist: list[str]) -> None:
    counts = _counted_run(pytester, COUNT, *xdist, "--junitxml=junit.xml")
    items = sum(c["items"] for c in counts)
    assert items == 3
    assert sum(c["dumps"] for c in counts) == items
    assert sum(c["redactions"] for c in counts) == items
    # The one text is every copy: the line of results.jsonl is the JUnit property.
    run_dir = pytester.path / "reports" / "once"
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    properties = [p.get("value", "") for p in ET.parse(pytester.path / "junit.xml").iter("property")
                  if p.get("name") == "agentclinic_result"]
    assert sorted(lines) == sorted(properties) and len(lines) == 3


#: Counts, while each item runs, the transcript's redactions: as a model (redact_model)
#: and as JSON text (redact over a dump holding its utterances).
COUNT_TRANSCRIPT = """
import json, sys
import pytest
from pytest_agentclinic.core import redact as redact_module, redact_model as model_module

counts = {"as_model": 0, "as_text": 0, "items": 0}
""" + COUNTING + """
replaced = []

@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):  # the plugin's modules are imported by now
    wrapped = {
        (redact_module, "redact"): counted(redact_module.redact, "as_text",
                                           lambda text, *a, **k: '"utterances"' in text),
        (model_module, "redact_model"): counted(model_module.redact_model, "as_model"),
    }
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("pytest_agentclinic"):
            for (home, name), wrapper in wrapped.items():
                original = getattr(home, name)
                if getattr(module, name, None) is original and module is not home:
                    replaced.append((module, name, original))
                    setattr(module, name, wrapper)
    for home, name in wrapped:
        replaced.append((home, name, getattr(home, name)))
        setattr(home, name, wrapped[home, name])

""" + WHILE_RUNNING + """
def pytest_unconfigure(config):
    for module, name, original in replaced:  # pytester may run in this very process
        setattr(module, name, original)
    name = getattr(config, "workerinput", {}).get("workerid", "main")
    with open(f"counts-{name}.json", "w") as fh:
        json.dump(counts, fh)
"""


def test_a_transcript_is_redacted_once_per_item(pytester: pytest.Pytester,
                                                xdist: list[str]) -> None:
    # It was redacted as a model by the executor, then its file's JSON text again.
    counts = _counted_run(pytester, COUNT_TRANSCRIPT, *xdist)
    assert sum(c["items"] for c in counts) == 3
    assert sum(c["as_model"] for c in counts) == 3
    assert sum(c["as_text"] for c in counts) == 0
    assert len(list((pytester.path / "reports" / "once" / "transcripts").iterdir())) == 3


def test_a_transcript_written_unredacted_is_redacted_string_by_string(tmp_path: Path) -> None:
    # A transcript from elsewhere (agentclinic play) is redacted as a model: each string
    # alone, a secret masked, an utterance ending in a URL kept beside a model's "@".
    register(SECRET)
    model = "claude-3-5-sonnet@20240620"
    t = Transcript(protocol="agentclinic", case_id="c-1", dataset="t", specialty="Other",
                   models={"doctor": model}, sample=0, turn_budget=3, outcome="correct",
                   utterances=[Utterance(turn=1, role="doctor", kind="question", model=model,
                                         text=f"see http://example.org {SECRET}")])
    path = transcripts.write_transcript(tmp_path / "run", tmp_path / "c.yaml", "c.yaml::c-1", t)
    saved = json.loads(Path(path).read_text())
    assert saved["utterances"][0]["text"] == f"see http://example.org {MASK}"
    assert saved["utterances"][0]["model"] == model


def test_a_transcript_costs_no_path_walk_per_item(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The case file is resolved and the transcripts folder made once, not per item (each
    a few system calls); the names are as before: a hash of the resolved file and the id."""
    import hashlib
    import os

    from pytest_agentclinic.core.transcript import Transcript
    from pytest_agentclinic.runs import transcripts

    calls = {"resolve": 0, "makedirs": 0}
    resolve, makedirs = Path.resolve, os.makedirs

    def counting_resolve(self: Path, strict: bool = False) -> Path:
        calls["resolve"] += 1
        return resolve(self, strict)

    def counting_makedirs(name: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        calls["makedirs"] += 1
        makedirs(name, mode, exist_ok)

    monkeypatch.setattr(Path, "resolve", counting_resolve)
    (tmp_path / "run").mkdir()
    monkeypatch.setattr(os, "makedirs", counting_makedirs)
    case_file = tmp_path / "cases" / "derm.yaml"
    t = Transcript(protocol="agentclinic", case_id="c-1", dataset="d", specialty="Derm",
                   models={"doctor": "offline"}, sample=0, turn_budget=4)
    paths = [transcripts.write_transcript(tmp_path / "run", case_file, f"derm.yaml::c-{i}", t)
             for i in range(3)]
    assert calls == {"resolve": 1, "makedirs": 1}
    digest = hashlib.sha256(f"{case_file.resolve()}\0derm.yaml::c-2".encode()).hexdigest()[:10]
    assert paths[2] == os.path.join(tmp_path / "run", "transcripts",
                                    f"derm__c-2-{digest}.json")
    assert all(Path(p).is_file() for p in paths)


def _counted_run(pytester: pytest.Pytester, conftest: str, *args: str) -> list[dict[str, int]]:
    """Play three cases under the counting ``conftest``; each process's counts."""
    play_three_under(pytester, conftest, "once", *args)
    return [json.loads(p.read_text()) for p in pytester.path.glob("counts-*.json")]
