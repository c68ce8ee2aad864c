"""JUnit XML that tells the same story as the exit status.

* With a gate, the gate decides the build, so the gate is one testcase,
  ``agentclinic gate``, failed exactly when the gate failed (the exit status follows it); its
  checks (one per gated condition, with their numbers) are its properties and system-out.
* A misdiagnosis under a gate is a measurement the run took, not a test that did not run:
  it is a testcase without ``<skipped>`` (pytest shows it as xfailed in the terminal), and
  carries its verdict, as every encounter item does: the ``agentclinic_outcome`` property
  (``correct``, ``incorrect``, ``no_diagnosis``, ``error``), and for a miss the message
  (expected, given, transcript) in system-out. Without a gate a misdiagnosis is a failure.
* An item's time is its own encounter's time. Encounters run concurrently, so the first
  item's setup waits for the whole batch: without this, JUnit (and ``--durations``) would
  charge every encounter to the first item.
* An item's ``agentclinic_result`` property (its record as JSON) is in the JUnit file; it is
  dropped from the item and its reports once they are logged (see ``item_memory.ReleaseReported``).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest
from _pytest.junitxml import LogXML, bin_xml_escape, xml_key
from _pytest.reports import TestReport

from ..core.transcript import Transcript
from .item import RECORD_PROPERTY

if TYPE_CHECKING:
    # The gate's reports import numpy (~0.14 s): a run that collects cases but gates
    # nothing, or only collects them, does not pay it.
    from ..report.gate import GateResult

#: The gate testcase's id (JUnit ``classname`` and ``name``).
GATE_CLASS = "agentclinic gate"
#: The property naming an encounter item's outcome.
OUTCOME_PROPERTY = "agentclinic_outcome"


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


class MeasuredItems:
    """Writes each encounter item's verdict into its JUnit testcase, and a gated miss as the
    measurement it is rather than as *skipped* (dashboards read skipped as "not run").

    Runs after pytest's JUnit writer has handled the call report (``trylast``), and edits the
    testcase that writer keeps open until the teardown report."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: TestReport) -> None:
        xml = self.config.stash.get(xml_key, None)
        # The call's report, or the setup's when an infrastructure error ended the item there.
        if xml is None or not (report.when == "call"
                               or (report.when == "setup" and report.failed)):
            return
        record = next((v for name, v in report.user_properties if name == RECORD_PROPERTY),
                      None)
        if not isinstance(record, str):
            return  # not an encounter item
        testcase = xml.node_reporter(report)
        testcase.add_property(OUTCOME_PROPERTY, json.loads(record).get("outcome", "?"))
        if report.skipped and hasattr(report, "wasxfail"):
            _measured(xml, testcase.nodes, str(report.wasxfail))


def _measured(xml: LogXML, nodes: list[ET.Element], message: str) -> None:
    """Turn the testcase's ``<skipped type="pytest.xfail">`` into a measured item whose
    system-out is the miss's message, and count it as passed in the suite's totals."""
    skipped = [node for node in nodes if node.tag == "skipped"]
    if not skipped:
        return
    for node in skipped:
        nodes.remove(node)
        xml.stats["skipped"] -= 1
    xml.stats["passed"] += 1
    out = ET.Element("system-out")
    out.text = bin_xml_escape(message.removeprefix("reason: "))
    nodes.append(out)


def write_gate_testcases(config: pytest.Config, result: GateResult) -> None:
    """Add the gate's one testcase to the ``--junitxml`` file, if one is being written."""
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    verdict = "PASSED" if result.passed else "FAILED"
    failed = [line for check in result.checks if not check.passed for line in check.lines]
    properties = [("agentclinic_gate_verdict", verdict),
                  *((f"agentclinic_gate[{c.name}]", json.dumps(
                      {"passed": c.passed, **c.data}, sort_keys=True)) for c in result.checks)]
    for when in ("setup", "call", "teardown"):
        call_failed = when == "call" and not result.passed
        report = TestReport(
            f"{GATE_CLASS}::{GATE_CLASS}", (GATE_CLASS, None, GATE_CLASS), {},
            "failed" if call_failed else "passed",
            "\n".join([f"gate {verdict}", *failed]) if call_failed else None, when, [],
            duration=0.0, user_properties=properties)
        if when == "teardown":  # every check's lines, passed or failed
            out = ET.Element("system-out")
            out.text = bin_xml_escape("\n".join([f"gate {verdict}", *result.lines]))
            xml.node_reporter(report).nodes.append(out)
        xml.pytest_runtest_logreport(report)
