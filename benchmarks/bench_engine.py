"""Engine benchmark: prints the numbers issue #2 asks for, all measured in this one run.

    python benchmarks/bench_engine.py [--k 5] [--encounters 128] [--concurrency 64]

(a) wall time of the 107-case AgentClinic-MedQA offline run (needs ../shared);
(b) N encounters, each scripted to exactly k doctor calls, against a local server that
    answers every call after 1 s, 64 encounters in flight: encounter wall / ideal
    (N / 64 x k s) through the aiohttp fast path and through litellm, interleaved A/B runs
    (medians), with the pytest process's CPU per call; the harness CPU per call with the
    cache on, whole process and beyond start-up, as ratios to the 3 ms goal and to the floor
    (a process making the same calls with bare aiohttp), interleaved; beside it, the same
    calls made by litellm alone, no harness, same load;
(c) CPU time per model call against a server that answers at once (CPU, not wall-clock
    rates: on a shared machine those measure the neighbours): litellm alone, our caller on
    litellm (cache off, then on), our caller on the fast path; the calls/s ceiling of a core;
(d) run (b) again, fully cached: wall time (as a ratio to the 5 s goal), CPU and HTTP calls
    made, beside the same pytest collecting only, interleaved.

pytest runs as an installed package does, with bytecode (see benchlib.measure).

The server runs in a separate process pinned to the other core, so it does not compete
with the harness it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import (
    Run,
    Server,
    bare_aiohttp_run,
    bare_import_run,
    encounter_wall,
    pytest_run,
    write_cases,
)

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets" / "agentclinic"
#: Issue 24's goals: harness CPU per model call, and the wall of the fully cached re-run (d).
CPU_GOAL_MS = 3.0
CACHED_GOAL_S = 5.0


def bench_offline(work: Path) -> None:
    path = SHARED / "agentclinic_medqa.jsonl"
    if not path.exists():
        print(f"(a) skipped: {path} not found")
        return
    wall = pytest_run([str(path), "--agent-run-name=a"], work).wall
    encounters, n = encounter_wall(work / "reports" / "a")
    print(f"(a) offline AgentClinic-MedQA: {n} encounters, pytest wall {wall:.2f} s "
          f"(encounters themselves {encounters:.2f} s)")


def bench_concurrency(work: Path, n: int, k: int, concurrency: int, rounds: int) -> None:
    write_cases(work / "bench.yaml", n)
    server = Server(delay=1.0, k=k)
    args = ["bench.yaml", "--agent-doctor=openai/bench", f"--agent-api-base={server.url}",
            f"--agent-concurrency={concurrency}", "--agent-cache-dir=cache"]
    ideal = (n / concurrency) * k * 1.0
    ratios: dict[str, list[float]] = {"auto": [], "litellm": []}
    cpu: dict[str, list[float]] = {"auto": [], "litellm": []}
    try:
        # A/B interleaved, so both transports see the same machine load.
        for index in range(rounds):
            for transport in ratios:
                name = f"b-{transport}-{index}"
                run = pytest_run([*args, f"--agent-transport={transport}", "--agent-cache=off",
                                  f"--agent-run-name={name}"], work)
                encounters, _count = encounter_wall(work / "reports" / name)
                ratios[transport].append(encounters / ideal)
                cpu[transport].append(run.cpu * 1000 / (n * k))
        print(f"(b) {n} encounters x {k} calls, 1 s per call, {concurrency} in flight, "
              f"ideal {ideal:.0f} s; medians of {rounds} interleaved runs (target <= 1.15):")
        for transport, label in (("auto", "aiohttp fast path"), ("litellm", "litellm")):
            ratio = statistics.median(ratios[transport])
            runs = ", ".join(f"{r:.3f}" for r in ratios[transport])
            print(f"    {label:18} encounter wall / ideal {ratio:.3f} (runs: {runs}); "
                  f"pytest CPU {statistics.median(cpu[transport]):.2f} ms per call")
        harness_cpu(work, args, server.url, (n, k, concurrency), rounds)
        floor = litellm_floor(server.url, n, k, concurrency)
        print(f"    floor, litellm alone (already imported) under the same load: {floor:.2f} s "
              f"= {floor / ideal:.3f}")
        cached_rerun(work, args, server, rounds)
    finally:
        server.stop()


def harness_cpu(work: Path, args: list[str], url: str, shape: tuple[int, int, int],
                rounds: int = 3) -> None:
    """CPU per call of the pytest process with the cache on (read-write, a fresh directory
    per run: every call a miss, stored), interleaved with its baselines: the same process
    collecting only (start-up, imports, collection), and the floor, a process making the same
    calls with bare aiohttp (and one only importing it)."""
    n, k, concurrency = shape
    calls = n * k
    per_call: dict[str, list[float]] = {"run": [], "beyond": [], "floor": [], "floor_beyond": []}
    for index in range(rounds):
        run = pytest_run([*args, f"--agent-cache-dir=cpu-cache-{index}",
                          f"--agent-run-name=cpu-{index}"], work)
        collect = pytest_run([*args, "--collect-only"], work)
        floor = bare_aiohttp_run(url, n, k, concurrency, work)
        start = bare_import_run(work)
        per_call["run"].append(run.cpu * 1000 / calls)
        per_call["beyond"].append((run.cpu - collect.cpu) * 1000 / calls)
        per_call["floor"].append(floor.cpu * 1000 / calls)
        per_call["floor_beyond"].append((floor.cpu - start.cpu) * 1000 / calls)
    med = {name: statistics.median(values) for name, values in per_call.items()}
    print(f"    harness CPU per call, cache on, aiohttp fast path, medians of {rounds} "
          f"interleaved runs:\n"
          f"      whole pytest process {med['run']:.2f} ms = {med['run'] / CPU_GOAL_MS:.2f}x "
          f"the goal ({CPU_GOAL_MS:.0f} ms) = {med['run'] / med['floor']:.2f}x the floor "
          f"(bare aiohttp, whole process: {med['floor']:.2f} ms)\n"
          f"      beyond start-up and collection {med['beyond']:.2f} ms = "
          f"{med['beyond'] / med['floor_beyond']:.2f}x the floor beyond its imports "
          f"({med['floor_beyond']:.2f} ms)")
    compiled = compile_cost(work, args)
    print(f"      (run as installed, with bytecode; compiling the package from source on every "
          f"run, as PYTHONDONTWRITEBYTECODE=1 does in a fresh checkout, adds {compiled:.2f} s "
          f"of CPU = {compiled * 1000 / calls:.2f} ms per call here)")


def compile_cost(work: Path, args: list[str]) -> float:
    """CPU seconds a run spends compiling (and assert-rewriting) the package when no
    bytecode of it exists and none is written: collect-only over a copy without
    ``__pycache__``, beside the same with bytecode."""
    source = work / "uncompiled"
    shutil.copytree(ROOT / "pytest_agentclinic", source / "pytest_agentclinic",
                    ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    path = os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")])
    bare = pytest_run([*args, "--collect-only"], work, bytecode=False, pythonpath=path)
    cached = pytest_run([*args, "--collect-only"], work)
    return bare.cpu - cached.cpu


def cached_rerun(work: Path, args: list[str], server: Server, rounds: int = 3) -> None:
    """(d): run (b) again with every reply in the cache, beside the same process collecting
    only (the fixed cost of any pytest run over these cases), interleaved."""
    pytest_run([*args, "--agent-run-name=d-seed"], work)
    before = server.calls
    runs: list[Run] = []
    collects: list[Run] = []
    for index in range(rounds):
        runs.append(pytest_run([*args, f"--agent-run-name=d-{index}"], work))
        collects.append(pytest_run([*args, "--collect-only"], work))
    wall = statistics.median(r.wall for r in runs)
    cpu = statistics.median(r.cpu for r in runs)
    collect_wall = statistics.median(r.wall for r in collects)
    collect_cpu = statistics.median(r.cpu for r in collects)
    print(f"(d) same run again, fully cached, medians of {rounds}: pytest wall {wall:.2f} s = "
          f"{wall / CACHED_GOAL_S:.2f}x the goal ({CACHED_GOAL_S:.0f} s), CPU {cpu:.2f} s; "
          f"collecting only: wall {collect_wall:.2f} s, CPU {collect_cpu:.2f} s "
          f"(the rerun {wall / collect_wall:.2f}x that); HTTP calls made "
          f"{server.calls - before} (target 0)")


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


async def _cpu_per_call(call: Any, close: Any, n: int, concurrency: int = 32) -> float:
    """CPU seconds per call of this process (wall-clock rates on a shared machine measure the
    neighbours too: that is how this bench once printed negative shares)."""
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            await call(i)

    await call(-1)  # warm the connection pool and litellm's lazy imports
    started = time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    spent = (time.process_time() - started) / n
    if close is not None:
        await close()
    return spent


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

    def ours(mode: CacheMode, transport: str) -> tuple[Any, Any]:
        caller = ModelCaller(CallSettings(api_base=server.url, timeout=30, concurrency=32,
                                          transport=transport),
                             ResponseCache(work / f"overhead-{mode.value}-{transport}", mode))

        async def call(i: int) -> None:
            await caller.complete(role="doctor", model="openai/x", case_id="c", sample=0,
                                  messages=[{"role": "user", "content": f"{transport}{i}"}],
                                  prompt_version="v")
        return call, caller.aclose

    os.environ["OPENAI_API_KEY"] = "sk-bench"
    try:
        lite = asyncio.run(_cpu_per_call(raw, None, n))
        off = asyncio.run(_cpu_per_call(*ours(CacheMode.OFF, "litellm"), n))
        cached = asyncio.run(_cpu_per_call(*ours(CacheMode.READ_WRITE, "litellm"), n))
        fast = asyncio.run(_cpu_per_call(*ours(CacheMode.OFF, "auto"), n))
        fast_cached = asyncio.run(_cpu_per_call(*ours(CacheMode.READ_WRITE, "auto"), n))
    finally:
        server.stop()
    share = (off - lite) / off
    print(f"(c) CPU per call, instant server (this process; ceiling = calls/s one core "
          f"sustains):\n"
          f"    litellm alone {lite * 1000:.2f} ms ({1 / lite:.0f} calls/s); our caller on "
          f"litellm {off * 1000:.2f} ms ({1 / off:.0f} calls/s), with the cache "
          f"{cached * 1000:.2f} ms; our share {share:.1%} ({(off - lite) * 1000:.2f} ms)\n"
          f"    our caller on the aiohttp fast path {fast * 1000:.2f} ms ({1 / fast:.0f} "
          f"calls/s), with the cache {fast_cached * 1000:.2f} ms "
          f"({1 / fast_cached:.0f} calls/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5, help="LLM calls per encounter in (b)")
    parser.add_argument("--encounters", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--calls", type=int, default=1000, help="calls per rate in (c)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved A/B rounds in (b)")
    parser.add_argument("--parts", default="abcd",
                        help="which parts to run (b includes d), e.g. --parts b")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentclinic-bench-") as tmp:
        work = Path(tmp)
        if "a" in opts.parts:
            bench_offline(work)
        if "b" in opts.parts or "d" in opts.parts:
            bench_concurrency(work, opts.encounters, opts.k, opts.concurrency, opts.rounds)
        if "c" in opts.parts:
            bench_overhead(work, opts.calls)


if __name__ == "__main__":
    main()
