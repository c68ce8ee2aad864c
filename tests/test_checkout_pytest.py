"""A plain `pytest` in the checkout runs what the README's test command runs (it collected
every folder, the whole suite in one process: about 40 minutes on a busy machine)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).parent.parent


def test_the_ini_runs_the_readmes_test_command() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^pytest tests ([^#\n]*?)\s*#", readme, re.MULTILINE)
    assert command is not None
    assert ini["testpaths"] == ["tests"]
    assert ini["addopts"] == shlex.split(command.group(1))
