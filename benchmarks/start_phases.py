"""Time stamps of a run's start in every process, a pytest plugin loaded with
``-p start_phases`` (``bench_10k.py --probe phases``).

Each process writes, to ``$START_PHASES_DIR/<worker id or controller>.json``, when (epoch
seconds) it started (from /proc), had configured (every plugin imported and configured),
began and ended collecting, and met its first item; the controller also when each worker's
collection reached it. :func:`print_phases` prints them after the run's start: where the
seconds before the first request go (workers starting one after the other, imports,
collection, waiting for the slowest worker's collection, the first encounter's own path).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import pytest


def _process_start() -> float:
    with open("/proc/stat") as fh:
        boot = next(int(line.split()[1]) for line in fh if line.startswith("btime"))
    with open("/proc/self/stat") as fh:
        ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
    return boot + ticks / os.sysconf("SC_CLK_TCK")


EVENTS: dict[str, Any] = {"started": _process_start()}


def _who(config: pytest.Config) -> str:
    worker = getattr(config, "workerinput", None)
    return str(worker["workerid"]) if worker else "controller"


def _record(config: pytest.Config, event: str) -> None:
    EVENTS.setdefault(event, time.time())
    path = Path(os.environ["START_PHASES_DIR"]) / f"{_who(config)}.json"
    path.with_suffix(".tmp").write_text(json.dumps(EVENTS))
    path.with_suffix(".tmp").replace(path)  # whole, however the process ends


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    _record(config, "configured")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    _record(session.config, "collecting")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _record(session.config, "collected")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    _record(item.config, "first item")


@pytest.hookimpl(optionalhook=True, trylast=True)
def pytest_configure_node(node: Any) -> None:
    # After the plugin's own, which holds a node of a staggered start until the leads have
    # started their encounters: when the controller let each node go.
    EVENTS.setdefault("nodes set up", []).append(time.time())
    _record(node.config, "first node set up")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: Any) -> None:
    del ids
    EVENTS.setdefault("workers collected", []).append(time.time())
    _record(node.config, "first worker collected")


PHASES = ("started", "configured", "collecting", "collected", "first item")


def print_phases(folder: Path, started: float) -> None:
    """The phases, in seconds after ``started`` (epoch): the workers' first, median and
    last (under a staggered start the first are the leads, which the controller set up
    while it held the others: ``plugin/xdist_stagger.py``)."""
    found = {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}
    controller = found.pop("controller", {})
    cells = []
    for phase in PHASES:
        times = [events[phase] - started for events in found.values() if phase in events]
        if times:
            cells.append(f"{phase} {min(times):.2f} / {statistics.median(times):.2f} / "
                         f"{max(times):.2f}")
    print(f"  the workers' start (s after the run's start; first / median / last of "
          f"{len(found)}): {', '.join(cells)}")
    set_up = controller.get("nodes set up", [])
    if set_up:
        print(f"  the controller set its {len(set_up)} workers up (sent them their code) "
              f"from {min(set_up) - started:.2f} to {max(set_up) - started:.2f} s: "
              + ", ".join(f"{at - started:.2f}" for at in set_up))
    collected = controller.get("workers collected", [])
    if collected:
        print(f"  the controller: configured {controller['configured'] - started:.2f} s; "
              f"the workers' collections reached it from {min(collected) - started:.2f} to "
              f"{max(collected) - started:.2f} s (xdist sends items once all have)")
