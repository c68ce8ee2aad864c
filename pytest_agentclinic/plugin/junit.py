"""JUnit XML that tells the same story as the exit status.

* The gate's verdict is written as its own testcases, ``agentclinic gate[<cell>]``, one per
  gated condition, failed exactly when that check failed (the exit status follows them).
* An item's time is its own encounter's time. Encounters run concurrently, so the first
  item's setup waits for the whole batch: without this, JUnit (and ``--durations``) would
  charge every encounter to the first item.
* An item's ``agentclinic_result`` property (its record as JSON) is in the JUnit file; it is
  dropped from the item and its reports once they are logged (see ``collect.ReleaseReported``).
"""

from __future__ import annotations

import json
from collections.abc import Generator

import pytest
from _pytest.junitxml import xml_key
from _pytest.reports import TestReport

from ..core.transcript import Transcript
from ..report.gate import GateResult

#: The file part of the gate testcases' ids (JUnit ``classname``).
GATE_CLASS = "agentclinic gate"


class EncounterTimes:
    """Registered in every process (xdist workers make the reports)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, TestReport,
                                                                              TestReport]:
        report = yield
        transcript = getattr(item, "transcript", None)
        # An encounter item's own length goes to setup (where it is awaited); the other
        # phases keep what they measured.
        if isinstance(transcript, Transcript) and call.when == "setup":
            report.duration = float(transcript.duration_s)
        return report


def write_gate_testcases(config: pytest.Config, result: GateResult) -> None:
    """Add one testcase per gate check to the ``--junitxml`` file, if one is being written."""
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for check in result.checks:
        nodeid = f"{GATE_CLASS}::{GATE_CLASS}[{check.name}]"
        text = "\n".join(check.lines)
        properties = [("agentclinic_gate", json.dumps(check.data, sort_keys=True))]
        for when in ("setup", "call", "teardown"):
            failed = when == "call" and not check.passed
            xml.pytest_runtest_logreport(TestReport(
                nodeid, (GATE_CLASS, None, f"{GATE_CLASS}[{check.name}]"), {},
                "failed" if failed else "passed", text if failed else None, when,
                sections=[("Captured stdout call", text + "\n")] if when == "call" else [],
                duration=0.0, user_properties=properties))
