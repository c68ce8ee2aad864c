"""The suite's ``xdist_group`` marks hold under ``--dist loadgroup`` (tests/xdist_groups.py):
the tests of one group run on one worker, which builds their shared fixtures once."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The hook, as conftest.py takes it (in each worker, a process of its own).
CONFTEST = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from xdist_groups import pytest_collection_modifyitems
"""

GROUPED = """
import os
import pytest


@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    with open("workers.txt", "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.mark.parametrize("i", range(6))
def test_free(i):
    pass
"""


def test_a_group_runs_on_one_worker(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_groups=GROUPED)
    result = pytester.runpytest("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                                "-v")
    result.assert_outcomes(passed=12)
    workers = (pytester.path / "workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, workers
    result.stdout.fnmatch_lines(["*PASSED test_groups.py::test_grouped[[]0[]]@shared*"])
