"""``agentclinic import-craftmd``: the paper's recorded answers as run directories.

The tests on the real recorded files read them from ../shared (never copied here) and
import each file once per session; the rest use small synthetic files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_agentclinic.cli import main
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.importers.craftmd import (
    GRADER,
    grade_mcq,
    import_craftmd,
)
from pytest_agentclinic.report.rundir import load_records
from pytest_agentclinic.report.statistics import accuracy_table

CRAFTMD = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "craftmd"
MODELS = {"gpt4": "gpt4_1106", "gpt3": "gpt3_1106"}
# Both modules read the same import of the recorded runs (import_recorded): under
# `-n 2 --dist loadgroup` one worker makes it once instead of each making its own.
pytestmark = pytest.mark.xdist_group("craftmd_recorded")
#: Supplementary Table 4 of the CRAFT-MD paper: FRQ accuracy.
PAPER_FRQ = {
    "gpt4": {"vignette": 0.486, "multiturn": 0.264, "singleturn": 0.133, "summarized": 0.272},
    "gpt3": {"vignette": 0.375, "multiturn": 0.169, "singleturn": 0.123, "summarized": 0.174},
}
_RUNS: dict[str, Path] = {}
_RECORDS: dict[str, list[ResultRecord]] = {}


def import_recorded(factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Import both recorded files once per session (test_commands_compare reuses them)."""
    if not (CRAFTMD / "recorded_gpt4_1106.jsonl.gz").is_file():
        pytest.skip(f"CRAFT-MD recorded answers not found at {CRAFTMD} "
                    f"(CI has ../shared beside the repo)")
    if not _RUNS:
        base = factory.mktemp("craftmd")
        for short, model in MODELS.items():
            out = base / f"craftmd-{model}"
            status = main(["import-craftmd", str(CRAFTMD / f"recorded_{model}.jsonl.gz"),
                           "--out", str(out)])
            assert status == 0
            _RUNS[short] = out
    return _RUNS


def records_of(runs: dict[str, Path], model: str) -> list[ResultRecord]:
    """The imported records of one model, read once (the tests only read them)."""
    if model not in _RECORDS:
        _RECORDS[model] = load_records(runs[model])
    return _RECORDS[model]


@pytest.fixture(scope="session")
def craftmd_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return import_recorded(tmp_path_factory)


@pytest.mark.parametrize("model", MODELS)
def test_frq_accuracy_matches_supplementary_table_4(craftmd_runs: dict[str, Path],
                                                    model: str) -> None:
    # Rule found: the pooled mean of the recorded verdicts over every case x trial line of
    # the experiment (see craftmd_import's docstring); all 8 numbers agree to 3 decimals.
    rows = accuracy_table(records_of(craftmd_runs, model), ["answer_format", "experiment"])
    got = {row.key[1]: row for row in rows}
    assert {row.key[0] for row in rows} == {"frq"}
    assert set(got) == set(PAPER_FRQ[model])
    for experiment, paper in PAPER_FRQ[model].items():
        row = got[experiment]
        assert row.accuracy is not None and row.ci_low is not None and row.ci_high is not None
        assert round(row.accuracy, 3) == paper, experiment
        assert row.ci_low < row.accuracy < row.ci_high
        assert 0.01 < row.ci_high - row.ci_low < 0.06, experiment
        assert row.n >= 9_980 and row.cases >= 2_003 and row.errors == 0


def test_records_carry_the_recorded_verdict_and_the_case_table(
        craftmd_runs: dict[str, Path]) -> None:
    records = records_of(craftmd_runs, "gpt4")
    assert len(records) == 40_065  # every FRQ line of the file, MCQ lines left out
    first = records[0]
    assert first.case_id == "case_0" and first.sample == 0
    assert (first.protocol, first.experiment, first.answer_format) == ("craftmd", "vignette",
                                                                        "frq")
    assert first.models == {"doctor": "gpt4_1106", "patient": "gpt4_1106",
                            "measurement": "none", "moderator": GRADER}
    assert (first.outcome, first.given, first.decided_by) == (
        "correct", "lymphogranuloma venereum (lgv)", GRADER)
    assert (first.specialty, first.dataset) == ("Dermatology", "dermatology_public")
    assert (first.turn_budget, first.turns_used, first.duration_s) == (0, 0, 0.0)
    assert len({r.specialty for r in records}) == 12
    assert {r.dataset for r in records} == {"MedQA_USMLE", "dermatology_public",
                                            "dermatology_private"}
    assert {r.sample for r in records} == {0, 1, 2, 3, 4}
    assert len({r.nodeid for r in records}) == len(records)


def test_summary_names_its_sources(craftmd_runs: dict[str, Path]) -> None:
    summary = json.loads((craftmd_runs["gpt3"] / "summary.json").read_text())
    recorded = CRAFTMD / "recorded_gpt3_1106.jsonl.gz"
    assert summary["run"] == "craftmd-gpt3_1106"
    assert summary["items"] == 40_036 and summary["repeat"] == 5
    assert summary["case_files"][str(recorded)] == hashlib.sha256(
        recorded.read_bytes()).hexdigest()
    assert str(CRAFTMD / "usmle_and_derm_dataset.csv") in summary["case_files"]
    assert summary["roles"]["doctor"] == "gpt3_1106"
    assert summary["by_doctor"]["gpt3_1106"]["n"] == 40_036


# --- synthetic files -------------------------------------------------------------------------

def line(case: str, trial: int, fmt: str, response: str, **over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"model": "toy_model", "case_id": case, "trial": trial,
                            "experiment": "vignette", "format": fmt,
                            "correct_answer": "psoriasis", "response": response}
    if fmt == "frq":
        data.update(extracted=response.lower(), grader_verdict=int(response == "Psoriasis"))
    data.update(over)
    return data


def write_files(tmp_path: Path, lines: list[Any], raw: str = "") -> Path:
    (tmp_path / "usmle_and_derm_dataset.csv").write_text(
        ",case_vignette,choice_1,choice_2,choice_3,choice_4,answer,category,dataset,case_id\n"
        '0,"A rash.",Eczema,Psoriasis,Tinea,Lichen planus,Psoriasis,Dermatology,derm_toy,c1\n')
    path = tmp_path / "recorded_toy.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(x) + "\n" for x in lines)
        fh.write(raw)
    return path


def test_mcq_lines_are_optional(tmp_path: Path) -> None:
    path = write_files(tmp_path, [line("c1", 0, "frq", "Psoriasis"),
                                  line("c1", 0, "mcq", "**Final Diagnosis:** Psoriasis."),
                                  line("c1", 1, "frq", "Eczema"),
                                  line("c1", 1, "mcq", "(c)")])
    frq_only = import_craftmd(path, out=tmp_path / "frq")
    assert [(r.sample, r.outcome) for r in frq_only.records] == [(0, "correct"),
                                                                 (1, "incorrect")]
    assert frq_only.mcq_lines == 2 and frq_only.records[0].specialty == "Dermatology"
    both = import_craftmd(path, out=tmp_path / "all", include_mcq=True)
    mcq = [r for r in both.records if r.answer_format == "mcq"]
    assert [(r.given, r.outcome) for r in mcq] == [("Psoriasis", "correct"),
                                                   ("Tinea", "incorrect")]
    assert len(load_records(tmp_path / "all")) == 4


def test_mcq_lines_use_the_shared_option_mapping() -> None:
    choices = ("Herpes", "Herpes zoster", "Syphilis", "Chancroid")
    # The paper's verbatim rule: the reply maps to B, but without the answer's text it scores 0.
    assert grade_mcq("B", "Herpes zoster", choices) == ("Herpes zoster", False)
    assert grade_mcq("Option d: Chancroid", "Chancroid", choices) == ("Chancroid", True)
    assert grade_mcq("**Final Diagnosis:** Herpes zoster", "Herpes", choices)[1] is False
    assert grade_mcq("A fungal infection", "Herpes", choices) == (None, False)
    assert grade_mcq("None of the options fit.", "Herpes", choices) == (None, False)


def test_bad_lines_are_skipped_and_reported(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_files(tmp_path, [line("c1", 0, "frq", "Psoriasis"),
                                  line("c1", 0, "frq", "Psoriasis"),
                                  line("c9", 1, "frq", "Eczema"),
                                  {"model": "toy_model"},
                                  line("c1", 2, "frq", "Eczema", grader_verdict=None)],
                       raw="{not json\n")
    monkeypatch.chdir(tmp_path)
    assert main(["import-craftmd", str(path)]) == 1
    out, err = capsys.readouterr()
    run_dir = tmp_path / "reports" / "craftmd-toy_model"  # the default --out
    records = load_records(run_dir)
    assert [(r.case_id, r.specialty) for r in records] == [("c1", "Dermatology"),
                                                           ("c9", "unspecified")]
    assert "wrote 2 records" in out and "1 records name cases missing" in out
    assert "recorded_toy.jsonl.gz:4: missing field(s) case_id" in err
    assert ":5: FRQ line without a 0/1 grader_verdict" in err
    assert ":6: not JSON" in err and "duplicate line" in err
    assert json.loads((run_dir / "summary.json").read_text())["bad_case_records"] == 4


def test_unreadable_input_is_a_usage_error(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-craftmd", str(tmp_path / "missing.jsonl.gz")]) == 2
    assert "import-craftmd: error:" in capsys.readouterr().err
    path = write_files(tmp_path, [line("c1", 0, "frq", "Psoriasis")])
    assert main(["import-craftmd", str(path), "--out", str(tmp_path / "o"),
                 "--dataset-csv", str(tmp_path / "nope.csv")]) == 2
    assert "dataset CSV not found" in capsys.readouterr().err
