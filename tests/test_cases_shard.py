"""Many machines: --agent-shard K/N, agentclinic merge and merge-cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, write_yaml_cases

from pytest_agentclinic import cli
from pytest_agentclinic.llm.cache import CacheMode, ResponseCache

OFFLINE = ("-p", "no:cacheprovider", "--agent-turns=5,10")


def _cases(path: Path, n: int = 12) -> None:
    """``n`` cases; on every third the evidence points away from the true diagnosis, so the
    offline doctor gets it wrong."""
    misled: dict[str, Any] = {"diagnosis": "Fourth one", "synonyms": []}
    write_yaml_cases(path / "c.yaml", [make_case(i, **(misled if i % 3 == 0 else {}))
                                       for i in range(1, n + 1)])


def _collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", *OFFLINE, *args)
    return [line for line in result.outlines if "::" in line]


def _case(nodeid: str) -> str:
    return nodeid.split("::")[1].split("[")[0]


def test_shards_partition_the_cases_and_keep_every_variant_of_a_case_together(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    _cases(pytester.path)
    everything = _collected(pytester, "c.yaml", *xdist)
    assert len(everything) == 24  # 12 cases x 2 turn budgets
    shards = [_collected(pytester, "c.yaml", f"--agent-shard={k}/3", *xdist) for k in (1, 2, 3)]
    assert sorted(n for shard in shards for n in shard) == sorted(everything)
    assert all(shards), "a hash that empties a shard of 12 cases is suspicious"
    owner: dict[str, int] = {}
    for k, shard in enumerate(shards):
        for nodeid in shard:
            assert owner.setdefault(_case(nodeid), k) == k  # both budgets in one shard
    # Another machine gives other files, in another order: the case keeps its shard.
    write_yaml_cases(pytester.path / "b.yaml", [make_case(i, id=f"b-{i}") for i in range(5)])
    again = _collected(pytester, "b.yaml", "c.yaml", "--agent-shard=2/3", *xdist)
    assert [n for n in again if n.startswith("c.yaml")] == shards[1]


@pytest.mark.parametrize("value", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_bad_shard_is_a_usage_error(pytester: pytest.Pytester, value: str,
                                    xdist: list[str]) -> None:
    _cases(pytester.path, 1)
    result = pytester.runpytest("c.yaml", f"--agent-shard={value}", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agent-shard: expected K/N with 1 <= K <= N*"])


def _records(run: Path) -> dict[str, dict[str, object]]:
    out = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        for where_and_when in ("run", "transcript", "started_at", "duration_s"):
            record.pop(where_and_when)
        out[str(record["nodeid"])] = record
    return out


def test_merged_shards_equal_the_unsharded_run_and_the_gate_judges_them(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], xdist: list[str]) -> None:
    _cases(pytester.path)
    for k in (1, 2, 3):
        pytester.runpytest("c.yaml", *OFFLINE, f"--agent-shard={k}/3", f"--agent-run-name=s{k}",
                           *xdist)
    # The unsharded run is the reference, in one process: the merge of shards played under
    # each worker mode must equal it.
    pytester.runpytest("c.yaml", *OFFLINE, "--agent-run-name=whole")
    reports = pytester.path / "reports"
    shards = [str(reports / f"s{k}") for k in (1, 2, 3)]
    assert cli.main(["merge", *shards, "--out", str(reports / "merged")]) == 0
    merged = _records(reports / "merged")
    assert merged == _records(reports / "whole")
    lines = (reports / "merged" / "results.jsonl").read_text().splitlines()
    transcripts = [Path(json.loads(line)["transcript"]) for line in lines]
    assert all(t.is_file() and t.parent == reports / "merged" / "transcripts"
               for t in transcripts)
    summary = json.loads((reports / "merged" / "summary.json").read_text())
    assert summary["items"] == 24 and [m["shard"] for m in summary["merged_from"]] == [
        "1/3", "2/3", "3/3"]
    assert summary["by_doctor"]["offline"]["n"] == 24

    # The gate on the merged run, and the merged run as a later run's baseline.
    correct = sum(r["outcome"] == "correct" for r in merged.values())
    assert 0 < correct < 24
    low, high = str((correct - 1) / 24), str((correct + 1) / 24)
    assert cli.main(["merge", *shards, "--out", str(reports / "m2"), "--no-html",
                     "--min-accuracy", low]) == 0
    assert cli.main(["merge", *shards, "--out", str(reports / "m3"), "--no-html",
                     "--min-accuracy", high]) == 1
    assert "gate FAILED" in capsys.readouterr().out
    later = pytester.runpytest("c.yaml", *OFFLINE, f"--agent-baseline={reports / 'merged'}",
                               "--agent-max-drop=0", *xdist)
    assert later.ret == 0
    # The gate judges each turn budget on its own, paired case by case with the merged run.
    later.stdout.fnmatch_lines(["*turn_budget=5*12 paired cases*pass*",
                                "*turn_budget=10*12 paired cases*pass*"])
    assert cli.main(["report", str(reports / "merged"), "--no-html", "--resamples=200"]) == 0


# The two tests below check `agentclinic merge`; their pytest runs are its input, played in
# one process (the merge of shards played under each worker mode is the test above): under
# -n 2, their seven runs started fourteen workers to test nothing more.


def test_bad_merges_are_refused_with_one_line(pytester: pytest.Pytester,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _cases(pytester.path, 6)
    for name, extra in (("s1", "--agent-shard=1/2"), ("s2", "--agent-shard=2/2"),
                        ("s2b", "--agent-shard=2/2"), ("whole", "--agent-turns=5,10"),
                        ("t1", "--agent-shard=2/2 --agent-turns=7")):
        pytester.runpytest("c.yaml", *OFFLINE, *extra.split(), f"--agent-run-name={name}")
    r = pytester.path / "reports"
    cases = {
        (r / "s1", r / "s1"): "is given twice",
        (r / "s1", r / "whole"): "both hold",
        (r / "s2", r / "s2b"): "both hold",
        (r / "s1",): "at least two runs",
        (r / "s1", r / "t1"): "differ in turn_budgets",
        (r / "s1", r / "nothing"): "no results file",
    }
    for runs, message in cases.items():
        out = r / "out"
        assert cli.main(["merge", *map(str, runs), "--out", str(out)]) == 2, message
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
        assert not (out / "results.jsonl").exists()
    assert cli.main(["merge", str(r / "s1"), str(r / "s2"), "--out", str(r / "s1")]) == 2
    assert "not empty" in capsys.readouterr().err


def test_missing_shards_need_partial(pytester: pytest.Pytester,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _cases(pytester.path, 6)
    for k in (1, 3):
        pytester.runpytest("c.yaml", *OFFLINE, f"--agent-shard={k}/3", f"--agent-run-name=s{k}")
    r = pytester.path / "reports"
    runs = [str(r / "s1"), str(r / "s3")]
    assert cli.main(["merge", *runs, "--out", str(r / "m")]) == 2
    assert "shard(s) 2/3 missing" in capsys.readouterr().err
    assert cli.main(["merge", *runs, "--out", str(r / "m"), "--partial", "--no-html"]) == 0


def test_merge_cache_copies_every_entry_and_counts_conflicts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, entries in (("a", {"k1": "one", "k2": "two"}), ("b", {"k3": "three"}),
                          ("c", {"k1": "ONE?"})):
        cache = ResponseCache(tmp_path / name, CacheMode.READ_WRITE)
        for key, text in entries.items():
            cache.put(key, {"text": text})
        cache.close()
    out = tmp_path / "merged"
    assert cli.main(["merge-cache", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
                     str(out)]) == 0
    assert "3 copied, 0 already there, 0 conflicting" in capsys.readouterr().out
    merged = ResponseCache(out, CacheMode.REPLAY)
    assert [merged.get(k) for k in ("k1", "k2", "k3")] == [
        {"text": "one"}, {"text": "two"}, {"text": "three"}]
    merged.close()
    assert cli.main(["merge-cache", str(tmp_path / "a"), str(tmp_path / "c"), "--out",
                     str(out)]) == 1
    assert "0 copied, 2 already there, 1 conflicting" in capsys.readouterr().out
    assert cli.main(["merge-cache", str(tmp_path / "nope"), "--out", str(out)]) == 2


# --------------------------------------------------------- one provider budget, four shards

def test_shards_share_the_providers_rate_limit(pytester: pytest.Pytester) -> None:
    """Four shards started together with the provider's --agent-rpm stay within it: each
    takes a quarter. The server counts in a bucket of one second's requests (a provider
    enforcing its minute's limit per second) and refuses what is above it; when every shard
    applied the whole limit, four times the limit arrived and it refused many."""
    import subprocess
    import sys

    from helpers import llm_args

    from pytest_agentclinic.testing.fake_server import (
        FakeOpenAIServer,
        FakeReply,
        FakeRequest,
        RateLimit,
    )

    def diagnose(req: FakeRequest) -> FakeReply:
        if req.doctor_turn == 0:
            return FakeReply("Where does it hurt?")
        return FakeReply("DIAGNOSIS READY: Condition1 disease")

    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 25)])
    # The shards start their encounters together (a barrier on files), as machines of a CI
    # matrix may: a slow start of one must not hide the others' excess.
    pytester.makeconftest("""
        import pathlib, time

        def pytest_collection_modifyitems(config):
            shard = config.getoption("agent_shard").split("/")[0]
            (config.rootpath / f"ready-{shard}").touch()
            while len(list(config.rootpath.glob("ready-*"))) < 4:
                time.sleep(0.01)
    """)
    server = FakeOpenAIServer(diagnose, RateLimit(rpm=600)).__enter__()
    try:
        shards = [subprocess.Popen(
            [sys.executable, "-m", "pytest", "c.yaml", "-q", f"--agent-shard={k}/4",
             f"--agent-run-name=shard-{k}", "--agent-rpm=600", "--agent-concurrency=8",
             *llm_args(server, ("doctor",))], cwd=pytester.path,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for k in range(1, 5)]
        codes = [shard.wait(timeout=300) for shard in shards]
    finally:
        server.__exit__(None, None, None)
    assert all(code in (0, 1) for code in codes)
    assert server.calls == 48 and server.refused == 0  # 24 encounters x 2 calls


def test_each_shard_takes_its_share_of_the_limits() -> None:
    from types import SimpleNamespace

    from pytest_agentclinic.llm.limiter import Budget
    from pytest_agentclinic.plugin.settings import Given, _call

    values = Given.from_values({"rpm": 600.0, "tpm": 40000.0, "shard": "2/4"})
    worker = SimpleNamespace(workerinput={"workercount": 3})
    alone = _call(SimpleNamespace(), values, Path("."))  # type: ignore[arg-type]
    assert alone.budget == Budget(rpm=150.0, tpm=10000.0)
    in_worker = _call(worker, values, Path("."))  # type: ignore[arg-type]
    assert in_worker.budget == Budget(rpm=50.0, tpm=40000.0 / 12)


def test_with_a_limits_server_each_process_keeps_the_whole_limits() -> None:
    """--agent-limits-url: every process paces on the server with the run's whole limits,
    and knows its share (1 / shards x workers) for when the server is lost."""
    from types import SimpleNamespace

    from pytest_agentclinic.llm.limiter import Budget
    from pytest_agentclinic.plugin.settings import Given, _call

    values = Given.from_values({"rpm": 600.0, "tpm": 40000.0, "shard": "2/4"})
    worker = SimpleNamespace(workerinput={"workercount": 3})
    url = "redis://127.0.0.1:6379/0"
    shared = _call(worker, values, Path("."), url)  # type: ignore[arg-type]
    assert shared.budget == Budget(rpm=600.0, tpm=40000.0)
    assert shared.parts == 12 and shared.limits_url == url
