"""Secrets audit: a sentinel key in each place a user may put one, grepped for afterwards.

Each row runs ``python -m pytest`` on two cases in a temporary directory against a local
fake server (in this process) that plays the worst provider: a model repeating the key it
was sent and the query it was called with. ``secrets_found`` counts the sentinel's bytes in
every file the run wrote (reports, transcripts, JUnit XML, the reply cache's SQLite files)
and in its terminal output: it must be 0.

    python -c "from benchmarks.audit.secrets import rows; print(*rows(), sep='\\n')"
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pytest_agentclinic.core.redact import redact
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = "SENTINEL7Q3"


def _echoing(req: FakeRequest) -> FakeReply:
    key = req.headers.get("Authorization", "").removeprefix("Bearer ")
    if req.role == "doctor" and req.doctor_turn == 0:
        return FakeReply(f"My key is {key}. Where does it hurt?")
    if req.role == "doctor":
        case = "2" if "complaint 2." in req.system else "1"
        return FakeReply(f"Still {key} {req.query}. DIAGNOSIS READY: Condition{case} disease")
    return FakeReply(f"I heard {key} and {req.query}")


def _cases(path: Path) -> None:
    cases = [{"id": f"t-{i}", "specialty": "Dermatology",
              "objective": f"Diagnose complaint {i}.",
              "patient": {"demographics": "40-year-old woman", "history": f"Problem {i}.",
                          "symptoms": {"primary": "Itchy rash"}},
              "physical_exam": {"Skin": "Scaly plaques."},
              "tests": {"Skin Biopsy": f"Condition{i} disease."},
              "diagnosis": f"Condition{i} disease"} for i in (1, 2)]
    path.write_text(yaml.safe_dump({"dataset": "audit", "cases": cases}))


@dataclass
class Scenario:
    """One place for the sentinel: extra pytest arguments and environment, and files."""

    case: str
    args: Callable[[str], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    models_file: bool = False


def _models(url: str, key: str) -> str:
    return yaml.safe_dump({"model_list": [{"model_name": "doc", "litellm_params": {
        "model": "openai/fake", "api_base": url, "api_key": key}}]})


SCENARIOS = (
    Scenario("key inline in --agent-models",
             lambda url: ["--agent-models=models.yaml", "--agent-doctor=doc",
                          "--agent-patient=openai/fake-patient", f"--agent-api-base={url}"],
             models_file=True),
    Scenario("key in --agent-api-base query (?api-key=)",
             lambda url: ["--agent-doctor=openai/fake-doctor",
                          "--agent-patient=openai/fake-patient",
                          f"--agent-api-base={url}?api-key=q-{SENTINEL}-1a2b"]),
    Scenario("env key with a quote and a backslash",
             lambda url: ["--agent-doctor=openai/fake-doctor",
                          "--agent-patient=openai/fake-patient", f"--agent-api-base={url}"],
             env={"OPENAI_API_KEY": f'ev"{SENTINEL}\\zz'}),
    Scenario("model echoing its key, replayed from the cache",
             lambda url: ["--agent-doctor=openai/fake-doctor",
                          "--agent-patient=openai/fake-patient", f"--agent-api-base={url}",
                          "--agent-cache=replay"],
             env={"OPENAI_API_KEY": f"sk-{SENTINEL}-abcdef"}),
)


def _found(directory: Path, output: bytes, inputs: set[str]) -> int:
    needle = SENTINEL.encode()
    count = output.count(needle)
    for path in directory.rglob("*"):
        if path.is_file() and path.name not in inputs:
            count += path.read_bytes().count(needle)
    return count


def _run(scenario: Scenario, server: FakeOpenAIServer) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="audit-secrets-") as tmp:
        where = Path(tmp)
        _cases(where / "c.yaml")
        if scenario.models_file:
            (where / "models.yaml").write_text(_models(server.url, f"mf-{SENTINEL}-9f8e"))
        env = {**os.environ, "OPENAI_API_KEY": "sk-audit-key-000",
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               **scenario.env}
        base = [sys.executable, "-m", "pytest", "c.yaml", "--agent-perception=no",
                "--agent-retries=0", "--agent-backoff=0.01", "--junitxml=junit.xml",
                "-p", "no:randomly", *scenario.args(server.url)]
        replay = "--agent-cache=replay" in base
        output = b""
        if replay:  # record first, then replay what the cache kept
            record = [a for a in base if a != "--agent-cache=replay"]
            output += subprocess.run(record, cwd=where, env=env, capture_output=True,
                                     timeout=120).stdout
        done = subprocess.run(base, cwd=where, env=env, capture_output=True, timeout=120)
        output += done.stdout + done.stderr
        runs = sorted((where / "reports").glob("*/results.jsonl"))
        kept = sum(len(p.read_text().splitlines()) for p in runs[-1:])
        last = done.stdout.decode(errors="replace").strip().splitlines()
        outcome = redact(last[-1].strip("= ")) if last else f"exit {done.returncode}"
        return {"case": scenario.case, "outcome": outcome, "records_kept": kept,
                "secrets_found": _found(where, output, {"c.yaml", "models.yaml"})}


def rows() -> list[dict[str, Any]]:
    """One row per place of the sentinel (two pytest runs at a time, ~5 s each)."""
    started = time.monotonic()
    out: list[dict[str, Any]] = []
    with FakeOpenAIServer(_echoing) as server, ThreadPoolExecutor(2) as pool:
        out.extend(pool.map(lambda s: _run(s, server), SCENARIOS))
    text = "a" * 10_000_000
    began = time.process_time()
    redact(text)
    out.append({"case": "10 MB id through redact()",
                "outcome": f"{time.process_time() - began:.2f} s CPU (goal < 1 s)",
                "records_kept": "-", "secrets_found": 0})
    out[-1]["outcome"] += f"; audit took {time.monotonic() - started:.0f} s"
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)
