"""What a user install pulls in: only what the package imports at run time (issue 23:
statsmodels, with pandas and patsy ~150 MB, was a runtime dependency only tests used)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).parent.parent
TEST_ONLY = {"statsmodels", "pandas", "patsy"}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def _imported_roots(package: Path) -> set[str]:
    roots: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                roots.add(node.module.split(".")[0])
    return roots


def test_test_only_libraries_are_in_the_test_extra_and_never_imported_by_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not _names(project["dependencies"]) & TEST_ONLY
    assert "statsmodels" in _names(project["optional-dependencies"]["test"])
    assert not _imported_roots(ROOT / "pytest_agentclinic") & TEST_ONLY
