"""Round 3 of the audit: hostile providers, referenced secrets, and data that cannot run code.

Each row plays one scenario for real in a temporary directory (pytest or ``agentclinic`` in
a subprocess, a local fake server in this process): secrets the run learns indirectly
(``os.environ/NAME``, ``extra_headers``, proxy credentials) grepped in every artefact and the
terminal in raw, JSON-, HTML-, URL-escaped and base64 forms; a 50 MB reply and 50 MB error
bodies; a crafted pickle row in a replay and in ``merge-cache``; damaged shards; a replay
of a warm cache whose files are read-only; JSONL with Unicode line breaks; a header-only
CSV; ``compare`` at 1,000 and 10,000 cases.

    python -c "from benchmarks.audit.round3 import rows; print(*rows(), sep='\\n')"
"""

from __future__ import annotations

import base64
import html
import json
import os
import pickle
import random
import sqlite3
import stat
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = "SENTINEL7R3"
FIFTY_MB = 50_000_000


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k.upper() not in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")}
    return {**env, "OPENAI_API_KEY": "sk-audit-key-000",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            **extra}


def _case(i: int) -> dict[str, Any]:
    return {"id": f"t-{i}", "specialty": "Dermatology", "objective": f"Diagnose complaint {i}.",
            "patient": {"demographics": "40-year-old woman", "history": f"Problem {i}.",
                        "symptoms": {"primary": "Itchy rash"}},
            "physical_exam": {"Skin": "Scaly plaques."},
            "tests": {"Skin Biopsy": f"Condition{i} disease."},
            "diagnosis": f"Condition{i} disease"}


def _cases(path: Path, n: int) -> None:
    path.write_text(yaml.safe_dump({"dataset": "audit", "cases": [_case(i)
                                                                 for i in range(1, n + 1)]}))


def _pytest(where: Path, *args: str, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "pytest", "c.yaml", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "--agent-perception=no", "--agent-retries=0",
                           "--agent-backoff=0.01", *args], cwd=where, env=env or _env(),
                          capture_output=True, timeout=timeout)


def _cli(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", *args], cwd=where,
                          env=_env(), capture_output=True, text=True, timeout=600)


def _records(run: Path) -> list[dict[str, Any]]:
    path = run / "results.jsonl"
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()] \
        if path.is_file() else []


# --- secrets learnt indirectly ---------------------------------------------------------------

def _forms(secret: str) -> set[bytes]:
    """Every form a writer could leave: raw, JSON-, HTML-, URL-escaped and base64."""
    found = {secret, json.dumps(secret)[1:-1], html.escape(secret),
             urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             base64.b64encode(secret.encode()).decode()}
    return {f.encode() for f in found}


def _found(where: Path, output: bytes, secrets: list[str], inputs: set[str]) -> int:
    forms = {f for s in secrets for f in _forms(s)}
    files = [p for p in where.rglob("*") if p.is_file() and p.name not in inputs]
    return sum(output.count(f) for f in forms) + sum(
        data.count(f) for p in files for data in [p.read_bytes()] for f in forms)


def _echo(req: FakeRequest) -> FakeReply:
    """A provider (and proxy) that repeats every credential header it was sent."""
    creds = " ".join(f"{k}: {v}" for k, v in req.headers.items() if k.lower() in (
        "authorization", "x-gateway-auth", "proxy-authorization"))
    if req.role == "doctor" and req.doctor_turn == 0:
        return FakeReply(f"I was sent {creds}. Where does it hurt?")
    if req.role == "doctor":
        case = "2" if "complaint 2." in req.system else "1"
        return FakeReply(f"Sent {creds}. DIAGNOSIS READY: Condition{case} disease")
    return FakeReply(f"I heard {creds}")


def _secret_run(where: Path, server: FakeOpenAIServer, models: dict[str, Any] | None,
                args: list[str], env: dict[str, str], secrets: list[str]) -> dict[str, Any]:
    _cases(where / "c.yaml", 2)
    before = server.calls
    if models is not None:
        (where / "models.yaml").write_text(yaml.safe_dump({"model_list": [models]}))
    record = _pytest(where, *args, "--agent-run-name=r", "--junitxml=junit.xml", env=env)
    replay = _pytest(where, *args, "--agent-run-name=replay", "--agent-cache=replay", env=env)
    output = record.stdout + record.stderr + replay.stdout + replay.stderr
    kept = len(_records(where / "reports/r")) + len(_records(where / "reports/replay"))
    calls = server.calls - before
    return {"outcome": f"{calls} calls echoed the credentials; recorded, then replayed",
            "records_kept": f"{kept}/4",
            "secrets_found": _found(where, output, secrets, {"c.yaml", "models.yaml"})}


def _referenced(where: Path, server: FakeOpenAIServer) -> dict[str, Any]:
    secret = f"ga-{SENTINEL}-ref1"
    models = {"model_name": "doc", "litellm_params": {
        "model": "openai/fake", "api_base": server.url, "api_key": "os.environ/GATEWAY_AUTH"}}
    return _secret_run(where, server, models,
                       ["--agent-models=models.yaml", "--agent-doctor=doc", "--agent-patient=doc"],
                       _env(GATEWAY_AUTH=secret), [secret])


def _header(where: Path, server: FakeOpenAIServer) -> dict[str, Any]:
    secret = f"xh-{SENTINEL}-hdr2"
    models = {"model_name": "doc", "litellm_params": {
        "model": "openai/fake", "api_base": server.url,
        "extra_headers": {"X-Gateway-Auth": secret}}}
    return _secret_run(where, server, models,
                       ["--agent-models=models.yaml", "--agent-doctor=doc", "--agent-patient=doc"],
                       _env(), [secret])


def _proxy(where: Path, server: FakeOpenAIServer) -> dict[str, Any]:
    password = f"px-{SENTINEL}-pw3"
    proxy = server.url.rsplit("/", 1)[0].replace("http://", f"http://puser:{password}@")
    return _secret_run(where, server, None,
                       ["--agent-doctor=openai/fake-doctor", "--agent-patient=openai/fake-patient",
                        "--agent-api-base=http://upstream.invalid:9/v1"],
                       _env(HTTP_PROXY=proxy), [password, f"puser:{password}"])


# --- bounded replies ---------------------------------------------------------------------------

def _one_huge(huge: FakeReply) -> Callable[[FakeRequest], FakeReply]:
    def script(req: FakeRequest) -> FakeReply:
        case = next(i for i in range(1, 7) if f"complaint {i}." in req.system)
        return huge if case == 3 else FakeReply(f"DIAGNOSIS READY: Condition{case} disease")
    return script


def _huge(where: Path, reply: FakeReply, transport: str) -> dict[str, Any]:
    _cases(where / "c.yaml", 6)
    with FakeOpenAIServer(_one_huge(reply)) as server:
        done = _pytest(where, "--agent-doctor=openai/fake-doctor", f"--agent-api-base={server.url}",
                       f"--agent-transport={transport}", "--agent-run-name=r")
    _pytest(where, "--agent-doctor=openai/fake-doctor", "--agent-api-base=http://127.0.0.1:9/v1",
            "--agent-cache=replay", "--agent-run-name=replay", timeout=120)
    records = _records(where / "reports/r")
    kept = sum(r["outcome"] == "correct" for r in records)
    errors = [r["error"] for r in records if r["outcome"] == "error"]
    largest = max((p.stat().st_size for p in where.rglob("*") if p.is_file()), default=0)
    cached = sum(p.stat().st_size for p in (where / ".agentclinic_cache").rglob("*")
                 if p.is_file())
    output = len(done.stdout) + len(done.stderr)
    replayed = len(_records(where / "reports/replay"))
    return {"outcome": f"{len(errors)} error ({(errors or ['-'])[0][:60]}...); largest file "
                       f"{largest / 1e6:.1f} MB, cache {cached / 1e6:.2f} MB, terminal "
                       f"{output / 1e3:.0f} KB; replay without a server: {replayed} records",
            "records_kept": f"{kept}/5", "secrets_found": 0}


# --- data that cannot run code, damaged shards ------------------------------------------------

class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.marker, "w"))


def _recorded(where: Path) -> Path:
    _cases(where / "c.yaml", 2)
    with FakeOpenAIServer(lambda req: FakeReply("DIAGNOSIS READY: Condition1 disease")) as srv:
        _pytest(where, "--agent-doctor=openai/fake-doctor", f"--agent-api-base={srv.url}",
                "--agent-run-name=rec")
    return where / ".agentclinic_cache"


def _crafted(where: Path) -> dict[str, Any]:
    cache = _recorded(where)
    marker = where / "pwned"
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("UPDATE Cache SET mode = 4, value = ?", (pickle.dumps(_Evil(str(marker))),))
    db.close()
    replay = _pytest(where, "--agent-doctor=openai/fake-doctor",
                     "--agent-api-base=http://127.0.0.1:9/v1", "--agent-cache=replay",
                     "--agent-run-name=replay", timeout=120)
    merged = _cli(where, "merge-cache", str(cache), "--out", "merged")
    said = "refused" in (replay.stdout + replay.stderr).decode(errors="replace")
    return {"outcome": f"replay: {'refused' if said else 'not refused'}; merge-cache exit "
                       f"{merged.returncode}; code ran: {marker.exists()}",
            "records_kept": "-", "secrets_found": 0}


def _damaged(where: Path, damage: str) -> dict[str, Any]:
    shard = where / "shard"
    if damage == "zero":
        shard.mkdir()
        (shard / "cache.db").write_bytes(b"")
    else:
        import diskcache

        from pytest_agentclinic.llm.cache_store import DataDisk, encode

        (where / "rec").mkdir()
        shard = _recorded(where / "rec")
        # A long reply lives in a value file beside cache.db.
        with diskcache.Cache(str(shard), disk=DataDisk) as cache:
            cache.set("long", encode({"text": "x" * 50_000}))
        for value in shard.rglob("*.val"):
            value.unlink()
    before = {p: p.read_bytes() for p in shard.rglob("*") if p.is_file()}
    done = _cli(where, "merge-cache", str(shard), "--out", "merged")
    after = {p: p.read_bytes() for p in shard.rglob("*") if p.is_file()}
    lines = len(done.stderr.strip().splitlines())
    return {"outcome": f"exit {done.returncode}, {lines} line; source "
                       f"{'unchanged' if before == after else 'CHANGED'}",
            "records_kept": "-", "secrets_found": 0}


def _read_only_replay(where: Path) -> dict[str, Any]:
    cache = _recorded(where)
    before = {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()}
    for path in [*cache.rglob("*"), cache]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        _pytest(where, "--agent-doctor=openai/fake-doctor",
                "--agent-api-base=http://127.0.0.1:9/v1", "--agent-cache=replay",
                "--agent-run-name=replay", timeout=120)
    finally:
        for path in [cache, *cache.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    after = {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()}
    records = _records(where / "reports/replay")
    kept = sum(r["outcome"] != "error" for r in records)
    return {"outcome": f"{len(records) - kept} errors; cache files "
                       f"{'untouched' if before == after else 'CHANGED'}",
            "records_kept": f"{kept}/2", "secrets_found": 0}


# --- inputs and compare --------------------------------------------------------------------------

def _unicode_jsonl(where: Path) -> dict[str, Any]:
    from pytest_agentclinic.cases.loaders import load_case_file

    lines = []
    for i, text in enumerate(["a\u2028b", "c\x85d", "e\u2029f", "g\x0ch"]):
        lines.append(json.dumps({"OSCE_Examination": {
            "Objective_for_Doctor": f"Assess {text} {i}.",
            "Patient_Actor": {"Demographics": "50-year-old man", "History": f"Symptom {i}."},
            "Test_Results": {"X": f"Finding {i}"}, "Correct_Diagnosis": f"Pneumonia type{i}"}},
            ensure_ascii=False))
    (where / "u.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_case_file(where / "u.jsonl")
    return {"outcome": f"{len(loaded.errors)} errors", "records_kept": f"{len(loaded.cases)}/4",
            "secrets_found": 0}


def _header_csv(where: Path) -> dict[str, Any]:
    (where / "v.csv").write_text("case_vignette,choice_1,choice_2,choice_3,choice_4,answer,"
                                 "category,dataset,case_id\n")
    done = _cli(where, "validate", "v.csv")
    return {"outcome": f"validate exit {done.returncode}: "
                       f"{done.stdout.strip().splitlines()[0][:60]}",
            "records_kept": "-", "secrets_found": 0}


def _run(path: Path, n: int, doctor: str, seed: int) -> None:
    from pytest_agentclinic.core.records import ResultRecord

    rng = random.Random(seed)
    path.mkdir(parents=True)
    with (path / "results.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(ResultRecord(
                protocol="agentclinic", run=path.name, nodeid=f"c.jsonl::case-{i}[{doctor}]",
                case_id=f"case-{i}", dataset="medqa", specialty=rng.choice(["A", "B", "C"]),
                models={"doctor": doctor, "patient": "offline"}, sample=0, turn_budget=20,
                outcome=rng.choice(["correct", "incorrect"]), expected="Myasthenia gravis",
                given="Lambert-Eaton syndrome", turns_used=7, duration_s=12.5,
                tests_requested=["Chest CT"]).model_dump_json() + "\n")


def _compare_memory(where: Path) -> dict[str, Any]:
    peaks = {}
    for n in (1_000, 10_000):
        _run(where / f"a{n}", n, "model-a", 1)
        _run(where / f"b{n}", n, "model-b", 2)
        # VmHWM, not ru_maxrss: a child forked from this (large) process inherits its
        # high-water mark in ru_maxrss; VmHWM belongs to the program exec'd.
        code = ("import sys; from pytest_agentclinic.cli import main; main(sys.argv[1:]); "
                "print(next(l.split()[1] for l in open('/proc/self/status') "
                "if l.startswith('VmHWM')), file=sys.stderr)")
        done = subprocess.run([sys.executable, "-c", code, "compare", str(where / f"a{n}"),
                               str(where / f"b{n}"), "--by", "specialty"], env=_env(),
                              capture_output=True, text=True, timeout=600)
        peaks[n] = int(done.stderr.strip().splitlines()[-1]) / 1024
    ratio = peaks[10_000] / peaks[1_000]
    return {"outcome": f"peak {peaks[1_000]:.0f} MB at 1,000 cases, {peaks[10_000]:.0f} MB at "
                       f"10,000: x{ratio:.2f} (goal <= 1.5)", "records_kept": "-",
            "secrets_found": 0}


def rows() -> list[dict[str, Any]]:
    """One row per scenario, each in its own temporary directory."""
    scenarios: list[tuple[str, Callable[[Path], dict[str, Any]]]] = []
    with FakeOpenAIServer(_echo) as echo:
        scenarios += [
            ("key as os.environ/GATEWAY_AUTH in --agent-models", lambda w: _referenced(w, echo)),
            ("token in extra_headers of --agent-models", lambda w: _header(w, echo)),
            ("proxy user:pass, Proxy-Authorization echoed", lambda w: _proxy(w, echo)),
        ]
        out = _play(scenarios)
    huge = FakeReply("DIAGNOSIS READY: Condition3 disease. " + "x" * FIFTY_MB)
    error = FakeReply("upstream exploded " + "z" * FIFTY_MB, status=500)
    out += _play([
        ("50 MB reply, 1 of 6 encounters (fast path)", lambda w: _huge(w, huge, "auto")),
        ("50 MB error body, 1 of 6 (fast path)", lambda w: _huge(w, error, "auto")),
        ("50 MB error body, 1 of 6 (litellm)", lambda w: _huge(w, error, "litellm")),
        ("crafted pickle row: replay, merge-cache", _crafted),
        ("merge-cache of a zero-byte cache.db", lambda w: _damaged(w, "zero")),
        ("merge-cache of a shard missing value files", lambda w: _damaged(w, "files")),
        ("replay of a warm cache, files read-only", _read_only_replay),
        ("JSONL with U+2028/U+0085 inside strings", _unicode_jsonl),
        ("CSV with a header only", _header_csv),
        ("compare: 1,000 vs 10,000 cases", _compare_memory),
    ])
    return out


def _play(scenarios: list[tuple[str, Callable[[Path], dict[str, Any]]]]) -> list[dict[str, Any]]:
    out = []
    for name, scenario in scenarios:
        with tempfile.TemporaryDirectory(prefix="audit-round3-") as tmp:
            try:
                row = scenario(Path(tmp))
            except Exception as exc:  # the row says so; the other scenarios still run
                row = {"outcome": f"audit error: {type(exc).__name__}: {exc}"[:120],
                       "records_kept": "?", "secrets_found": 0}
        out.append({"case": name, **row})
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)
