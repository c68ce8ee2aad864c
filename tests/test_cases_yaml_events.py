"""YAML case files built from the parser's events (issue 37, collection within 1.5x of plain
pytest): the same data and the same errors as composing each element, without composing the
plain ones; and the collector left alone while a file's cases and items accumulate."""

from __future__ import annotations

import gc
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.cases import yaml_events, yaml_stream
from pytest_agentclinic.cases.loaders import load_case_file


def _outcome(text: str) -> tuple[str, str]:
    """What :func:`yaml_stream.load_with_lines` makes of ``text``: its data and lines, or
    its error's type and message."""
    try:
        return "loaded", repr(yaml_stream.load_with_lines(text))
    except RecursionError:
        return "RecursionError", ""
    except Exception as exc:  # the error is the outcome compared
        return type(exc).__name__, str(exc)


def _composed(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """:func:`_outcome` with every element composed (as before elements were built from
    the events): the reference."""
    with monkeypatch.context() as patched:
        patched.setattr(yaml_events, "resolving", lambda loader: None)
        return _outcome(text)


#: Elements built from the events (every scalar type the safe loader resolves) and elements
#: that give up (each reason), in documents whose other elements are plain.
ELEMENTS = {
    "scalars": "{a: 1, b: 1.5, c: true, d: null, e: ~, f: 2020-01-02, g: 2020-01-02 10:00:00,"
               " h: '1', i: yes, j: 0x1f, k: .inf, l: -.nan, m: 0o17, n: 1_000, o: 1:30,"
               " p: No, q: '', r: 12e3, s: \"\\u00e9\\t\", t: 'it''s'}",
    "block": "\n  id: x\n  patient:\n    history: |\n      lines\n    list:\n    - a\n    - - b",
    "empty values": "{a: , b: [], c: {}, '': x}",
    "nested": "[a, [b, [c, {d: [e, {f: g}]}]]]",
    "an anchor and its alias": "{a: &q 1, b: *q}",
    "an undefined alias": "{a: *nowhere}",
    "a tag": "{a: !!str 1, b: ! x, c: !!binary aGVsbG8=}",
    "an unknown tag": "{a: !foo x}",
    "a bad base64": "{a: !!binary '@@@'}",
    "a tagged mapping": "!!map {a: 1}",
    "a merge key": "{<<: {a: 1}, b: 2}",
    "a key given twice": "{a: 1, b: 2, a: 3}",
    "a key given twice deep down": "{a: {b: {c: [1, {d: e, d: f}]}}}",
    "keys built equal": "{1: a, 1.0: b, 0x1: c, '1': d}",
    "NaN keys": "{.nan: a, .nan: b}",
    "NaN keys of other texts": "{.nan: a, .NaN: b}",
    "a list as a key": "{? [a]: b}",
    "a mapping as a key": "{? {x: 1}: 2}",
    "a value tag": "{a: =}",
    "a bad date": "{a: 2020-13-45}",
    "a huge integer": "{a: " + "9" * 5_000 + "}",
    "deep nesting": "[" * 100 + "]" * 100,
    "deeper nesting": "[" * 900 + "]" * 900,
    "a parse error after an alias": "{a: *nowhere, b: [",
}


@pytest.mark.parametrize("element", ELEMENTS.values(), ids=ELEMENTS.keys())
def test_an_element_is_built_as_composing_it_builds_it(
        element: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"dataset: d\ncases:\n- {{id: a}}\n- {element}\n- {{id: b, n: 2}}\n"
    built = _outcome(text)
    assert built == _composed(text, monkeypatch)
    if element in (ELEMENTS["scalars"], ELEMENTS["block"], ELEMENTS["nested"]):
        assert yaml_stream.load(text) == yaml.load(text, Loader=yaml.SafeLoader)


def test_mangled_case_files_load_as_composing_them_loads_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two thousand case files with a few tokens inserted or characters dropped: the same
    data, the same errors at the same places."""
    base = ("dataset: d\ncases:\n- id: a-1\n  patient: {history: \"I cough\", age: 40, "
            "flag: yes}\n  tests:\n    - x\n    - y: [1, 2.5, ~]\n  when: 2020-01-02\n"
            "- id: b\n  diagnosis: 'Acute bronchitis'\n  notes: |\n    text here\n"
            "- &k {k: 1}\n- [1, 2, {a: b}]\nother: 1\n")
    tokens = ["&a ", "*a ", "!!str ", "!x ", "<<: ", "{", "}", "[", "]", ",", ":", " ", "\n",
              "- ", "? ", "'", '"', "=", "~", "1", "0x", "yes", "2020-01-01", "a: 1", "\n  ",
              "#", "|", ">", "&k ", "*k", "id: a-1", "!!binary ", "!!set ", ".nan: 1", "\t"]
    chosen = random.Random(37)
    loaded = refused = 0
    for _ in range(2_000):
        text = base
        for _ in range(chosen.randint(1, 4)):
            at = chosen.randrange(len(text))
            text = (text[:at] + text[at + chosen.randint(1, 5):] if chosen.random() < 0.3
                    else text[:at] + chosen.choice(tokens) + text[at:])
        built = _outcome(text)
        assert built == _composed(text, monkeypatch), text
        loaded += built[0] == "loaded"
        refused += built[0] != "loaded"
    assert loaded > 300 and refused > 300  # readable files and broken ones, both compared


def test_plain_cases_are_not_composed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Composing each case's nodes, then building them, was ~65 us a case: most of the CPU
    of a collection that parses its file. However many cases, only the document's own keys
    are composed now."""
    composed: list[object] = []
    original = yaml.composer.Composer.compose_node

    def counted(self: Any, parent: Any, index: Any) -> Any:
        composed.append(index)
        return original(self, parent, index)

    monkeypatch.setattr(yaml.composer.Composer, "compose_node", counted)
    counts = []
    for n in (1, 50):
        composed.clear()
        loaded = load_case_file(write_yaml_cases(tmp_path / f"c{n}.yaml",
                                                 [make_case(i) for i in range(n)]))
        assert not loaded.errors and len(loaded.cases) == n
        counts.append(len(composed))
    assert counts[0] == counts[1] <= 3  # "dataset", its value, "cases"


def test_no_garbage_collection_runs_while_a_case_file_loads(tmp_path: Path) -> None:
    """The cases of a file accumulate as it loads and live on: the collector's passes over
    them (a full one walks the whole heap) were ~40 ms of 4,000 cases' 240."""
    path = write_yaml_cases(tmp_path / "c.yaml", [make_case(i) for i in range(2_000)])
    started: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()  # from a count of 0: the few objects made before the load starts run none
    gc.callbacks.append(watch)
    try:
        loaded = load_case_file(path)
    finally:
        gc.callbacks.remove(watch)
    assert len(loaded.cases) == 2_000
    assert len(started) <= 1  # the one the collector resumes with (~90 before)
    assert gc.isenabled()
    broken = tmp_path / "broken.yaml"
    broken.write_text("cases:\n- {id: a, patient: [\n")
    assert load_case_file(broken).errors and gc.isenabled()


SEES_GC = """
import gc, json

def pytest_collection_modifyitems(session, config, items):
    name = getattr(config, "workerinput", {}).get("workerid", "main")
    with open(f"gc-{name}.json", "w") as out:
        json.dump({"enabled": gc.isenabled(), "items": len(items)}, out)
"""


def test_collection_leaves_the_garbage_collector_on(pytester: pytest.Pytester,
                                                    xdist: list[str]) -> None:
    """Items are made with the collector paused; it is on again once they are."""
    import json

    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 6)])
    pytester.makeconftest(SEES_GC)
    result = pytester.runpytest("c.yaml", "-p", "no:cacheprovider", "--collect-only", *xdist)
    assert result.ret == 0
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("gc-*.json")]
    assert seen and all(s["enabled"] for s in seen)
    assert sum(s["items"] for s in seen) >= 5
