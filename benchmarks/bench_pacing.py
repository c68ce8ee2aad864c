"""Pacing benchmark: how close ``--agent-rpm`` runs to the minimum a provider's limit allows.

    python benchmarks/bench_pacing.py [--encounters 128] [--k 5] [--rpm 600 3000]

For each RPM: N encounters x k calls (0.5 s per reply, 64 in flight, ``--agent-rpm`` at the
provider's limit) against a fake OpenAI server in its own process that refuses above that
limit (429 + Retry-After; a bucket of one second's requests, as a provider enforcing a
minute's limit per second does). Printed: requests refused, and the server's busy span
against the minimum the limit allows (every accepted request at the limit after the bucket's
first second, plus one reply): goal <= 1.05x with 0 refused.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchlib import Server, pytest_run, records, server_busy, write_cases


def paced(work: Path, n: int, k: int, rpm: float, delay: float = 0.5) -> tuple[float, int]:
    """One run at ``rpm``: busy span / minimum, and requests refused."""
    write_cases(work / "pace.yaml", n)
    name = f"pace{rpm:g}"
    server = Server(delay=delay, k=k, rpm=rpm)
    try:
        run = pytest_run(["pace.yaml", "--agent-doctor=openai/bench",
                          f"--agent-api-base={server.url}", "--agent-cache=off",
                          "--agent-concurrency=64", f"--agent-rpm={rpm:g}",
                          f"--agent-run-name={name}"], work)
        stats = server.stats()
    finally:
        server.stop()
    errored = sum(r["outcome"] == "error" for r in records(work / "reports" / name))
    span, _busy = server_busy(stats["served"])
    accepted = len(stats["served"])
    rate = rpm / 60
    minimum = max(accepted - rate, 0) / rate + delay
    print(f"| {rpm:g} | {accepted} | {stats['refused']} | {errored} | {span:.2f} s | "
          f"{minimum:.2f} s | {span / minimum:.3f}x | {run.wall:.1f} s | "
          f"{run.cpu * 1000 / max(accepted, 1):.2f} ms |")
    return span / minimum, int(stats["refused"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encounters", type=int, default=128)
    parser.add_argument("--k", type=int, default=5, help="calls per encounter")
    parser.add_argument("--rpm", type=float, nargs="+", default=[600.0, 3000.0])
    opts = parser.parse_args()
    print(f"{opts.encounters} encounters x {opts.k} calls, 64 in flight, --agent-rpm at the "
          f"server's limit (goal <= 1.05x the minimum, 0 refused):")
    print("| RPM | calls served | refused | errored encounters | server busy span | minimum "
          "| span / minimum | pytest wall | pytest CPU per call |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="agentclinic-pacing-") as tmp:
        results = [paced(Path(tmp), opts.encounters, opts.k, rpm) for rpm in opts.rpm]
    worst = max(ratio for ratio, _refused in results)
    refused = sum(r for _ratio, r in results)
    print(f"worst span / minimum {worst:.3f}x, {refused} refused "
          f"({'met' if worst <= 1.05 and refused == 0 else 'NOT met'})")


if __name__ == "__main__":
    main()
