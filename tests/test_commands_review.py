"""`agentclinic review`: blinded sheet, ratings import, means by model and weighted kappa."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentclinic.cli import main
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.core.transcript import Transcript, Utterance
from pytest_agentclinic.report.review import CRITERIA, weighted_kappa

MODELS = ("openai/gpt-4o", "anthropic/claude-x")


def make_run(root: Path) -> Path:
    run = root / "run1"
    (run / "transcripts").mkdir(parents=True)
    lines = []
    for m, model in enumerate(MODELS):
        for c in range(6):
            t = Transcript(protocol="agentclinic", case_id=f"c{c}", dataset="d",
                           specialty="Dermatology",
                           models={"doctor": model, "patient": "offline"}, sample=0,
                           turn_budget=10, outcome="correct", diagnosis="psoriasis",
                           utterances=[Utterance(turn=1, role="doctor", kind="question",
                                                 text=f"I am {model}. What brings you in?",
                                                 model=model),
                                       Utterance(turn=1, role="patient", kind="answer",
                                                 text="A rash.", model="offline"),
                                       Utterance(turn=2, role="doctor", kind="diagnosis",
                                                 text="DIAGNOSIS READY: psoriasis",
                                                 model=model, detail="psoriasis")])
            path = run / "transcripts" / f"{m}-{c}.json"
            path.write_text(t.model_dump_json())
            record = ResultRecord.from_transcript(t, run="run1", nodeid=f"x.yaml::c{c}[{m}]",
                                                  expected="Plaque psoriasis",
                                                  transcript_path=str(path), case_file=None)
            lines.append(record.model_dump_json())
    (run / "results.jsonl").write_text("\n".join(lines) + "\n")
    return run


def fill(sheet: Path, out: Path, rater: str,
         score: Callable[[int, dict[str, str]], int]) -> None:
    rows = list(csv.DictReader(sheet.open()))
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for i, row in enumerate(rows):
            w.writerow({**row, "rater": rater,
                        **{c.name: str(score(i, row)) for c in CRITERIA}})


def test_sheet_is_blinded_balanced_and_reproducible(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path)
    assert main(["review", str(run), "--sample", "6", "--seed", "7",
                 "--out", str(tmp_path / "rev")]) == 0
    sheet = (tmp_path / "rev" / "sheet.csv").read_text()
    page = (tmp_path / "rev" / "sheet.html").read_text()
    for text in (sheet, page):
        assert "gpt-4o" not in text.lower() and "claude" not in text.lower()
    assert "I am [model]." in page and "openai/" not in page  # the provider goes too
    for c in CRITERIA:  # every criterion with its anchors on the printable page
        assert c.anchors[0] in page and c.anchors[2] in page
    rows = list(csv.DictReader(sheet.splitlines()))
    assert sorted(r["model"] for r in rows) == ["M1", "M1", "M1", "M2", "M2", "M2"]
    key = json.loads((tmp_path / "rev" / "key.json").read_text())
    assert set(key["models"].values()) == set(MODELS)
    assert main(["review", str(run), "--sample", "6", "--seed", "7",
                 "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "sheet.csv").read_text() == sheet
    assert json.loads((tmp_path / "again" / "key.json").read_text()) == key


def test_import_gives_means_by_model_and_kappa_of_two_raters(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path)
    assert main(["review", str(run), "--sample", "8", "--out", str(tmp_path / "rev")]) == 0
    key = json.loads((tmp_path / "rev" / "key.json").read_text())
    good = next(code for code, m in key["models"].items() if m == MODELS[0])
    sheet = tmp_path / "rev" / "sheet.csv"
    fill(sheet, tmp_path / "rev" / "ann.csv", "ann",
         lambda i, row: 5 if row["model"] == good else 2)
    fill(sheet, tmp_path / "rev" / "bob.csv", "bob",
         lambda i, row: 4 if row["model"] == good else 2)
    capsys.readouterr()
    assert main(["review", "--import", str(tmp_path / "rev" / "ann.csv"), "--import",
                 str(tmp_path / "rev" / "bob.csv"), str(run)]) == 0
    out = capsys.readouterr().out
    review = json.loads((run / "review.json").read_text())
    assert review["raters"] == ["ann", "bob"] and review["ratings"] == 16
    assert review["by_model"][MODELS[0]]["history_completeness"]["mean"] == 4.5
    assert review["by_model"][MODELS[1]]["history_completeness"]["mean"] == 2.0
    kappa = review["agreement"]["history_completeness"]
    assert kappa["items"] == 8 and kappa["kappa"] == pytest.approx(
        weighted_kappa([5, 5, 5, 5, 2, 2, 2, 2], [4, 4, 4, 4, 2, 2, 2, 2]))
    assert "inter-rater agreement (ann and bob)" in out
    assert "Expert review (1-5) by doctor" in (run / "report.html").read_text()
    assert "expert review (1-5) by doctor" in (run / "summary.md").read_text()


def test_weighted_kappa_definition() -> None:
    assert weighted_kappa([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) == 1.0
    # quadratic weights: a one-point disagreement costs far less than a four-point one
    near = weighted_kappa([1, 2, 3, 4, 5], [2, 2, 3, 4, 4])
    far = weighted_kappa([1, 2, 3, 4, 5], [5, 2, 3, 4, 1])
    assert near is not None and far is not None and near > 0.8 > 0 > far
    assert weighted_kappa([3, 3], [3, 3]) is None  # no variation: kappa undefined


def test_a_bad_rating_is_one_line_naming_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path)
    assert main(["review", str(run), "--sample", "2", "--out", str(tmp_path / "rev")]) == 0
    sheet = tmp_path / "rev" / "sheet.csv"
    fill(sheet, sheet, "ann", lambda i, row: 7 if i == 1 else 3)
    capsys.readouterr()
    assert main(["review", "--import", str(sheet), str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"agentclinic review: error: {sheet}:3: field 'history_completeness': "
                   "expected 1-5 or blank, got '7'"]
    assert not (run / "review.json").exists()


def test_without_sample_or_import_it_says_what_to_give(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(make_run(tmp_path))]) == 2
    assert "give --sample N and --out DIR" in capsys.readouterr().err


def test_two_raters_in_one_sheet_are_told_apart_by_the_rater_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path)
    assert main(["review", str(run), "--sample", "4", "--out", str(tmp_path / "rev")]) == 0
    sheet = tmp_path / "rev" / "sheet.csv"
    fill(sheet, tmp_path / "a.csv", "ann", lambda i, row: 1 + i)
    fill(sheet, tmp_path / "b.csv", "bob", lambda i, row: 1 + i)
    both = (tmp_path / "a.csv").read_text() + "".join(
        (tmp_path / "b.csv").read_text().splitlines(keepends=True)[1:])
    sheet.write_text(both)
    assert main(["review", "--import", str(sheet), str(run)]) == 0
    review = json.loads((run / "review.json").read_text())
    assert review["raters"] == ["ann", "bob"]
    assert review["agreement"]["diagnostic_reasoning"] == {"kappa": 1.0, "items": 4}
