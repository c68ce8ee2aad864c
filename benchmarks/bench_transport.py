"""Transport benchmark: thousands of LLM encounters, a rate-limited provider, CRAFT-MD's slots.

    python benchmarks/bench_transport.py [--sizes 2000 8000] [--k 3] [--delay 0.5]
                                         [--concurrency 256] [--skip rate-limit,scale,craftmd]

Every figure is measured in this run, against a fake OpenAI server in its own process:

(1) the rate-limit table: 128 encounters x 5 calls against a server enforcing 600 requests per
    minute (429 + Retry-After above it; a bucket of one second's requests), as
    ``--agent-concurrency 64`` (adaptive), the default 16 (adaptive), and 64 with
    ``--agent-rpm 600``: errored encounters, requests refused, and the server's busy span
    against the physical minimum (every accepted request at 600 per minute, plus one reply);
(2) N encounters x k calls, each answered after ``--delay`` s, ``--concurrency`` in flight:
    encounter wall against the ideal (ceil(N / concurrency) x k x delay), calls per second,
    CPU ms per call of the pytest process, and its peak RSS;
(3) CRAFT-MD with an LLM doctor and patient, 16 and 64 slots: the share of slot-seconds the server
    spent answering (calls in flight, not items, hold the slots: target >= 90%).
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from benchlib import Server, encounter_wall, pytest_run, records, server_busy, write_cases


def rate_limit_table(work: Path, n: int = 128, k: int = 5, rpm: float = 600.0,
                     delay: float = 0.5) -> None:
    write_cases(work / "rl.yaml", n)
    rows = [("--agent-concurrency 64", ["--agent-concurrency=64"]),
            ("default (16)", []),
            ("64 + --agent-rpm 600", ["--agent-concurrency=64", f"--agent-rpm={rpm:g}"])]
    print(f"(1) {n} encounters x {k} calls, server at {rpm:g} RPM ({delay:g} s per reply):")
    print("| client | errored encounters | requests refused | server busy vs the physical "
          "minimum | pytest wall |")
    print("|---|---|---|---|---|")
    for index, (label, extra) in enumerate(rows):
        server = Server(delay=delay, k=k, rpm=rpm)
        try:
            run = pytest_run(["rl.yaml", "--agent-doctor=openai/bench",
                              f"--agent-api-base={server.url}", "--agent-cache=off",
                              f"--agent-run-name=rl{index}", *extra], work)
            stats = server.stats()
        finally:
            server.stop()
        errored = sum(r["outcome"] == "error" for r in records(work / "reports" / f"rl{index}"))
        span, _busy = server_busy(stats["served"])
        accepted = len(stats["served"])
        minimum = max(accepted - rpm / 60, 0) / (rpm / 60) + delay
        refused = stats["refused"] / max(stats["calls"], 1)
        print(f"| {label} | {errored} of {n} | {stats['refused']} of {stats['calls']} "
              f"({refused:.1%}) | {span / minimum:.2f}x ({span:.1f} s / {minimum:.1f} s) | "
              f"{run.wall:.1f} s |")


def scale(work: Path, sizes: list[int], k: int, delay: float, concurrency: int) -> None:
    print(f"(2) encounters x {k} calls, {delay:g} s per call, {concurrency} in flight:")
    print("| encounters | encounter wall / ideal | calls/s | CPU ms per call | peak RSS | "
          "pytest wall |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        write_cases(work / f"s{n}.yaml", n)
        server = Server(delay=delay, k=k)
        try:
            run = pytest_run([f"s{n}.yaml", "--agent-doctor=openai/bench",
                              f"--agent-api-base={server.url}", "--agent-cache=off",
                              f"--agent-concurrency={concurrency}", f"--agent-run-name=s{n}"],
                             work)
            calls = server.calls
        finally:
            server.stop()
        wall, count = encounter_wall(work / "reports" / f"s{n}")
        ideal = math.ceil(n / concurrency) * k * delay
        print(f"| {count} | {wall:.1f} s / {ideal:.1f} s = {wall / ideal:.2f}x | "
              f"{calls / wall:.0f} | {run.cpu * 1000 / max(calls, 1):.2f} | "
              f"{run.rss_mb:.0f} MB | {run.wall:.1f} s |")


def craftmd_slots(work: Path, n: int, concurrency: int, k: int = 3,
                  delay: float = 0.5) -> None:
    write_cases(work / "craft.yaml", n, vignette=True)
    server = Server(delay=delay, k=k, mode="craftmd")
    try:
        run = pytest_run(["craft.yaml", "--agent-protocol=craftmd",
                          "--agent-doctor=openai/bench", "--agent-patient=openai/bench-patient",
                          f"--agent-api-base={server.url}", "--agent-cache=off",
                          f"--agent-concurrency={concurrency}",
                          f"--agent-run-name=craft{concurrency}"], work)
        stats = server.stats()
    finally:
        server.stop()
    span, busy = server_busy(stats["served"])
    items = len(records(work / "reports" / f"craft{concurrency}"))
    print(f"(3) CRAFT-MD, {n} cases ({items} items), {delay:g} s per call, {concurrency} slots: "
          f"{len(stats['served'])} calls in {span:.1f} s; slots busy "
          f"{busy / (concurrency * span):.0%} (target >= 90%); pytest wall {run.wall:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument("--k", type=int, default=3, help="calls per encounter in (2)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per reply in (2)")
    parser.add_argument("--concurrency", type=int, default=256, help="calls in flight in (2)")
    parser.add_argument("--craftmd-cases", type=int, default=48,
                        help="CRAFT-MD cases in (3), at least 3 per slot")
    parser.add_argument("--skip", default="", help="comma-separated: rate-limit,scale,craftmd")
    opts = parser.parse_args()
    skip = set(filter(None, opts.skip.split(",")))
    with tempfile.TemporaryDirectory(prefix="agentclinic-transport-") as tmp:
        work = Path(tmp)
        if "rate-limit" not in skip:
            rate_limit_table(work)
        if "craftmd" not in skip:
            for slots in (16, 64):
                # Each case is a chain of ~8 sequential calls: with few cases per slot the
                # last chains' tail is most of the run; 3 cases per slot measure the steady state.
                craftmd_slots(work, max(opts.craftmd_cases, 3 * slots), slots)
        if "scale" not in skip:
            scale(work, opts.sizes, opts.k, opts.delay, opts.concurrency)


if __name__ == "__main__":
    main()
