"""The status line and --agent-max-cost, in one process and under xdist."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
#: A priced model (litellm's cost map) behind the fake server: 1000 + 1000 tokens a call.
PRICED = "openai/gpt-4o-mini"
STATUS = re.compile(r"agentclinic: (\d+)/(\d+) done, (\d+) in flight \| (\d+) calls "
                    r"\((\d+) cached\) \| (\d+) retries, (\d+) x 429 \| \S+ tokens, \$([\d.]+)")


def _args(server: FakeOpenAIServer, *extra: str) -> list[str]:
    return ["c.yaml", f"--agent-doctor={PRICED}", f"--agent-api-base={server.url}",
            "--agent-backoff=0.01", "--agent-perception=no", "-p", "no:cacheprovider",
            "--agent-cache=off", *extra]


def _doctor(delay: float = 0.0, refuse_first: bool = False) -> Script:
    """Asks once, then diagnoses; each reply costs 1000 prompt + 1000 completion tokens."""

    def script(req: FakeRequest) -> FakeReply:
        if refuse_first and req.index == 0:
            return FakeReply("slow down", status=429, headers={"Retry-After": "0"})
        text = "Where?" if req.doctor_turn == 0 else "DIAGNOSIS READY: Condition1 disease"
        return FakeReply(text, delay=delay, prompt_tokens=1000, completion_tokens=1000)

    return script


def _summary(root: Path) -> dict[str, object]:
    (run,) = (root / "reports").iterdir()
    return dict(json.loads((run / "summary.json").read_text()))


def _spent(root: Path) -> tuple[float, int]:
    (run,) = (root / "reports").iterdir()
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return sum(u["cost_usd"] for r in records for u in r["usage"].values()), len(records)


def _outcomes(root: Path) -> dict[str, str]:
    """The run's outcomes by case id."""
    (run,) = (root / "reports").iterdir()
    lines = (run / "results.jsonl").read_text().splitlines()
    return {r["case_id"]: r["outcome"] for r in map(json.loads, lines)}


def _status_lines(result: pytest.RunResult, total: int) -> list[re.Match[str]]:
    status = [m for m in map(STATUS.search, result.outlines) if m]
    assert status, result.stdout.str()
    assert {int(m.group(2)) for m in status} == {total}
    assert any(int(m.group(3)) > 0 for m in status)  # encounters seen in flight
    return status


def _ends_on_totals(status: list[re.Match[str]], root: Path) -> None:
    """The last line is the run's totals (a tick may predate the last encounters)."""
    spent, played = _spent(root)
    last = status[-1]
    assert (int(last.group(1)), int(last.group(3))) == (played, 0)
    assert float(last.group(8)) == pytest.approx(spent, abs=5e-5) and spent > 0


def test_status_line_counts_encounters_calls_retries_and_cost(
        pytester: pytest.Pytester, fake_server: Start, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 5)])
    server = fake_server(_doctor(delay=0.3, refuse_first=True))
    result = pytester.runpytest(*_args(server, "--agent-progress=0.2",
                                       "--agent-concurrency=2"), *xdist)
    result.assert_outcomes(passed=1, failed=3)
    status = _status_lines(result, 4)
    _ends_on_totals(status, pytester.path)
    # Printed while items wait: never more than the run's 8 calls + 1 refused attempt.
    assert all(int(m.group(1)) <= 4 and int(m.group(4)) <= 8 for m in status)
    # The 429 on the first call is counted, with its retry.
    assert any(int(m.group(6)) == 1 and int(m.group(7)) == 1 for m in status)
    assert int(status[0].group(1)) <= int(status[-1].group(1))


def test_no_status_line_when_off_or_fast(pytester: pytest.Pytester, fake_server: Start,
                                         xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    server = fake_server(_doctor(delay=0.2))
    for extra in (["--agent-progress=off"], []):  # the default: a line every 30 s in a log
        result = pytester.runpytest(*_args(server, *extra), *xdist)
        assert not any(STATUS.search(line) for line in result.outlines)
    result = pytester.runpytest(*_args(server, "--agent-progress=soon"), *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-progress: expected auto, off or a number*"])


def test_max_cost_stops_starting_encounters(pytester: pytest.Pytester,
                                            fake_server: Start, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 6)])
    server = fake_server(_doctor())
    # The uncapped run is the reference (the price of an encounter, each item's outcome),
    # played in one process; the capped run under test is played in each worker mode.
    pytester.runpytest(*_args(server, "--agent-concurrency=1"))  # priced at all?
    per_encounter, played = _spent(pytester.path)
    per_encounter /= played
    assert per_encounter > 0, "litellm has no price for the model: the test cannot work"
    uncapped = _outcomes(pytester.path)
    assert len(uncapped) == 5
    for run in (pytester.path / "reports").iterdir():
        shutil.rmtree(run)
    # Two encounters fit under 2.5 encounters' cost; a third would pass it.
    limit = 2.5 * per_encounter
    result = pytester.runpytest(*_args(server, "--agent-concurrency=1",
                                       f"--agent-max-cost={limit}",
                                       "--agent-min-accuracy=0.5"), *xdist)
    outcomes = _outcomes(pytester.path)
    # One process plays the two that fit. Under xdist a worker may start one more before the
    # other's published spending shows (the xdist test below): which two or three items played
    # depends on the workers' timing, so the expected outcomes come from what played.
    extra = max(int(xdist[1]) - 1, 0) if xdist[:1] == ["-n"] else 0
    assert 2 <= len(outcomes) <= 2 + extra
    assert outcomes.items() <= uncapped.items()  # each played item as in the uncapped run
    correct, unplayed = list(outcomes.values()).count("correct"), 5 - len(outcomes)
    # Under a gate a miss is xfailed; unplayed items are skipped, and not judged.
    result.assert_outcomes(passed=correct, xfailed=len(outcomes) - correct, skipped=unplayed)
    passed = correct / len(outcomes) >= 0.5
    assert result.ret == (0 if passed else 1)
    result.stdout.fnmatch_lines([
        f"*the run stopped on cost: {unplayed} item(s) not played*",
        f"{PRICED}: accuracy * ({correct}/{len(outcomes)}, {len(outcomes)} cases, *",
        f"gate {'PASSED' if passed else 'FAILED'}*"])
    spent, records = _spent(pytester.path)
    assert records == len(outcomes) and spent <= limit + extra * per_encounter
    stopped = _summary(pytester.path)["stopped_on_cost"]
    assert isinstance(stopped, dict) and stopped["unplayed_items"] == unplayed
    assert stopped["max_cost_usd"] == pytest.approx(limit)


def test_status_line_and_max_cost_hold_for_the_whole_run_under_xdist(
        pytester: pytest.Pytester, fake_server: Start) -> None:
    """Also the reproduction of a hang: with ``--agent-concurrency=1`` under xdist a worker
    was sent one item at a time and waited for ever for the next."""
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 9)])
    server = fake_server(_doctor(delay=0.3))
    per_encounter = 2 * (1000 * 0.15 + 1000 * 0.6) / 1e6  # gpt-4o-mini's price, two calls
    limit = 3.5 * per_encounter
    result = pytester.runpytest(*_args(server, "-n", "2", "--agent-concurrency=1",
                                       f"--agent-max-cost={limit}", "--agent-progress=0.3"))
    _ends_on_totals(_status_lines(result, 8), pytester.path)
    outcomes = result.parseoutcomes()
    spent, played = _spent(pytester.path)
    assert outcomes.get("skipped", 0) == 8 - played > 0
    # Each worker sees the other's spending; at most one encounter per worker in flight.
    assert spent <= limit + 2 * per_encounter + 1e-12
    result.stdout.fnmatch_lines(["*the run stopped on cost*"])


class _Writer:
    def __init__(self) -> None:
        self.text = ""
        self._file = self

    @property
    def width_of_current_line(self) -> int:
        return len(self.text.rsplit("\n", 1)[-1].rsplit("\r", 1)[-1])

    fullwidth = 100

    def write(self, text: str, flush: bool = False) -> None:
        self.text += text

    def flush(self) -> None:
        pass

    def line(self, text: str = "") -> None:
        self.text += text + "\n"


_CONTROL = re.compile(r"\x1b\[(\d*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


def screen(text: str) -> list[str]:
    """What a terminal shows after ``text``: the escape sequences the status line uses
    (erase to end of line, cursor up, column) applied, colours dropped."""
    rows: list[list[str]] = [[]]
    r = c = 0
    for m in _CONTROL.finditer(text):
        token = m.group(0)
        if token == "\r":
            c = 0
        elif token == "\n":
            r += 1
            rows += [[] for _ in range(r + 1 - len(rows))]
        elif m.group(2) == "K":
            del rows[r][c:]
        elif m.group(2) == "A":
            r = max(r - int(m.group(1) or 1), 0)
        elif m.group(2) == "G":
            c = int(m.group(1) or 1) - 1
        elif m.group(2) is None:
            row = rows[r]
            row += [" "] * (c - len(row))
            row[c:c + len(token)] = list(token)
            c += len(token)
    return ["".join(row).rstrip() for row in rows]


def test_on_a_terminal_the_line_is_redrawn_below_pytest_and_erased_before_it_writes() -> None:
    from types import SimpleNamespace

    from pytest_agentclinic.llm.stats import CallStats
    from pytest_agentclinic.plugin.counters import RunStatus, SharedCounters
    from pytest_agentclinic.plugin.status_line import StatusLine
    from pytest_agentclinic.protocols.runner import EncounterRunner

    tr = SimpleNamespace(_tw=_Writer(), currentfspath="c.yaml", verbosity=0, showfspath=False,
                         isatty=lambda: True)
    config: Any = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: tr))
    runner, stats = EncounterRunner(2), CallStats()
    counters = SharedCounters(config, lambda: RunStatus.of(runner, stats))
    plugin = StatusLine(config, None, counters, on_wait=lambda tick: None)
    plugin._every, plugin._live = plugin._cadence()
    assert plugin._live
    tr._tw.write("c.yaml ..")
    plugin.total = 3
    plugin._show()
    runner.done = 1
    plugin._show()
    shown = screen(tr._tw.text)
    assert shown[0] == "c.yaml .." and shown[1].startswith("agentclinic: 1/3 done")
    assert len(shown) == 2  # redrawn in place: one copy
    plugin._end_line("c.yaml::t-02")  # pytest is about to write: our line is erased first
    tr._tw.write(".")  # ... and pytest's letter lands on its own line
    assert screen(tr._tw.text) == ["c.yaml ...", ""]


def test_a_run_without_encounters_prints_no_status_line(pytester: pytest.Pytester) -> None:
    # Reproduction: a project's own test suite under -n 2 (the plugin installed, no case
    # files) printed "agentclinic: 0 done, 0 in flight ..." every 30 s.
    pytester.makepyfile(test_plain="""
import time

def test_slow():
    time.sleep(1.5)
""")
    result = pytester.runpytest("-n", "2", "--agent-progress=0.2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not any(re.search(r"agentclinic: \d+(/\d+)? done", line)
                   for line in result.outlines), result.outlines


def test_in_a_real_terminal_no_copy_of_the_line_is_left_and_progress_stays_whole(
        tmp_path: Path, fake_server: Start) -> None:
    # Reproduction (issue 23): the live line left 13 copies of itself in the scrollback and
    # split pytest's progress line. The replies wait until the line has been seen, so it is
    # drawn at least once whatever the machine's speed.
    import io
    import os
    import sys
    import threading

    pexpect = pytest.importorskip("pexpect")
    seen = threading.Event()

    def script(req: FakeRequest) -> FakeReply:
        seen.wait(60)
        return FakeReply("DIAGNOSIS READY: Condition1 disease")

    server = fake_server(script)
    write_yaml_cases(tmp_path / "c.yaml", [make_case(i) for i in range(1, 4)])
    env = {**os.environ, "TERM": "xterm", "PYTHONPATH": os.pathsep.join(sys.path)}
    child = pexpect.spawn(sys.executable, [
        "-m", "pytest", "c.yaml", "--agent-doctor=openai/x", f"--agent-api-base={server.url}",
        "--agent-cache=off", "--agent-progress=0.05", "-p", "no:cacheprovider",
        "-p", "no:randomly"], cwd=str(tmp_path), env=env, dimensions=(40, 120),
        encoding="utf-8", timeout=120)
    child.logfile_read = io.StringIO()
    child.expect(r"agentclinic: \d+/3 done")
    seen.set()
    child.expect(pexpect.EOF)
    child.close()
    output = child.logfile_read.getvalue()
    shown = screen(output)
    assert not [row for row in shown if "agentclinic: " in row and " done" in row], shown
    assert any(re.fullmatch(r"c\.yaml [.F]{3} +\[100%\]", row) for row in shown), shown
