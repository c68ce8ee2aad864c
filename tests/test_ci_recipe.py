"""docs/ci.md works as written: its commands run, in order, in a temp dir against a fake server.

The commands are read from the document itself (``bash`` blocks, and the ``run:`` steps of
each workflow, matrix expanded), so an edit that breaks the recipe breaks this test. What
the runner provides is stood in for: ``pip install`` (the package is installed here), the
fake server for OpenAI (``PYTEST_ADDOPTS=--agent-api-base``), ``$GITHUB_RUN_ID`` and
``$GITHUB_STEP_SUMMARY``; an ``upload-artifact`` step checks that its path exists.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import make_case, write_yaml_cases
from test_llm_server import Start, clinic

DOC = Path(__file__).resolve().parents[1] / "docs" / "ci.md"
RUN_ID = "4242"


def blocks() -> list[tuple[str, str]]:
    """The document's fenced blocks, in order: (language, text)."""
    return re.findall(r"^```(\w+)\n(.*?)^```", DOC.read_text(), re.M | re.S)


def workflow_steps(workflow: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(job, step)`` in order, each matrix value's steps with its expressions filled in."""
    for name, job in workflow["jobs"].items():
        matrix = job.get("strategy", {}).get("matrix", {"": [""]})
        (key, values), = matrix.items()
        for value in values:
            fill = {"${{ matrix." + key + " }}": str(value), "${{ github.run_id }}": RUN_ID}
            for step in job["steps"]:
                yield name, _filled(step, fill)


def _filled(node: Any, fill: dict[str, str]) -> Any:
    """``node`` with every expression of ``fill`` replaced in its strings (a dump and reload
    would not do: the dump folds long strings, splitting an expression over two lines)."""
    if isinstance(node, str):
        for expression, value in fill.items():
            node = node.replace(expression, value)
        return node
    if isinstance(node, dict):
        return {k: _filled(v, fill) for k, v in node.items()}
    if isinstance(node, list):
        return [_filled(v, fill) for v in node]
    return node


def commands(language: str, text: str) -> Iterator[tuple[str, str | None]]:
    """``(shell script, path an upload step needs)`` of one block."""
    if language == "bash":
        yield text, None
        return
    workflow = yaml.safe_load(text)
    if "jobs" not in workflow:
        return
    for _, step in workflow_steps(workflow):
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/cache"):
            assert step["with"]["path"] == ".agentclinic_cache"
        if uses.startswith("actions/upload-artifact"):
            yield "", step["with"]["path"]
        if "run" in step:
            yield step["run"], None


def run_recipe(tmp: Path, server_url: str, only: str) -> list[str]:
    """Run every command of the blocks whose text contains ``only``; return the scripts run."""
    env = {**os.environ, "GITHUB_RUN_ID": RUN_ID, "OPENAI_API_KEY": "sk-fake",
           "GITHUB_STEP_SUMMARY": str(tmp / "step_summary.md"),
           "PYTEST_ADDOPTS": f"--agent-api-base={server_url} --agent-backoff=0.01 "
                             "-p no:cacheprovider",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = []
    for language, text in blocks():
        if only not in text and language == "yaml":
            continue
        for script, upload in commands(language, text):
            if upload is not None:
                assert (tmp / upload).exists(), f"the recipe uploads {upload}, never written"
                continue
            body = "\n".join(line for line in script.splitlines()
                             if not line.startswith("pip install"))
            if not body.strip():
                continue
            assert "${{" not in body, f"an expression the test cannot fill in: {body}"
            done = subprocess.run(["bash", "-e", "-c", body], cwd=tmp, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{body}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
            ran.append(body)
    return ran


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A checkout: a git repository with a case folder."""
    (tmp_path / "cases").mkdir()
    write_yaml_cases(tmp_path / "cases" / "c.yaml", [make_case(i) for i in range(1, 7)])
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_gate_workflow_runs_as_written(project: Path, fake_server: Start) -> None:
    server = fake_server(clinic())
    ran = run_recipe(project, server.url, only="jobs:\n  gate:")
    assert len(ran) == 2 and ran[1].startswith("pytest cases")  # the baseline, then the gate
    run_dir = project / f"reports/ci-{RUN_ID}"
    suite = ET.parse(run_dir / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")
            if c.get("classname") == "agentclinic gate"] == ["agentclinic gate"]
    summary = (project / "step_summary.md").read_text()
    assert "**gate PASSED**" in summary and "sign-flip test over cases" in summary
    # The gate's second run replayed the baseline's calls from the cache.
    assert (project / ".agentclinic_cache").is_dir()
    assert (project / "baselines/release/results.jsonl").is_file()


def test_the_sharded_workflow_runs_as_written(project: Path, fake_server: Start) -> None:
    if shutil.which("agentclinic") is None or subprocess.run(
            ["agentclinic", "merge", "--help"], capture_output=True).returncode != 0:
        pytest.skip("this checkout has no 'agentclinic merge' (the shard recipe needs it)")
    server = fake_server(clinic())
    run_recipe(project, server.url, only="jobs:\n  shard:")
    merged = (project / "reports/merged/summary.md").read_text()
    assert "**gate PASSED**" in merged and "sign-flip test over cases" in merged
    assert "- merged from: shard-1 (shard 1/3, " in merged
    summary = json.loads((project / "reports/merged/summary.json").read_text())
    assert summary["items"] == 6 and [m["shard"] for m in summary["merged_from"]] == [
        "1/3", "2/3", "3/3"]
    # The merge job's verdict reaches the job summary, after the shards' own.
    assert (project / "step_summary.md").read_text().rstrip().endswith(merged.rstrip())
