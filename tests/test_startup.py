"""A pytest run that does not use the plugin pays (almost) nothing for it: the plugin loads
in every pytest run of its user's environment. Timings live in benchmarks/bench_startup.py;
this checks what is imported, which does not depend on the machine's load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
HEAVY = ("litellm", "aiohttp", "numpy", "scipy", "pydantic", "yaml",
         "pytest_agentclinic.plugin.session", "pytest_agentclinic.protocols.agentclinic",
         "pytest_agentclinic.protocols.craftmd", "pytest_agentclinic.grading",
         "pytest_agentclinic.report.tables", "pytest_agentclinic.report.reducers",
         "pytest_agentclinic.report.rundir", "pytest_agentclinic.report.gate",
         "pytest_agentclinic.agents", "pytest_agentclinic.cases",
         "pytest_agentclinic.core.case", "pytest_agentclinic.llm.caller")


def _modules(cwd: Path, *args: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True,
                         text=True, check=True)
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
