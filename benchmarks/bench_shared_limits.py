"""Shared pacing benchmark: four shards of one run against one provider limit.

    python benchmarks/bench_shared_limits.py [--k 4] [--unit 6] [--repeat 3] [--only-fault]

Four pytest processes (``--agent-shard K/4``, started together: a barrier holds each until
all four have collected) call a fake OpenAI server in its own process that refuses (429)
above its RPM limit, a bucket of one second's requests. ``--agent-rpm`` is the server's limit.
Each case makes ``k`` calls (0.3 s a reply); case ids are chosen so that the shards hold
the calls in the ratio asked.

* 1:1:1:5 at 600 RPM, the limit kept on a valkey-server (``--agent-limits-url``), beside
  the static split (each shard its quarter): the big shard then runs at a quarter of the
  limit while the others idle;
* 1:1:1:1 at 3,000 RPM on the server;
* 1:1:1:5 at 600 RPM on the server, the server killed mid-run and restarted 5 s later
  (empty, as without persistence): the shards fall back to their quarters and rejoin.

Printed per row: calls served, refused, records kept, the server's busy span and the minimum
the limit allows (every accepted request at the limit after the bucket's first second, plus
one reply): goal <= 1.05x with 0 refused and every record kept.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from benchlib import Server, records, server_busy

from pytest_agentclinic.cases.shard import shard_of
from pytest_agentclinic.testing.valkey import ValkeyProcess

DELAY = 0.3
#: Seconds the limits server stays down: longer than the queue of slots handed out, so the
#: shards pace on their shares for a while.
DOWN_S = 5.0
BARRIER = """
import time

def pytest_collection_modifyitems(config):
    shard = config.getoption("agent_shard").split("/")[0]
    (config.rootpath / f"ready-{shard}").touch()
    while len(list(config.rootpath.glob("ready-*"))) < 4:
        time.sleep(0.01)
"""


def write_split_cases(path: Path, per_shard: list[int]) -> None:
    """Cases whose ids hash to shard K for ``per_shard[K-1]`` of them."""
    wanted = dict(enumerate(per_shard, 1))
    chosen: list[str] = []
    i = 0
    while any(wanted.values()):
        case_id = f"b-{i:05d}"
        shard = shard_of("bench", case_id, len(per_shard))
        if wanted[shard]:
            wanted[shard] -= 1
            chosen.append(case_id)
        i += 1
    case = {"specialty": "Other", "objective": "Evaluate the patient with a cough.",
            "patient": {"history": "I cough."}, "diagnosis": "Acute bronchitis"}
    path.write_text(yaml.safe_dump({"dataset": "bench",
                                    "cases": [{"id": c, **case} for c in chosen]}))


def four_shards(work: Path, name: str, per_shard: list[int], k: int, rpm: float,
                limits_url: str | None, chaos: ValkeyProcess | None = None) -> dict[str, Any]:
    """Run the four shards together; what the server saw and what the shards kept."""
    run = work / name
    run.mkdir()
    write_split_cases(run / "cases.yaml", per_shard)
    (run / "conftest.py").write_text(BARRIER)
    server = Server(delay=DELAY, k=k, rpm=rpm)
    limits = [f"--agent-limits-url={limits_url}"] if limits_url else []
    events: list[str] = []
    try:
        shards = [subprocess.Popen(
            [sys.executable, "-m", "pytest", "cases.yaml", "-q", "-p", "no:cacheprovider",
             f"--agent-shard={s}/4", f"--agent-run-name=shard-{s}", f"--agent-rpm={rpm:g}",
             "--agent-doctor=openai/bench", f"--agent-api-base={server.url}",
             "--agent-cache=off", "--agent-concurrency=64", *limits],
            cwd=run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**__import__("os").environ, "OPENAI_API_KEY": "sk-bench"})
            for s in range(1, 5)]
        if chaos is not None:
            minimum = sum(per_shard) * k / (rpm / 60)
            threading.Thread(target=_kill_and_restart, args=(chaos, run, minimum / 2, events),
                             daemon=True).start()
        outputs = [shard.communicate(timeout=1800)[0] for shard in shards]
        codes = [shard.returncode for shard in shards]
        stats = server.stats()
    finally:
        server.stop()
    kept = sum(len(records(run / "reports" / f"shard-{s}")) for s in range(1, 5)
               if (run / "reports" / f"shard-{s}" / "results.jsonl").exists())
    errored = sum(r["outcome"] == "error" for s in range(1, 5)
                  if (run / "reports" / f"shard-{s}" / "results.jsonl").exists()
                  for r in records(run / "reports" / f"shard-{s}"))
    span, _busy = server_busy(stats["served"])
    accepted = len(stats["served"])
    rate = rpm / 60
    minimum = max(accepted - rate, 0) / rate + DELAY
    warned = sum("limits server" in out and "unreachable" in out for out in outputs)
    return {"accepted": accepted, "refused": stats["refused"], "kept": kept,
            "cases": sum(per_shard), "errored": errored, "span": span, "minimum": minimum,
            "ok": all(c in (0, 1) for c in codes), "warned": warned,
            "events": "; ".join(events)}


def _kill_and_restart(valkey: ValkeyProcess, run: Path, after: float,
                      events: list[str]) -> None:
    while len(list(run.glob("ready-*"))) < 4:
        time.sleep(0.01)
    time.sleep(after)
    valkey.kill()
    events.append(f"killed at {after:.1f} s")
    time.sleep(DOWN_S)
    valkey.start()
    events.append(f"restarted {DOWN_S:g} s later")


def row(label: str, result: dict[str, Any]) -> float:
    ratio = float(result["span"] / result["minimum"])
    print(f"| {label} | {result['accepted']:.0f} | {result['refused']:.0f} | "
          f"{result['kept']:.0f}/{result['cases']:.0f} | {result['span']:.1f} s | "
          f"{result['minimum']:.1f} s | {ratio:.3f}x |")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=4, help="calls per encounter")
    parser.add_argument("--unit", type=int, default=6,
                        help="cases of a small shard at 600 RPM (the big one holds 5x)")
    parser.add_argument("--equal", type=int, default=40,
                        help="cases of each shard at 3,000 RPM")
    parser.add_argument("--only-fault", action="store_true",
                        help="run the server-fault row alone")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each shared row (the machine's load is noisy)")
    opts = parser.parse_args()
    uneven = [opts.unit, opts.unit, opts.unit, 5 * opts.unit]
    print(f"4 shards started together, {opts.k} calls a case ({DELAY} s a reply), "
          f"--agent-rpm at the server's limit (goal <= 1.05x the minimum, 0 refused):")
    print("| run | calls served | refused | records kept | server busy span | minimum "
          "| span / minimum |")
    print("|---|---|---|---|---|---|---|")
    rows: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="agentclinic-shared-") as tmp, \
            ValkeyProcess() as valkey:
        work = Path(tmp)
        plan = [("fault", "1:1:1:5 at 600 RPM, server killed mid-run and restarted")]
        if not opts.only_fault:
            plan = [("uneven", "1:1:1:5 at 600 RPM, --agent-limits-url"),
                    ("equal", "1:1:1:1 at 3,000 RPM, --agent-limits-url"), *plan]
        for attempt in range(opts.repeat):
            for name, label in plan:
                per_shard = [opts.equal] * 4 if name == "equal" else uneven
                k, rpm = (opts.k + 1, 3000) if name == "equal" else (opts.k, 600)
                result = four_shards(work, f"{name}{attempt}", per_shard, k, rpm, valkey.url,
                                     chaos=valkey if name == "fault" else None)
                rows.setdefault(name, []).append(result)
                row(label, result)
        if not opts.only_fault:
            static = four_shards(work, "static", uneven, opts.k, 600, None)
            row("1:1:1:5 at 600 RPM, static 1/4 split (before)", static)
    goals = []
    for name, results in rows.items():
        ratios = sorted(r["span"] / r["minimum"] for r in results)
        refused = sum(r["refused"] for r in results)
        whole = all(r["kept"] == r["cases"] and r["ok"] and not r["errored"] for r in results)
        print(f"{name}: median span / minimum {statistics.median(ratios):.3f}x over "
              f"{len(ratios)} run(s), {refused:.0f} refused, every record kept: {whole}")
        goals.append(refused == 0 and whole and (name == "fault"
                                                 or statistics.median(ratios) <= 1.05))
    if "uneven" in rows:
        shared = statistics.median(r["span"] for r in rows["uneven"])
        print(f"static split / shared: {static['span'] / shared:.2f}x longer busy span")
    for fault in rows["fault"]:
        print(f"server fault: {fault['events']}; {fault['warned']:.0f} shard(s) warned they "
              f"fell back to their share; every shard finished: {bool(fault['ok'])}")
    print(f"goals {'met' if all(goals) else 'NOT met'}")


if __name__ == "__main__":
    main()
