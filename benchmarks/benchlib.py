"""Shared by the benchmarks: a fake OpenAI server in its own process (optionally enforcing a
requests-per-minute limit), pytest runs measured by wall, CPU and peak RSS, case files."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


def _script(mode: str, k: int, delay: float) -> Any:
    from pytest_agentclinic.testing.fake_server import FakeReply, FakeRequest

    def agentclinic(req: FakeRequest) -> FakeReply:
        if req.role == "doctor" and req.doctor_turn >= k - 1:
            return FakeReply("DIAGNOSIS READY: Acute bronchitis", delay=delay)
        return FakeReply("Tell me more about it.", delay=delay)

    def craftmd(req: FakeRequest) -> FakeReply:
        text = req.last_user
        if "Rewrite it as a short clinical vignette" in text:
            return FakeReply("The patient reports a cough.", delay=delay)
        if "talking with a doctor" in req.system:
            return FakeReply("I cough a lot.", delay=delay)
        if "Which of the following" in text or "Final Diagnosis: <" in text:
            return FakeReply("Final Diagnosis: A) Acute bronchitis", delay=delay)
        if req.doctor_turn >= k - 1:
            return FakeReply("Final Diagnosis: Acute bronchitis", delay=delay)
        return FakeReply("Since when do you cough?", delay=delay)

    return craftmd if mode == "craftmd" else agentclinic


def _serve(delay: float, k: int, mode: str, rpm: float | None, queue: Any) -> None:
    from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, RateLimit

    if len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {1})
    limit = RateLimit(rpm) if rpm else None
    with FakeOpenAIServer(_script(mode, k, delay), limit) as server:
        queue.put(server.url)
        time.sleep(36000)


class Server:
    """A fake OpenAI server in its own process (pinned to the second core when there is
    one, so it does not compete with the harness it measures)."""

    def __init__(self, delay: float, k: int = 1, mode: str = "agentclinic",
                 rpm: float | None = None) -> None:
        ctx = mp.get_context("fork")
        queue: Any = ctx.Queue()
        self.process = ctx.Process(target=_serve, args=(delay, k, mode, rpm, queue),
                                   daemon=True)
        self.process.start()
        self.url: str = queue.get(timeout=60)

    def stats(self) -> dict[str, Any]:
        """calls, refused, and served: [arrived, answered] of every 200."""
        with urllib.request.urlopen(self.url + "/_stats", timeout=30) as response:
            data: dict[str, Any] = json.load(response)
            return data

    @property
    def calls(self) -> int:
        return int(self.stats()["calls"])

    def stop(self) -> None:
        self.process.kill()


@dataclass(frozen=True)
class Run:
    """One pytest process: wall seconds, CPU seconds (user + system), peak RSS in MB."""

    wall: float
    cpu: float
    rss_mb: float


def _env(bytecode: bool, pythonpath: str | None = None) -> dict[str, str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    if bytecode:
        # Measured as installed: an installed package has its bytecode. Without it (this
        # machine sets PYTHONDONTWRITEBYTECODE=1) every run compiles and assert-rewrites the
        # whole package from source again, about 0.5 s of CPU that no user pays.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(command: list[str], cwd: Path, bytecode: bool = True,
            pythonpath: str | None = None) -> Run:
    """Run ``command`` in ``cwd`` and measure that process alone (``wait4``)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=_env(bytecode, pythonpath),
                               stdout=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    wall = time.perf_counter() - started
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def pytest_run(args: list[str], cwd: Path, bytecode: bool = True,
               pythonpath: str | None = None) -> Run:
    """Run pytest on ``args`` in ``cwd`` and measure that process alone."""
    return measure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                   cwd, bytecode, pythonpath)


def bare_aiohttp_run(url: str, n: int, k: int, concurrency: int, cwd: Path) -> Run:
    """The floor: a process that makes the same calls with bare aiohttp (``n`` sequences of
    ``k`` growing conversations, ``concurrency`` at once, every reply parsed), nothing else."""
    return measure([sys.executable, __file__, "floor", url, str(n), str(k), str(concurrency)],
                   cwd)


def bare_import_run(cwd: Path) -> Run:
    """The floor's start-up alone: Python importing aiohttp."""
    return measure([sys.executable, "-c", "import aiohttp, asyncio, json"], cwd)


async def _floor(url: str, n: int, k: int, concurrency: int) -> None:
    import asyncio

    import aiohttp

    semaphore = asyncio.Semaphore(concurrency)
    endpoint = url.rstrip("/") + "/chat/completions"

    async def sequence(http: Any, i: int) -> None:
        async with semaphore:
            messages = [{"role": "system", "content": "You are a physician (floor)"}]
            for turn in range(k):
                body = {"model": "bench", "messages": messages, "temperature": 0.7,
                        "max_tokens": 512}
                async with http.post(endpoint, json=body,
                                     headers={"Authorization": "Bearer sk-bench"}) as response:
                    reply = json.loads(await response.read())
                text = reply["choices"][0]["message"]["content"]
                messages = [*messages, {"role": "assistant", "content": text},
                            {"role": "user", "content": f"a{i}.{turn}"}]

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        await asyncio.gather(*(sequence(http, i) for i in range(n)))


def write_cases(path: Path, n: int, vignette: bool = False) -> None:
    """``n`` small cases (with a vignette and choices for CRAFT-MD)."""
    case: dict[str, Any] = {"specialty": "Other",
                            "objective": "Evaluate the patient with a cough.",
                            "patient": {"history": "I cough."},
                            "diagnosis": "Acute bronchitis"}
    if vignette:
        case.update(vignette="A 40-year-old with a cough.", physical_exam={"Chest": "Clear."},
                    choices=["Acute bronchitis", "Pneumonia", "Asthma", "Pertussis"])
    path.write_text(yaml.safe_dump({"dataset": "bench",
                                    "cases": [{"id": f"b-{i:05d}", **case} for i in range(n)]}))


def records(run_dir: Path) -> list[dict[str, Any]]:
    """The run's result records."""
    return [json.loads(line) for line in (run_dir / "results.jsonl").open()]


def encounter_wall(run_dir: Path) -> tuple[float, int]:
    """From the first encounter's start to the last one's end, and how many there were."""
    recs = records(run_dir)
    start = min(r["started_at"] for r in recs)
    end = max(r["started_at"] + r["duration_s"] for r in recs)
    return end - start, len(recs)


def server_busy(served: list[list[float]]) -> tuple[float, float]:
    """From the first request's arrival to the last answer, and the slot-seconds spent
    answering (the sum of every request's time on the server)."""
    if not served:
        return 0.0, 0.0
    span = max(b for _a, b in served) - min(a for a, _b in served)
    return span, sum(b - a for a, b in served)


if __name__ == "__main__":
    if sys.argv[1:2] == ["floor"]:
        import asyncio

        url, n, k, concurrency = sys.argv[2], *map(int, sys.argv[3:6])
        asyncio.run(_floor(url, n, k, concurrency))
