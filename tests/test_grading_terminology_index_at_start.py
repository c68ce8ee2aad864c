"""The grader's terminology index is built from the session's start, not on the first
encounter's path (a machine's first run)."""

from __future__ import annotations

import json

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.grading import terminology_cache

CONFTEST = '''
import json, os, time
from pathlib import Path


def pytest_collection_finish(session):
    # Before any encounter: is the index (being) built? Waits for a build under way.
    folder = Path(os.environ["AGENTCLINIC_TERMINOLOGY_CACHE"])
    deadline, started_by = time.monotonic() + 60, time.monotonic() + 10
    while time.monotonic() < deadline and not list(folder.glob("terminology-*.sqlite")):
        if time.monotonic() > started_by and not list(folder.glob(".terminology-*")):
            break  # no build was started (its lock file would be there)
        time.sleep(0.05)
    built = bool(list(folder.glob("terminology-*.sqlite")))
    (Path(str(session.config.rootpath)) / f"built-{os.getpid()}.json").write_text(
        json.dumps(built))
'''


def test_the_index_is_built_before_the_first_encounter(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]) -> None:
    folder = pytester.path / "terminology-cache"
    folder.mkdir()
    monkeypatch.setenv(terminology_cache.ENV, str(folder))
    pytester.makeconftest(CONFTEST)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    result = pytester.runpytest_subprocess("c.yaml", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=2)
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("built-*.json")]
    assert seen and all(seen), seen
    assert len(list(folder.glob("terminology-*.sqlite"))) == 1


def test_a_run_without_case_files_builds_nothing(pytester: pytest.Pytester,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 xdist: list[str]) -> None:
    folder = pytester.path / "terminology-cache"
    folder.mkdir()
    monkeypatch.setenv(terminology_cache.ENV, str(folder))
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    result = pytester.runpytest_subprocess("test_plain.py", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=1)
    assert list(folder.iterdir()) == []
