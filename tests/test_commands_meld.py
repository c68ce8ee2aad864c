"""``agentclinic meld``: the MELD contamination check, against the local fake OpenAI server."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_case, osce_line, write_yaml_cases

from pytest_agentclinic.cli import main
from pytest_agentclinic.commands.meld import CACHE_MODES
from pytest_agentclinic.importers.meld import (
    PROMPT_VERSION,
    read_csv_cases,
    score,
    split_vignette,
)
from pytest_agentclinic.llm.cache import CacheMode
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]

V1 = ("A 34-year-old woman presents with a three-day history of fever, productive cough and "
      "right-sided pleuritic chest pain. She smokes ten cigarettes a day. Crackles are heard "
      "over the right lower lobe.")
V2 = ("An 8-year-old boy is brought in for an itchy rash on both elbows that has waxed and "
      "waned for a year. His mother has asthma. Examination shows lichenified plaques in the "
      "antecubital fossae.")
V3 = ("A 61-year-old man has had crushing substernal chest pain for forty minutes, radiating to "
      "the left arm, with sweating and nausea.")
UNRELATED = "Quarterly revenue grew by 4% thanks to strong sales of garden furniture."


def levenshtein(a: str, b: str) -> int:
    """Reference edit distance (unit costs), written out so the library is checked."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def write_csv(path: Path, vignettes: list[str], ids: bool = True) -> Path:
    """A small CSV shaped like CRAFT-MD's usmle_and_derm_dataset.csv."""
    header = ["", "case_vignette", "choice_1", "choice_2", "choice_3", "choice_4", "answer",
              "category", "dataset", *(["case_id"] if ids else [])]
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for i, text in enumerate(vignettes):
            writer.writerow([i, text, "A", "B", "C", "D", "A", "Dermatology", "derm_public",
                             *([f"case_{i}"] if ids else [])])
    return path


def answering(reply: Callable[[str, str], str]) -> Script:
    """A script that answers each request with ``reply(first_half, second_half)``."""
    halves = dict(split_vignette(v) for v in (V1, V2, V3))

    def script(req: FakeRequest) -> FakeReply:
        return FakeReply(reply(req.last_user, halves.get(req.last_user, "")))
    return script


def meld(server: FakeOpenAIServer, tmp_path: Path, *args: str) -> int:
    """Run ``agentclinic meld`` in process with a private cache, fast retries, JSONL out."""
    return main(["meld", "--model", "openai/fake", "--api-base", server.url,
                 "--cache-dir", str(tmp_path / "cache"), "--backoff", "0.01",
                 "--out", str(tmp_path / "meld.jsonl"), *args])


def records(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The --out records by case id."""
    lines = (tmp_path / "meld.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["case_id"]: r for r in map(json.loads, lines)}


@pytest.fixture
def cases_csv(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "craft.csv", [V1, V2, V3])


# ---------------------------------------------------------------- rules


@pytest.mark.parametrize(("text", "first", "second"), [
    ("one two three four", "one two", "three four"),
    ("one two three four five", "one two", "three four five"),  # the odd word goes second
    ("  one\ttwo,\n three.  ", "one", "two, three."),            # whitespace runs, punctuation
    ("alone", "", "alone"),
])
def test_split_rule(text: str, first: str, second: str) -> None:
    assert split_vignette(text) == (first, second)


def test_score_is_one_minus_distance_over_longer_length() -> None:
    expected, got = "the rash spread to both arms", "the rush spread to arms"
    similarity, distance, _, _ = score(expected, got)
    assert distance == levenshtein(expected, got)
    assert similarity == pytest.approx(1 - distance / max(len(expected), len(got)))


def test_an_echo_of_the_first_half_is_removed_before_scoring() -> None:
    similarity, _, scored, echoed = score("three four", "one  two three four", "one two")
    assert (similarity, scored, echoed) == (1.0, "three four", True)


# ---------------------------------------------------------------- against the fake server


def test_exact_second_half_scores_one(fake_server: Start, tmp_path: Path, cases_csv: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    server = fake_server(answering(lambda _first, second: second))
    assert meld(server, tmp_path, str(cases_csv)) == 0
    out = capsys.readouterr().out
    rows = records(tmp_path)
    assert {r["similarity"] for r in rows.values()} == {1.0}
    assert all(r["memorized"] and r["distance"] == 0 for r in rows.values())
    assert "| openai/fake |       3 |          3 |        0 |         0 |         3 |" in out
    assert "100.0%" in out
    assert server.calls == 3


def test_unrelated_text_scores_low(fake_server: Start, tmp_path: Path, cases_csv: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    server = fake_server(answering(lambda _first, _second: UNRELATED))
    assert meld(server, tmp_path, str(cases_csv)) == 0
    rows = records(tmp_path)
    assert all(r["similarity"] < 0.3 and r["memorized"] is False for r in rows.values())
    assert "0.0%" in capsys.readouterr().out


def test_half_correct_continuation(fake_server: Start, tmp_path: Path, cases_csv: Path) -> None:
    # Case 0: the first half of the second half's characters only; the rest is missing, so
    # the distance is the missing characters and the similarity kept / total, by hand.
    # Case 1: the second half's words with the latter half replaced: checked by a reference
    # edit distance written out in this file.
    def reply(first: str, second: str) -> str:
        if first == split_vignette(V1)[0]:
            return second[:len(second) // 2]
        words = second.split()
        return " ".join(words[:len(words) // 2] + ["unrelated"] * (len(words) - len(words) // 2))

    server = fake_server(answering(reply))
    meld(server, tmp_path, str(cases_csv))
    rows = records(tmp_path)
    second = split_vignette(V1)[1]
    kept = len(second[:len(second) // 2].strip())
    assert rows["case_0"]["distance"] == len(second) - kept
    assert rows["case_0"]["similarity"] == pytest.approx(kept / len(second))
    second = split_vignette(V2)[1]
    got = rows["case_1"]["completion"]
    assert rows["case_1"]["similarity"] == pytest.approx(
        1 - levenshtein(second, got) / max(len(second), len(got)))
    assert 0.3 < rows["case_1"]["similarity"] < 0.95


def test_the_prompt_carries_exactly_the_first_half(fake_server: Start, tmp_path: Path,
                                                    cases_csv: Path) -> None:
    server = fake_server(answering(lambda _first, second: second))
    meld(server, tmp_path, str(cases_csv), "--concurrency", "1")
    sent = {req.last_user for req in server.requests}
    assert sent == {split_vignette(v)[0] for v in (V1, V2, V3)}
    first, second = split_vignette(V1)
    request = next(r for r in server.requests if r.last_user == first)
    assert [m["role"] for m in request.messages] == ["system", "user"]
    assert f"about {len(second.split())} words" in request.system
    assert request.body["temperature"] == 0.0
    assert records(tmp_path)["case_0"]["prompt"] == first


def test_server_errors_are_errors_not_zeros(fake_server: Start, tmp_path: Path,
                                            cases_csv: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    fail = split_vignette(V2)[0]

    def script(req: FakeRequest) -> FakeReply:
        if req.last_user == fail:
            return FakeReply("overloaded", status=500)
        return answering(lambda _first, second: second)(req)

    server = fake_server(script)
    assert meld(server, tmp_path, str(cases_csv), "--retries", "1") == 1
    rows = records(tmp_path)
    assert rows["case_1"]["status"] == "error"
    assert rows["case_1"]["similarity"] is None and rows["case_1"]["memorized"] is None
    assert "gave up after 2 attempts" in rows["case_1"]["error"]
    assert server.calls == 2 + 2  # two good cases, and the failing one tried twice
    out = capsys.readouterr().out
    # The share is over the two measured cases: the error is counted apart, not as a 0.
    assert "| openai/fake |       3 |          2 |        1 |         0 |         2 |" in out
    assert "100.0%" in out and "case_1: error:" in out


def test_unauthorised_stops_the_run(fake_server: Start, tmp_path: Path, cases_csv: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    server = fake_server(lambda _req: FakeReply("bad key", status=401))
    assert meld(server, tmp_path, str(cases_csv), "--concurrency", "1") == 3
    rows = records(tmp_path)
    assert {r["status"] for r in rows.values()} == {"error"}
    assert "not authorised" in rows["case_0"]["error"]
    assert "not attempted" in rows["case_2"]["error"]
    assert server.calls == 1
    assert "stopped:" in capsys.readouterr().err


def test_second_run_is_served_from_the_cache(fake_server: Start, tmp_path: Path,
                                             cases_csv: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    server = fake_server(answering(lambda _first, second: second))
    meld(server, tmp_path, str(cases_csv))
    assert meld(server, tmp_path, str(cases_csv), "--cache", "replay") == 0
    assert server.calls == 3
    assert all(r["cached"] for r in records(tmp_path).values())
    # A replay miss (an empty cache) is an error per case, never a similarity of 0.
    other = tmp_path / "other"
    other.mkdir()
    assert meld(server, other, str(cases_csv), "--cache", "replay") == 1
    assert {r["status"] for r in records(other).values()} == {"error"}
    assert "cache miss in replay mode" in capsys.readouterr().out


# ---------------------------------------------------------------- inputs


def test_csv_input(fake_server: Start, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "small.csv", [V1, "Rash."], ids=False)
    assert [(c.case_id, c.source) for c in read_csv_cases(path)] == [
        ("row-2", "case_vignette"), ("row-3", "case_vignette")]
    server = fake_server(answering(lambda _first, second: second))
    assert meld(server, tmp_path, str(path)) == 1  # the one-word vignette cannot be split
    rows = records(tmp_path)
    assert rows["row-2"]["similarity"] == 1.0
    assert rows["row-3"]["status"] == "skipped" and rows["row-3"]["similarity"] is None
    assert server.calls == 1


def test_case_files_and_limit(fake_server: Start, tmp_path: Path) -> None:
    yaml_file = write_yaml_cases(tmp_path / "cases.yaml",
                                 [make_case(1, vignette=V1), make_case(2, vignette=V2)])
    osce = tmp_path / "medqa.jsonl"
    osce.write_text(osce_line(1) + "\n", encoding="utf-8")
    server = fake_server(lambda _req: FakeReply(UNRELATED))
    assert meld(server, tmp_path, str(yaml_file), str(osce)) == 0
    rows = records(tmp_path)
    assert rows["t-01"]["source"] == "vignette"
    assert rows["t-01"]["prompt"] == split_vignette(V1)[0]
    assembled = "Assess the patient with symptom 1. Symptom 1 for a week."
    assert rows["medqa-0000"]["source"] == "objective+history"
    assert rows["medqa-0000"]["prompt"] + " " + rows["medqa-0000"]["expected"] == assembled
    assert meld(server, tmp_path, str(yaml_file), str(osce), "--limit", "1") == 0
    assert list(records(tmp_path)) == ["t-01"]
    assert records(tmp_path)["t-01"]["prompt_version"] == PROMPT_VERSION


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("a,b\n1,2\n", "no 'case_vignette' column"),
])
def test_unreadable_input_is_a_usage_error(tmp_path: Path, content: str | None, message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.csv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["meld", "--model", "openai/fake", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_cache_modes_match_the_cache() -> None:
    assert tuple(m.value for m in CacheMode) == CACHE_MODES


def test_the_craftmd_csv_reads(shared: Path) -> None:
    cases = read_csv_cases(shared / "craftmd" / "usmle_and_derm_dataset.csv")
    # 2,004 rows with unique case ids (the paper reports on 2,000 vignettes).
    assert len(cases) == 2004 and len({c.case_id for c in cases}) == 2004
    assert all(split_vignette(c.vignette)[0] for c in cases)
