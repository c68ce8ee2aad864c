"""Engine benchmark: prints the numbers issue #2 asks for, all measured in this one run.

    python benchmarks/bench_engine.py [--k 5] [--encounters 128] [--concurrency 64]

(a) wall time of the 107-case AgentClinic-MedQA offline run (needs ../shared);
(b) N encounters, each scripted to exactly k doctor calls, against a local server that
    answers every call after 1 s, 64 encounters in flight: wall time / ideal (2 x k s);
    beside it, the floor: the same calls made by litellm alone, no harness, same load;
(c) model calls per second on one core against a server that answers at once: litellm
    alone, and through our caller (cache off, then cache on), and our share of the time;
(d) run (b) again, fully cached: wall time and HTTP calls made.

The server runs in a separate process pinned to the other core, so it does not compete
with the harness it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets" / "agentclinic"


def _serve(delay: float, k: int, queue: Any) -> None:
    from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest

    if len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {1})

    def script(req: FakeRequest) -> FakeReply:
        if req.role == "doctor" and req.doctor_turn >= k - 1:
            return FakeReply("DIAGNOSIS READY: Condition disease", delay=delay)
        return FakeReply("Tell me more about it.", delay=delay)

    with FakeOpenAIServer(script) as server:
        queue.put(server.url)
        time.sleep(3600)


class Server:
    """A fake OpenAI server in its own process."""

    def __init__(self, delay: float, k: int = 1) -> None:
        queue: Any = mp.get_context("fork").Queue()
        self.process = mp.get_context("fork").Process(target=_serve, args=(delay, k, queue),
                                                      daemon=True)
        self.process.start()
        self.url: str = queue.get(timeout=30)

    @property
    def calls(self) -> int:
        with urllib.request.urlopen(self.url + "/_stats", timeout=10) as response:
            return int(json.load(response)["calls"])

    def stop(self) -> None:
        self.process.kill()


def pytest_run(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                   cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def encounter_wall(run_dir: Path) -> tuple[float, int]:
    records = [json.loads(line) for line in (run_dir / "results.jsonl").open()]
    start = min(r["started_at"] for r in records)
    end = max(r["started_at"] + r["duration_s"] for r in records)
    return end - start, len(records)


def bench_offline(work: Path) -> None:
    path = SHARED / "agentclinic_medqa.jsonl"
    if not path.exists():
        print(f"(a) skipped: {path} not found")
        return
    wall = pytest_run([str(path), "--agent-run-name=a"], work)
    encounters, n = encounter_wall(work / "reports" / "a")
    print(f"(a) offline AgentClinic-MedQA: {n} encounters, pytest wall {wall:.2f} s "
          f"(encounters themselves {encounters:.2f} s)")


def write_cases(path: Path, n: int) -> None:
    case = {"specialty": "Other", "objective": "Evaluate the patient with a cough.",
            "patient": {"history": "I cough."}, "diagnosis": "Condition disease"}
    path.write_text(yaml.safe_dump({"dataset": "bench",
                                    "cases": [{"id": f"b-{i:03d}", **case} for i in range(n)]}))


def bench_concurrency(work: Path, n: int, k: int, concurrency: int) -> None:
    write_cases(work / "bench.yaml", n)
    server = Server(delay=1.0, k=k)
    args = ["bench.yaml", "--agent-doctor=openai/bench", f"--agent-api-base={server.url}",
            f"--agent-concurrency={concurrency}", "--agent-cache-dir=cache"]
    try:
        wall = pytest_run([*args, "--agent-run-name=b"], work)
        calls = server.calls
        encounters, count = encounter_wall(work / "reports" / "b")
        ideal = (n / concurrency) * k * 1.0
        floor = litellm_floor(server.url, n, k, concurrency)
        print(f"(b) {count} encounters x {k} calls, 1 s per call, {concurrency} in flight: "
              f"encounter wall {encounters:.2f} s / ideal {ideal:.0f} s = "
              f"{encounters / ideal:.3f} (target <= 1.15; includes litellm's one-time import); "
              f"pytest wall {wall:.2f} s = {wall / ideal:.3f}; HTTP calls {calls} "
              f"(expected {n * k})\n"
              f"    floor, litellm alone (already imported) under the same load: {floor:.2f} s "
              f"= {floor / ideal:.3f}; the harness's encounter wall / floor = "
              f"{encounters / floor:.3f}")
        before = server.calls
        wall = pytest_run([*args, "--agent-run-name=d"], work)
        print(f"(d) same run again, fully cached: pytest wall {wall:.2f} s (target <= 5 s), "
              f"HTTP calls made {server.calls - before} (target 0)")
    finally:
        server.stop()


def litellm_floor(url: str, n: int, k: int, concurrency: int) -> float:
    """Seconds litellm alone needs for ``n`` sequences of ``k`` calls, ``concurrency`` at once."""
    from pytest_agentclinic.llm import client

    litellm = client._load()

    async def sequence(i: int, semaphore: asyncio.Semaphore) -> None:
        async with semaphore:
            messages: list[dict[str, str]] = [
                {"role": "system", "content": "You are a physician (floor)"}]
            for turn in range(k):
                await litellm.acompletion(model="openai/floor", messages=messages,
                                          api_base=url, api_key="k", timeout=60, max_retries=0)
                messages = [*messages, {"role": "assistant", "content": f"q{turn}"},
                            {"role": "user", "content": f"a{i}"}]

    async def run() -> float:
        semaphore = asyncio.Semaphore(concurrency)
        await litellm.acompletion(model="openai/floor", messages=[{"role": "user", "content": "w"}],
                                  api_base=url, api_key="k", timeout=60, max_retries=0)
        started = time.perf_counter()
        await asyncio.gather(*(sequence(i, semaphore) for i in range(n)))
        return time.perf_counter() - started

    return asyncio.run(run())


async def _rate(call: Any, n: int, concurrency: int = 32) -> float:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            await call(i)

    await call(-1)  # warm the connection pool and litellm's lazy imports
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - started)


def bench_overhead(work: Path, n: int) -> None:
    from pytest_agentclinic.llm import client
    from pytest_agentclinic.llm.cache import CacheMode, ResponseCache
    from pytest_agentclinic.llm.caller import CallSettings, ModelCaller

    if len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {0})
    server = Server(delay=0.0)
    litellm = client._load()

    async def raw(i: int) -> None:
        await litellm.acompletion(model="openai/x", messages=[{"role": "user", "content": f"{i}"}],
                                  api_base=server.url, api_key="k", timeout=30, max_retries=0)

    def ours(mode: CacheMode) -> Any:
        caller = ModelCaller(CallSettings(api_base=server.url, timeout=30),
                             ResponseCache(work / f"overhead-{mode.value}", mode))

        async def call(i: int) -> None:
            await caller.complete(role="doctor", model="openai/x", case_id="c", sample=0,
                                  messages=[{"role": "user", "content": f"{i}"}],
                                  prompt_version="v")
        return call

    os.environ["OPENAI_API_KEY"] = "sk-bench"
    try:
        lite = asyncio.run(_rate(raw, n))
        off = asyncio.run(_rate(ours(CacheMode.OFF), n))
        cached = asyncio.run(_rate(ours(CacheMode.READ_WRITE), n))
    finally:
        server.stop()
    share = (1 / off - 1 / lite) / (1 / off)
    print(f"(c) one core, instant server: litellm alone {lite:.0f} calls/s; through our "
          f"caller {off:.0f} calls/s (cache off), {cached:.0f} calls/s (cache on, all misses); "
          f"our share of the per-call time {max(share, 0.0):.1%} "
          f"({(1 / off - 1 / lite) * 1000:.2f} ms of {1000 / off:.2f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5, help="LLM calls per encounter in (b)")
    parser.add_argument("--encounters", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--calls", type=int, default=1000, help="calls per rate in (c)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentclinic-bench-") as tmp:
        work = Path(tmp)
        bench_offline(work)
        bench_concurrency(work, opts.encounters, opts.k, opts.concurrency)
        bench_overhead(work, opts.calls)


if __name__ == "__main__":
    main()
