"""The CI workflows of the docs work as written (docs/ci.md, docs/many-machines.md): their
commands run, in order, in temp dirs against a fake server.

The commands are read from the documents themselves (``bash`` blocks, and each workflow's
steps, matrix expanded), so an edit that breaks a recipe breaks this test. Each job runs in a
fresh copy of the checkout and sees only what its cache, upload and download steps carry
(see :class:`Runner`: hidden files stay behind unless ``include-hidden-files``). What the
runner provides is stood in for: ``pip install`` (the package is installed here), the fake
server for OpenAI (``PYTEST_ADDOPTS=--agent-api-base``), ``$GITHUB_RUN_ID`` and
``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import fnmatch
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
from helpers import UNUSED_PLUGINS, make_case, write_yaml_cases
from test_llm_client import Start, clinic

from pytest_agentclinic.testing.fake_server import FakeReply, FakeRequest, Script

DOC = Path(__file__).resolve().parents[1] / "docs" / "ci.md"
RUN_ID = "4242"


def blocks(doc: Path = DOC) -> list[tuple[str, str]]:
    """The document's fenced blocks, in order: (language, text)."""
    return re.findall(r"^```(\w+)\n(.*?)^```", doc.read_text(), re.M | re.S)


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


class Runner:
    """Runs a document's workflow as GitHub Actions would, as far as the recipe depends on it:
    each job (each matrix value) in a fresh copy of the checkout; ``actions/cache`` restores
    and saves its path; ``upload-artifact@v4`` keeps what its ``path`` lines match, rooted at
    their least common ancestor, *without hidden files* unless ``include-hidden-files: true``
    (v4.4 and later); ``download-artifact@v4`` puts one named artifact in ``path``, several
    (``pattern`` or none) each in ``path/<name>``. A later job sees only what it downloads."""

    def __init__(self, tmp: Path, checkout: Path, env: dict[str, str]) -> None:
        self.tmp, self.checkout, self.env = tmp, checkout, env
        self.artifacts = tmp / "artifacts"
        self.caches = tmp / "actions-cache"
        self.job_dirs: dict[str, Path] = {}
        self.ran: list[str] = []

    def run(self, workflow: dict[str, Any]) -> None:
        """Every job, in order (the documents list a job after those it needs)."""
        for name, job in workflow["jobs"].items():
            matrix = job.get("strategy", {}).get("matrix", {"": [""]})
            (key, values), = matrix.items()
            for value in values:
                fill = {"${{ matrix." + key + " }}": str(value), "${{ github.run_id }}": RUN_ID}
                where = self.tmp / "jobs" / f"{name}{value}"
                shutil.copytree(self.checkout, where, symlinks=True)
                self.job_dirs[f"{name}{value}"] = where
                self._job([_filled(step, fill) for step in job["steps"]], where)

    def _job(self, steps: list[dict[str, Any]], where: Path) -> None:
        saves: list[Path] = []
        for step in steps:
            uses = str(step.get("uses", ""))
            given = step.get("with", {})
            if uses.startswith("actions/cache@"):
                saves.append(self._restore(where, given["path"]))
            elif uses.startswith("actions/upload-artifact@"):
                self._upload(where, given)
            elif uses.startswith("actions/download-artifact@"):
                self._download(where, given)
            elif "run" in step:
                self._shell(where, step["run"])
        for path in saves:  # the cache action saves at the end of the job
            if (where / path).exists():
                shutil.rmtree(self.caches / path, ignore_errors=True)
                shutil.copytree(where / path, self.caches / path)

    def _restore(self, where: Path, path: str) -> Path:
        assert path == ".agentclinic_cache", f"a cache of {path}, not the plugin's"
        if (self.caches / path).exists():
            shutil.copytree(self.caches / path, where / path, dirs_exist_ok=True)
        return Path(path)

    def _shell(self, where: Path, script: str) -> None:
        body = "\n".join(line for line in script.splitlines()
                         if not line.startswith("pip install"))
        if not body.strip():
            return
        assert "${{" not in body, f"an expression the test cannot fill in: {body}"
        done = subprocess.run(["bash", "-e", "-c", body], cwd=where, env=self.env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{body}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
        self.ran.append(body)

    def _upload(self, where: Path, given: dict[str, Any]) -> None:
        patterns = [p.strip() for p in str(given["path"]).splitlines() if p.strip()]
        hidden_ok = str(given.get("include-hidden-files", "false")).lower() == "true"
        files = upload_files(where, patterns, hidden_ok)
        assert files, f"the recipe uploads {patterns}: nothing there to upload"
        root = artifact_root(where, patterns)
        store = self.artifacts / str(given["name"])
        assert not store.exists(), f"two artifacts named {given['name']}"
        for file in files:
            target = store / file.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, target)

    def _download(self, where: Path, given: dict[str, Any]) -> None:
        into = where / str(given.get("path", "."))
        if "name" in given:
            shutil.copytree(self.artifacts / str(given["name"]), into, dirs_exist_ok=True)
            return
        pattern = str(given.get("pattern", "*"))
        for artifact in sorted(self.artifacts.iterdir()):
            if fnmatch.fnmatch(artifact.name, pattern):
                shutil.copytree(artifact, into / artifact.name, dirs_exist_ok=True)


def upload_files(where: Path, patterns: list[str], hidden_ok: bool) -> list[Path]:
    """The files an upload step's path lines select (``!`` lines exclude), hidden files and
    folders (a name starting with a dot) left out unless ``include-hidden-files``."""
    chosen: dict[Path, None] = {}
    for pattern in patterns:
        exclude = pattern.startswith("!")
        for match in where.glob(pattern.lstrip("!")):
            for file in ([match] if match.is_file() else sorted(match.rglob("*"))):
                if not file.is_file():
                    continue
                if not hidden_ok and any(part.startswith(".")
                                         for part in file.relative_to(where).parts):
                    continue
                if exclude:
                    chosen.pop(file, None)
                else:
                    chosen[file] = None
    return list(chosen)


def artifact_root(where: Path, patterns: list[str]) -> Path:
    """One path: the folder itself (or a file's folder); several: their least common
    ancestor (the part of each before its first wildcard)."""
    literal = [where / re.split(r"[*?\[]", p, maxsplit=1)[0].rstrip("/")
               for p in patterns if not p.startswith("!")]
    if len(literal) == 1:
        return literal[0] if literal[0].is_dir() else literal[0].parent
    return Path(os.path.commonpath(literal))


def recipe_env(tmp: Path, server_url: str) -> dict[str, str]:
    """What the runner provides, the fake server standing in for OpenAI."""
    return {**os.environ, "GITHUB_RUN_ID": RUN_ID, "OPENAI_API_KEY": "sk-fake",
            "GITHUB_STEP_SUMMARY": str(tmp / "step_summary.md"),
            "PYTEST_ADDOPTS": f"--agent-api-base={server_url} --agent-backoff=0.01 "
                              f"-p no:cacheprovider {UNUSED_PLUGINS}",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def run_recipe(tmp: Path, server_url: str, only: str, doc: Path = DOC,
               bash: bool = True) -> Runner:
    """Run the document's ``bash`` blocks in the checkout (with ``bash``), then the workflow
    whose text contains ``only``, job by job; return the runner (its job folders)."""
    env = recipe_env(tmp, server_url)
    runner = Runner(tmp.parent / f"{tmp.name}-runner", tmp, env)
    for language, text in blocks(doc):
        if language == "bash" and bash:
            runner._shell(tmp, text)
        elif language == "yaml" and only in text:
            runner.run(yaml.safe_load(text))
    assert runner.job_dirs, f"no workflow in {doc.name} contains {only!r}"
    return runner


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A checkout: a git repository with a case folder."""
    (tmp_path / "cases").mkdir()
    write_yaml_cases(tmp_path / "cases" / "c.yaml", [make_case(i) for i in range(1, 7)])
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_gate_workflow_runs_as_written(project: Path, fake_server: Start) -> None:
    server = fake_server(clinic())
    runner = run_recipe(project, server.url, only="jobs:\n  gate:")
    ran = runner.ran
    assert len(ran) == 2 and ran[1].startswith("pytest cases")  # the baseline, then the gate
    job = runner.job_dirs["gate"]
    run_dir = job / f"reports/ci-{RUN_ID}"
    suite = ET.parse(run_dir / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")
            if c.get("classname") == "agentclinic gate"] == ["agentclinic gate"]
    summary = (project / "step_summary.md").read_text()
    assert "**gate PASSED**" in summary and "sign-flip test over cases" in summary
    # The cache step saved the replies for the next run; the report reached the artifact.
    assert any((runner.caches / ".agentclinic_cache").iterdir())
    assert (runner.artifacts / f"agentclinic-{RUN_ID}" / "report.html").is_file()
    assert (project / "baselines/release/results.jsonl").is_file()


def diagnosing_every_case() -> Script:
    """The clinic's replies, with every case diagnosed right: the merge's gate passes."""
    base = clinic()

    def right(req: FakeRequest) -> FakeReply:
        if req.role == "doctor" and req.doctor_turn >= 2:
            case = re.search(r"complaint (\d+)\.", req.system)
            return FakeReply(f"DIAGNOSIS READY: Condition{case.group(1) if case else 0} disease")
        return base(req)

    return right


def _needs_merge() -> None:
    if shutil.which("agentclinic") is None or subprocess.run(
            ["agentclinic", "merge", "--help"], capture_output=True).returncode != 0:
        pytest.skip("this checkout has no 'agentclinic merge' (the shard recipe needs it)")


def test_the_sharded_workflow_runs_as_written(project: Path, fake_server: Start) -> None:
    _needs_merge()
    server = fake_server(clinic())
    runner = run_recipe(project, server.url, only="jobs:\n  shard:")
    job = runner.job_dirs["merge"]
    merged = (job / "reports/merged/summary.md").read_text()
    assert "**gate PASSED**" in merged and "sign-flip test over cases" in merged
    assert "- merged from: shard-1 (shard 1/3, " in merged
    summary = json.loads((job / "reports/merged/summary.json").read_text())
    assert summary["items"] == 6 and [m["shard"] for m in summary["merged_from"]] == [
        "1/3", "2/3", "3/3"]
    # The merge job's verdict reaches the job summary, after the shards' own.
    assert (project / "step_summary.md").read_text().rstrip().endswith(merged.rstrip())
    assert (runner.artifacts / "agentclinic-merged" / "report.html").is_file()


MANY = DOC.parent / "many-machines.md"


def test_the_many_machines_workflow_carries_reports_and_caches_to_the_merge(
        project: Path, fake_server: Start) -> None:
    # Reproduction (issue 23): upload-artifact@v4 (>= 4.4) leaves hidden files out, so the
    # shards' .agentclinic_cache never reached the merge job and merge-cache failed.
    _needs_merge()
    # Thirteen cases: each of the four shards gets some (2, 1, 5, 5: the hash is stable).
    write_yaml_cases(project / "cases" / "c.yaml", [make_case(i) for i in range(1, 14)])
    server = fake_server(diagnosing_every_case())
    runner = run_recipe(project, server.url, only="jobs:\n  shard:", doc=MANY, bash=False)
    job = runner.job_dirs["merge"]
    summary = json.loads((job / "reports/merged/summary.json").read_text())
    assert summary["items"] == 13 and len(summary["merged_from"]) == 4
    for k in range(1, 5):  # what each shard's artifact carried: its run and its cache
        artifact = runner.artifacts / f"shard-{k}"
        assert (artifact / f"reports/shard-{k}/results.jsonl").is_file()
        assert any((artifact / ".agentclinic_cache").iterdir())
    # The merged cache replays the whole run without a server.
    assert any((job / ".agentclinic_cache").iterdir())
    assert (runner.artifacts / "merged" / "summary.json").is_file()


def test_the_paced_workflow_shares_the_limit_on_a_server(project: Path, fake_server: Start,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The service-container recipe: four shards side by side, paced on one server (a real
    valkey-server stands in for the container), then merged."""
    _needs_merge()
    from pytest_agentclinic.testing.valkey import ValkeyProcess, ValkeyUnavailable

    try:
        valkey = ValkeyProcess().start()
    except ValkeyUnavailable as exc:
        if os.environ.get("AGENTCLINIC_REQUIRE_VALKEY"):
            pytest.fail(f"no valkey-server can start: {exc}")
        pytest.skip(f"no valkey-server can start here: {exc}")
    write_yaml_cases(project / "cases" / "c.yaml", [make_case(i) for i in range(1, 14)])
    monkeypatch.setenv("AGENTCLINIC_LIMITS_URL", valkey.url)  # the job's env, as the service
    try:
        server = fake_server(diagnosing_every_case())
        runner = run_recipe(project, server.url, only="jobs:\n  paced:", doc=MANY, bash=False)
        import redis

        client = redis.Redis.from_url(valkey.url, decode_responses=True)
        keys = list(client.keys("agentclinic:pace:*"))
        client.close()
    finally:
        valkey.__exit__(None, None, None)
    assert len(keys) == 1 and "rpm=500" in keys[0]  # the four shards took one schedule
    summary = json.loads((runner.job_dirs["paced"] / "reports/merged/summary.json").read_text())
    assert summary["items"] == 13 and len(summary["merged_from"]) == 4
    assert (runner.artifacts / "paced" / "summary.json").is_file()


def test_hidden_files_stay_behind_unless_included(tmp_path: Path) -> None:
    (tmp_path / "reports/r").mkdir(parents=True)
    (tmp_path / "reports/r/a.json").write_text("{}")
    (tmp_path / ".agentclinic_cache").mkdir()
    (tmp_path / ".agentclinic_cache/cache.db").write_text("")
    patterns = ["reports/r", ".agentclinic_cache"]
    assert upload_files(tmp_path, patterns, hidden_ok=False) == [tmp_path / "reports/r/a.json"]
    assert len(upload_files(tmp_path, patterns, hidden_ok=True)) == 2
    assert artifact_root(tmp_path, patterns) == tmp_path
    assert artifact_root(tmp_path, ["reports/r"]) == tmp_path / "reports/r"


def test_every_workflow_in_the_docs_is_tested() -> None:
    docs = [*sorted(DOC.parent.glob("*.md")), DOC.parents[1] / "README.md"]
    found = {(doc.name, next(iter(yaml.safe_load(text)["jobs"])))
             for doc in docs for language, text in blocks(doc)
             if language == "yaml" and "jobs" in (yaml.safe_load(text) or {})}
    assert found == {("ci.md", "gate"), ("ci.md", "shard"), ("many-machines.md", "shard"),
                     ("many-machines.md", "paced")}
