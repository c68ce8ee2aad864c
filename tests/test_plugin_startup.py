"""A pytest run that does not use the plugin pays (almost) nothing for it: the plugin loads
in every pytest run of its user's environment. Timings live in benchmarks/bench_startup.py;
this checks what is imported, which does not depend on the machine's load."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic import api
from pytest_agentclinic.testing.fixture_repo import fixture_repository

EXAMPLE = Path(__file__).parent / "example_triage"

PROBE = """
import json, sys
import pytest
from pytest_agentclinic.core import extensions
# As in an environment with no extension installed: an installed protocol's options are
# declared in every run, so its distribution is imported (with what it imports).
extensions.declared = lambda group: ()
status = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[1:]])
print(json.dumps({"status": int(status), "modules": sorted(sys.modules)}))
"""

#: What a run with no agents must not import: the HTTP clients, numpy/scipy, pydantic, the
#: YAML parser, and the plugin's own session, protocols, agents, grading and reports.
HEAVY = ("litellm", "aiohttp", "h11", "numpy", "scipy", "pydantic", "yaml",
         "pytest_agentclinic.plugin.session", "pytest_agentclinic.protocols.agentclinic",
         "pytest_agentclinic.protocols.craftmd", "pytest_agentclinic.grading",
         "pytest_agentclinic.report.tables", "pytest_agentclinic.report.reducers",
         "pytest_agentclinic.report.rundir", "pytest_agentclinic.report.gate",
         "pytest_agentclinic.agents", "pytest_agentclinic.cases",
         "pytest_agentclinic.core.case", "pytest_agentclinic.llm.caller")


#: As in an environment where tests/example_triage is installed (whether or not it is here):
#: its pyproject's entry points are declared, and this checkout's copy of it is imported.
WITH_EXAMPLE = """
import json, sys, tomllib
from importlib.metadata import EntryPoint
import pytest
from pytest_agentclinic.core import extensions
with open(sys.argv[1], "rb") as f:
    groups = tomllib.load(f)["project"]["entry-points"]
extensions.declared = lambda group: tuple(
    EntryPoint(name, value, group) for name, value in groups.get(group, {}).items())
status = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[2:]])
print(json.dumps({"status": int(status), "modules": sorted(sys.modules)}))
"""


def _modules(cwd: Path, *args: str, script: str = PROBE) -> set[str]:
    path = os.pathsep.join(filter(None, [str(EXAMPLE), os.environ.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": path})
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    return set(probe["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_a_bare_collect_only_imports_nothing_heavy(tmp_path: Path) -> None:
    modules = _modules(tmp_path)
    assert "pytest_agentclinic.plugin" in modules  # the plugin did load
    assert _heavy(modules) == []


@pytest.mark.parametrize("args", [["cases.yaml"], ["--agent-doctor=offline"]],
                         ids=["a case file", "an agent option"])
def test_a_run_that_may_use_agents_loads_the_session(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "cases.yaml").write_text("cases: []\n")
    assert "pytest_agentclinic.plugin.session" in _modules(tmp_path, *args)


#: What plays the items and writes their records: a run that only collects case files
#: (``--collect-only``) builds none of it (its imports were ~10% of a 4,000-case collection).
PLAYERS = ("pytest_agentclinic.plugin.executor", "pytest_agentclinic.llm.caller",
           "pytest_agentclinic.llm.cache", "pytest_agentclinic.plugin.recorder",
           "pytest_agentclinic.plugin.reports", "pytest_agentclinic.runs.lock",
           "pytest_agentclinic.runs.merging", "pytest_agentclinic.plugin.counters")


def test_collecting_case_files_only_builds_nothing_that_plays_them(tmp_path: Path) -> None:
    write_yaml_cases(tmp_path / "cases.yaml", [make_case(1), make_case(2)])
    modules = _modules(tmp_path, "cases.yaml")
    assert "pytest_agentclinic.plugin.session" in modules  # the cases were collected
    assert sorted(set(PLAYERS) & modules) == []


def test_a_bare_collect_with_an_extension_installed_imports_nothing_heavy(
        tmp_path: Path) -> None:
    """An installed protocol's options are declared in every run, so its module is imported
    (and it imports the api and subclasses Protocol): that must not import the rest."""
    pytest.importorskip("tomllib")  # Python 3.11+
    modules = _modules(tmp_path, str(EXAMPLE / "pyproject.toml"), script=WITH_EXAMPLE)
    assert "agentclinic_triage" in modules  # the extension was loaded, its options declared
    assert _heavy(modules) == []


def test_the_extension_option_is_declared_in_a_bare_run(tmp_path: Path) -> None:
    # Its option is then checked: the run loads the session (and so what it needs).
    pytest.importorskip("tomllib")  # Python 3.11+
    modules = _modules(tmp_path, str(EXAMPLE / "pyproject.toml"), "--agent-nurse=offline",
                       script=WITH_EXAMPLE)
    assert "pytest_agentclinic.plugin.session" in modules


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    """What ``api.py`` imports under ``TYPE_CHECKING`` (what type checkers see): name ->
    (module, its name there)."""
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    return {alias.asname or alias.name: ("." + str(node.module), alias.name)
            for node in block.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


def test_the_lazy_api_resolves_what_type_checkers_see() -> None:
    lazy = api._LAZY
    assert lazy == _type_checking_imports()
    defined = {name for name in vars(api) if not name.startswith("_")}
    assert set(api.__all__) <= set(lazy) | defined
    assert set(api.__all__) <= set(dir(api))
    for name, (module, attr) in lazy.items():
        source = importlib.import_module(module, "pytest_agentclinic")
        assert getattr(api, name) is getattr(source, attr), name
    with pytest.raises(AttributeError, match="no_such_name"):
        api.no_such_name  # type: ignore[attr-defined]  # noqa: B018


#: A terminology whose load (the grader's warm-up, started with the run) finishes only once
#: the doctor has been asked (or 10 s on), and a doctor that notes whether it had finished.
SLOW_TERMINOLOGY = '''
import threading
from pathlib import Path

from pytest_agentclinic.api import Reply
from pytest_agentclinic.grading.terms import concepts

ASKED, DONE = threading.Event(), threading.Event()
real_load = concepts.Terminology.load.__func__


def load(cls, *args, **kwargs):
    ASKED.wait(10)  # a bound only: the doctor's first turn releases it
    try:
        return real_load(cls, *args, **kwargs)
    finally:
        DONE.set()


concepts.Terminology.load = classmethod(load)


class Doctor:
    model, prompt_version = "doctor-1", "1"

    async def respond(self, view):
        if not ASKED.is_set():
            with Path("asked.txt").open("a") as out:
                out.write(f"terminology loaded before the first turn: {DONE.is_set()}\\n")
            ASKED.set()
        return Reply("DIAGNOSIS READY: " + view.case.diagnosis)


def pytest_agentclinic_make_agent(role, model, case, config):
    return Doctor() if role == "doctor" else None
'''


def test_the_first_turn_does_not_wait_for_the_graders_terminology(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """The grader's terminology (an index built on a machine's first run, ~2 s) loads while
    the first encounters already call their models; grading waits for it."""
    pytester.makeconftest(SLOW_TERMINOLOGY)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest_subprocess("c.yaml", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=1)
    assert (pytester.path / "asked.txt").read_text().splitlines() == [
        "terminology loaded before the first turn: False"]


def test_a_repository_of_data_fixtures_is_left_alone(tmp_path: Path) -> None:
    """`pytest tests` in a repository whose fixtures include `{}`, `[]`, zero bytes and a
    header-only CSV: the outcome of `-p no:agentclinic`, and nothing heavy imported."""
    repo = fixture_repository(tmp_path, small_json=50)
    runs = [subprocess.run([sys.executable, "-m", "pytest", "tests", "-q", "-p",
                            "no:cacheprovider", *extra], cwd=repo, capture_output=True,
                           text=True, check=False) for extra in ([], ["-p", "no:agentclinic"])]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stdout
    assert "1 passed" in runs[0].stdout and "error" not in runs[0].stdout.lower()
    assert _heavy(_modules(repo, "tests")) == []


def test_a_folder_of_cases_is_still_an_agent_run(tmp_path: Path) -> None:
    """A named folder that holds a case file (beside data fixtures) still runs its cases."""
    repo = fixture_repository(tmp_path, small_json=3)
    write_yaml_cases(repo / "tests" / "data" / "cases.yaml", [make_case(1)])
    modules = _modules(repo, "tests")
    assert "pytest_agentclinic.plugin.session" in modules


PLAY = """
import json, sys
import pytest
from pytest_agentclinic.core import extensions
extensions.declared = lambda group: ()
status = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", *sys.argv[1:]])
print(json.dumps({"status": int(status), "modules": sorted(sys.modules)}))
"""


def test_a_run_that_plays_parsed_cases_without_biases_imports_no_yaml(tmp_path: Path) -> None:
    # The bias prompts were read at import, so every process that played an encounter
    # imported PyYAML (~0.9 MB in each xdist worker), biases or not; a case file the parse
    # cache holds needs no parser either (the first run parses it and stores it).
    write_yaml_cases(tmp_path / "cases.yaml", [make_case(1), make_case(2)])
    _modules(tmp_path, "cases.yaml", "-n", "0", script=PLAY)
    modules = _modules(tmp_path, "cases.yaml", "-n", "0", script=PLAY)
    assert "pytest_agentclinic.plugin.executor" in modules  # the encounters were played
    assert "yaml" not in modules
    biased = _modules(tmp_path, "cases.yaml", "-n", "0", "--agent-bias=doctor:recency",
                      script=PLAY)
    assert "yaml" in biased  # a bias's prompt is read when a run asks for a bias
