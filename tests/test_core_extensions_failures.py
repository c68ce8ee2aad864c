"""An installed extension that is broken or conflicts fails alone: one warning naming its
distribution in a run that does not use it, one usage error in a run that asks for it, and
never a lost report (issue: a broken extension made every pytest run in the venv exit 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import make_case, write_yaml_cases

GOOD_PROTOCOL = """
from pytest_agentclinic.protocols.agentclinic import AgentClinic
class Other(AgentClinic):
    name = "{name}"
"""


def install(site: Path, dist: str, source: str, groups: dict[str, dict[str, str]]) -> None:
    """A distribution as pip leaves one: its module and its metadata on ``sys.path``."""
    module = dist.replace("-", "_")
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in groups.items()))


def protocol_point(dist: str, name: str, attr: str = "Other") -> dict[str, dict[str, str]]:
    return {"pytest_agentclinic.protocols": {name: f"{dist.replace('-', '_')}:{attr}"}}


def pytest_run(cwd: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An unrelated repository: one test."""
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    return tmp_path / "repo"


@pytest.mark.parametrize("source", ["raise ImportError('no module named torch')\n",
                                    "import sys\nsys.exit(3)\n"],
                         ids=["import error", "sys.exit"])
def test_a_broken_extension_is_a_warning_in_a_run_that_does_not_use_it(
        tmp_path: Path, repo: Path, source: str) -> None:
    site = tmp_path / "site"
    install(site, "broken-ext", source, protocol_point("broken-ext", "broken"))
    run = pytest_run(repo, site, "tests")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed, 1 warning" in run.stdout
    assert run.stdout.count("distribution broken-ext") == 1
    assert "Traceback" not in run.stdout + run.stderr
    used = pytest_run(repo, site, "tests", "--agent-protocol=broken")
    assert used.returncode == pytest.ExitCode.USAGE_ERROR, used.stdout + used.stderr
    assert "--agent-protocol: entry point 'broken = broken_ext:Other'" in used.stderr
    assert "distribution broken-ext" in used.stderr and "cannot load" in used.stderr


def test_two_distributions_claiming_one_name_is_an_error_naming_both(
        tmp_path: Path, repo: Path) -> None:
    site = tmp_path / "site"
    for dist in ("first-ext", "second-ext"):
        install(site, dist, GOOD_PROTOCOL.format(name="ward"), protocol_point(dist, "ward"))
    run = pytest_run(repo, site, "tests")
    assert run.returncode == 0 and "1 passed, 1 warning" in run.stdout, run.stdout
    assert "first-ext and second-ext" in run.stdout
    used = pytest_run(repo, site, "tests", "--agent-protocol=ward")
    assert used.returncode == pytest.ExitCode.USAGE_ERROR
    assert "more than one distribution: first-ext and second-ext" in used.stderr


def test_an_extension_claiming_a_built_in_name_is_refused(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site, "usurper", "from pytest_agentclinic.protocols.agentclinic import "
            "AgentClinic as Other\n", protocol_point("usurper", "agentclinic"))
    write_yaml_cases(tmp_path / "cases.yaml", [make_case(1)])
    run = pytest_run(tmp_path, site, "cases.yaml", "--agent-run-name=r")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    assert "'agentclinic' is a built-in protocol's name" in run.stdout
    assert "distribution usurper" in run.stdout


def test_a_raising_report_tables_extension_loses_no_report(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site, "bad-tables", "def tables(records, resamples):\n    raise KeyError('x')\n",
            {"pytest_agentclinic.report_tables": {"agentclinic": "bad_tables:tables"}})
    write_yaml_cases(tmp_path / "cases.yaml", [make_case(1)])
    run = pytest_run(tmp_path, site, "cases.yaml", "--agent-run-name=r",
                     "--agent-min-accuracy=0.5")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "report tables" in run.stdout and "KeyError" in run.stdout
    run_dir = tmp_path / "reports" / "r"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["gate"]["passed"] is True
    assert (run_dir / "report.html").exists()


def test_a_broken_case_format_is_a_usage_error_where_its_file_is_named(
        tmp_path: Path, repo: Path) -> None:
    site = tmp_path / "site"
    install(site, "ward-format", "raise ImportError('no module named pandas')\n",
            {"pytest_agentclinic.case_formats": {"ward": "ward_format:read"}})
    (repo / "er.ward").write_text("anything\n")
    used = pytest_run(repo, site, "er.ward")
    assert used.returncode == pytest.ExitCode.USAGE_ERROR, used.stdout + used.stderr
    assert "er.ward: entry point 'ward = ward_format:read'" in used.stderr
    assert "distribution ward-format" in used.stderr
    run = pytest_run(repo, site, "tests")
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr


def test_a_broken_case_format_is_one_warning_of_the_summary_in_every_worker_mode(
        tmp_path: Path, xdist: list[str]) -> None:
    """Found while pytest configures (the named paths are checked against the case
    formats): a config-time warning of the warnings summary, told once by the run's owner,
    not a line on stderr from each process (the controller and every xdist worker)."""
    site = tmp_path / "site"
    install(site, "ward-format", "raise ImportError('no module named pandas')\n",
            {"pytest_agentclinic.case_formats": {"ward": "ward_format:read"}})
    write_yaml_cases(tmp_path / "cases.yaml", [make_case(1), make_case(2)])
    run = pytest_run(tmp_path, site, "cases.yaml", "-rN", *xdist)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ward-format" not in run.stderr, run.stderr
    shown = [line for line in run.stdout.splitlines() if "distribution ward-format" in line]
    assert len(shown) == 1 and "PytestConfigWarning" in shown[0], run.stdout
    assert run.stdout.index("warnings summary") < run.stdout.index(shown[0])
