"""``agentclinic compare``: the paper's GPT-4 vs GPT-3.5 runs, and small synthetic runs."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_importers_craftmd import import_recorded
from test_report_statistics import rec

from pytest_agentclinic.cli import main
from pytest_agentclinic.commands.compare import FIELDS_HELP
from pytest_agentclinic.core.records import ResultRecord
from pytest_agentclinic.report.statistics import GROUP_FIELDS

# Both modules read the same import of the recorded runs (import_recorded): under
# `-n 2 --dist loadgroup` one worker makes it once instead of each making its own.
pytestmark = pytest.mark.xdist_group("craftmd_recorded")

SPECIALTIES = {"Cardiovascular System", "Dermatology", "Endocrinology",
               "Gastrointestinal System", "Hematology and Oncology", "Infectious Diseases",
               "Neurology", "Obstetrics and Gynecology", "Other", "Pediatrics and Neonatology",
               "Renal and Genitourinary System", "Rheumatology"}


def run_cli(args: Sequence[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(args))
    return status, out.getvalue()


@pytest.fixture(scope="module")
def gpt4_vs_gpt35(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """One compare run (by experiment, by specialty): its stdout and its JSON."""
    runs = import_recorded(tmp_path_factory)
    out = tmp_path_factory.mktemp("compare") / "gpt4-vs-gpt35.json"
    status, text = run_cli(["compare", str(runs["gpt4"]), str(runs["gpt3"]), "--by",
                            "experiment", "--by", "specialty", "--json", str(out)])
    assert status == 0
    return text, json.loads(out.read_text())


def test_multiturn_frq_gpt4_beats_gpt35(gpt4_vs_gpt35: tuple[str, dict[str, Any]]) -> None:
    text, data = gpt4_vs_gpt35
    by_experiment = data["tables"][0]
    assert by_experiment["by"] == ["experiment"]
    rows = {r["label"]: r for r in by_experiment["rows"]}
    assert list(rows) == ["multiturn", "singleturn", "summarized", "vignette", "all"]
    multi = rows["multiturn"]
    assert multi["n_pairs"] == 10_020 and multi["cases"] == 2_004
    assert round(multi["accuracy_a"], 3) == 0.264 and round(multi["accuracy_b"], 3) == 0.169
    assert multi["difference"] == pytest.approx(multi["accuracy_b"] - multi["accuracy_a"])
    assert multi["ci_low"] < multi["difference"] < multi["ci_high"] < 0
    assert multi["p_mcnemar"] < 1e-4 and multi["p_bootstrap"] < 1e-4
    assert multi["p_holm_mcnemar"] < 1e-4
    assert multi["to_wrong"] == sum(multi["cases_to_wrong"].values())
    assert data["pairing"]["pairs"] == rows["all"]["n_pairs"]
    assert "| multiturn " in text and "<0.0001" in text and "right->wrong" in text


def test_per_specialty_table_has_the_12_specialties(
        gpt4_vs_gpt35: tuple[str, dict[str, Any]]) -> None:
    text, data = gpt4_vs_gpt35
    table = data["tables"][1]
    assert table["by"] == ["specialty"]
    labels = [r["label"] for r in table["rows"]]
    assert labels[-1] == "all" and set(labels[:-1]) == SPECIALTIES
    for row in table["rows"]:
        assert row["p_holm_mcnemar"] >= row["p_mcnemar"]
    for specialty in SPECIALTIES:
        assert f"| {specialty} " in text


# --- synthetic runs --------------------------------------------------------------------------

def write_run(path: Path, records: Sequence[ResultRecord]) -> Path:
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    return path


def test_compare_small_runs(tmp_path: Path) -> None:
    a = [rec(f"c{i}", "correct" if i < 8 else "incorrect",
             specialty="Neurology" if i % 2 else "Dermatology") for i in range(12)]
    b = [rec(f"c{i}", "correct" if i < 3 else "incorrect", doctor="model-b",
             specialty="Neurology" if i % 2 else "Dermatology") for i in range(13)]
    ra, rb = write_run(tmp_path / "a", a), write_run(tmp_path / "b", b)
    status, text = run_cli(["compare", str(ra), str(rb), "--by", "specialty",
                            "--by", "doctor,specialty", "--flips", "2"])
    assert status == 0
    assert "paired 12 judged items; 0 only in A, 1 only in B" in text
    assert "| model-a vs model-b | Dermatology " in text
    assert "right->wrong 5 pairs in 5 cases: c3, c4, ... (+3 cases)" in text
    assert "wrong->right 0 pairs in 0 cases" in text


def test_compare_two_doctors_of_one_run(tmp_path: Path) -> None:
    both = [rec(f"c{i}", "correct" if i % 2 else "incorrect", doctor=d)
            for i in range(6) for d in ("m1", "m2")]
    run = write_run(tmp_path / "run", both)
    assert run_cli(["compare", str(run), str(run)])[0] == 2  # ambiguous without a filter
    status, text = run_cli(["compare", str(run), str(run), "--doctor-a", "m1",
                            "--doctor-b", "m2"])
    assert status == 0 and "| all " in text and "+0.000" in text
    assert run_cli(["compare", str(run), str(run), "--doctor-a", "zz"])[0] == 2


def test_help_lists_every_group_field() -> None:
    assert FIELDS_HELP.split(", ") == list(GROUP_FIELDS)


def test_bad_numbers_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compare", "a", "b", "--resamples", "0"])
    assert exc.value.code == 2
    assert "expected a whole number >= 1, got '0'" in capsys.readouterr().err


def test_command_line_errors_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest_agentclinic.cli", "compare",
                           str(tmp_path / "a"), str(tmp_path / "b")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "agentclinic compare: error: no results file at" in proc.stderr


def test_pair_on_pairs_runs_with_different_turn_budgets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = write_run(tmp_path / "t10", [rec(f"c{i}", "incorrect" if i < 3 else "correct",
                                             turn_budget=10) for i in range(8)])
    long = write_run(tmp_path / "t20", [rec(f"c{i}", "correct", turn_budget=20, doctor="m")
                                        for i in range(8)])
    # Reproduction: nothing paired, and the message blamed "cases or doctor models".
    assert run_cli(["compare", str(short), str(long)])[0] == 2
    err = capsys.readouterr().err
    assert ("no judged items pair between the two runs (pairing on dataset, case, sample, "
            "bias, turn_budget, experiment, answer_format):") in err
    assert ("turn_budget: only in A 10; only in B 20; to pair across turn_budget, leave it "
            "out: --pair-on bias,experiment,answer_format") in err
    status, text = run_cli(["compare", str(short), str(long), "--pair-on",
                            "bias,experiment,answer_format", "--by", "turn_budget"])
    assert status == 0
    assert "paired 8 judged items; 0 only in A, 0 only in B" in text
    assert "| 10 vs 20 " in text and "+0.375" in text


def test_unpaired_items_are_explained(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [rec(f"c{i}", "correct") for i in range(5)])
    b = write_run(tmp_path / "b", [rec(f"c{i}", "correct", doctor="m") for i in range(2, 7)])
    status, text = run_cli(["compare", str(a), str(b)])
    assert status == 0
    assert "  not paired: cases: only in A c0, c1; only in B c5, c6" in text


def test_duplicates_name_the_field_they_differ_in(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    both = [rec("c1", "correct", models={"doctor": "m", "patient": p}) for p in ("p1", "p2")]
    run = write_run(tmp_path / "run", both)
    assert run_cli(["compare", str(run), str(run)])[0] == 2
    assert "they differ in patient; keep one doctor" in capsys.readouterr().err
    status, _ = run_cli(["compare", str(run), str(run), "--pair-on",
                         "bias,turn_budget,experiment,answer_format,patient"])
    assert status == 0


def test_pair_default_is_in_step_with_the_library() -> None:
    from pytest_agentclinic.commands.compare import PAIR_DEFAULT
    from pytest_agentclinic.report.comparison import PAIRED_BY_DEFAULT

    assert PAIR_DEFAULT.split(",") == list(PAIRED_BY_DEFAULT)
    assert run_cli(["compare", "a", "b", "--pair-on", "colour"])[0] == 2


def test_control_characters_in_case_ids_are_escaped(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    evil = "c\x1b[2J\x1b[31mred\x07bell\rCR\nFORGED"
    cases = [evil, *(f"c{i}" for i in range(4))]
    a = write_run(tmp_path / "a", [rec(c, "correct") for c in cases])
    b = write_run(tmp_path / "b", [rec(c, "incorrect", doctor="m") for c in cases] +
                  [rec(f"{evil}-only-b", "correct", doctor="m")])
    status, text = run_cli(["compare", str(a), str(b), "--by", "specialty", "--flips", "9"])
    assert status == 0
    assert not {"\x1b", "\x07", "\r"} & set(text)
    assert "FORGED" in text and not any(line.startswith("FORGED") for line in text.splitlines())
    assert "c\\x1b[2J\\x1b[31mred\\x07bell\\rCR\\nFORGED" in text
    duplicated = write_run(tmp_path / "dup", [rec(evil, "correct"), rec(evil, "incorrect")])
    assert run_cli(["compare", str(duplicated), str(a)])[0] == 2
    assert not {"\x1b", "\x07", "\r"} & set(capsys.readouterr().err)


def test_the_sign_flip_test_holds_no_flips_by_cases_matrix() -> None:
    import tracemalloc

    import numpy as np

    from pytest_agentclinic.report.clustered import DEFAULT_FLIPS, sign_flip_two_sided

    diffs = np.random.default_rng(3).choice([-1.0, 0.0, 1.0], size=1500).tolist()
    tracemalloc.start()
    try:
        p = sign_flip_two_sided(diffs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # All flips at once: DEFAULT_FLIPS x 1,500 doubles (240 MB), and as many indices.
    assert peak < DEFAULT_FLIPS * 1500 * 8 / 20
    # The same draws as one matrix: the same p.
    signs = np.random.default_rng(0).choice(np.array([-1.0, 1.0]), size=(DEFAULT_FLIPS, 1500))
    d = np.abs(np.asarray(diffs))
    low = ((signs @ d <= sum(diffs) + 1e-9).sum() + 1) / (DEFAULT_FLIPS + 1)
    high = ((signs @ d <= -sum(diffs) + 1e-9).sum() + 1) / (DEFAULT_FLIPS + 1)
    assert p == pytest.approx(min(1.0, 2 * min(low, high)))
