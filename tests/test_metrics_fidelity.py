"""Patient fidelity: each definition on hand-written answers, then `agentclinic
patient-check` against the offline patient and LLM patients served by a local fake server."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import SHARED

from pytest_agentclinic.cli import main
from pytest_agentclinic.metrics.facts import vignette_facts
from pytest_agentclinic.metrics.fidelity import check_answer, names_diagnosis
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
VIGNETTE = ("A 30-year-old woman presents with an itchy rash on both elbows for three weeks. "
            "Her mother has psoriasis. On examination, silvery scaly plaques are seen on the "
            "elbows. Which of the following is the most likely diagnosis?")
FACTS = vignette_facts(VIGNETTE)
DX = ["Plaque psoriasis", "Psoriasis vulgaris"]


def check(answer: str) -> tuple[set[int], tuple[str, ...], int, bool, bool]:
    c = check_answer(answer, FACTS, VIGNETTE, DX)
    return set(c.conveyed), c.added, c.claims, c.revealed_diagnosis, c.revealed_exam


def test_a_faithful_answer_conveys_facts_and_adds_nothing() -> None:
    assert check("I've had an itchy rash on both my elbows for three weeks.") == (
        {0}, (), 0, False, False)
    assert check("I don't know, that was not mentioned to me.") == (set(), (), 0, False, False)


def test_invented_claims_and_denials_are_added_sentences() -> None:
    conveyed, added, claims, _, _ = check("My mother has psoriasis. I also smoke twenty "
                                          "cigarettes a day. No, I haven't travelled abroad.")
    assert conveyed == {1}
    assert added == ("I also smoke twenty cigarettes a day.",
                     "No, I haven't travelled abroad.")
    assert claims == 1  # the denial is counted apart


def test_naming_the_diagnosis_and_revealing_an_exam_finding_are_leaks() -> None:
    *_, dx, exam = check("I think it is plaque psoriasis.")
    assert dx and not exam
    *_, dx, exam = check("The doctor saw silvery scaly plaques on my elbows.")
    assert exam and not dx
    assert not names_diagnosis("My mother has psoriasis.", ["Plaque psoriasis"])


# --- the command --------------------------------------------------------------------------

@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path]:
    """Two cases, a CSV and two recorded conversations in the CRAFT-MD layout."""
    vignettes = tmp_path / "vignettes.csv"
    with vignettes.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["", "case_vignette", "choice_1", "choice_2", "choice_3", "choice_4",
                    "answer", "category", "dataset", "case_id"])
        w.writerow([0, VIGNETTE, "Plaque psoriasis", "Eczema", "Tinea", "Lichen planus",
                    "Plaque psoriasis", "Dermatology", "derm", "case_0"])
        w.writerow([1, VIGNETTE.replace("elbows", "knees"), "Plaque psoriasis", "Eczema",
                    "Tinea", "Lichen planus", "Plaque psoriasis", "Dermatology", "derm",
                    "case_1"])
    convos = tmp_path / "conversations.jsonl"
    lines = []
    for case in ("case_0", "case_1"):
        lines.append(json.dumps({"case_id": case, "trial": 0, "messages": [
            {"role": "system", "content": "You are an AI doctor."},
            {"role": "assistant", "content": "What brings you in?"},
            {"role": "user", "content": "An itchy rash for three weeks."},
            {"role": "assistant", "content": "Any family history of skin disease?"},
            {"role": "user", "content": "My mother has psoriasis. I also have a pet snake."},
            {"role": "assistant", "content": "Final Diagnosis: psoriasis"}]}))
    convos.write_text("\n".join(lines) + "\n")
    return convos, vignettes


def run(recorded: tuple[Path, Path], tmp_path: Path, *args: str) -> int:
    convos, vignettes = recorded
    return main(["patient-check", "--conversations", str(convos), "--vignettes",
                 str(vignettes), "--cache-dir", str(tmp_path / "cache"), *args])


def test_offline_patient_check(recorded: tuple[Path, Path], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert run(recorded, tmp_path, "--model", "offline", "--json", str(tmp_path / "f.json")) == 0
    out = capsys.readouterr().out
    assert "2 conversations, 4 doctor questions, 6 vignette facts" in out
    # the recorded patient added "I also have a pet snake" once per conversation
    assert "| recorded GPT-4 patient-AI | 4 (67%)          | 2              | 0" in out
    data = json.loads((tmp_path / "f.json").read_text())
    assert data["summary"]["added_claims"] == {"recorded": 2, "offline": 0}


def test_an_llm_patient_that_names_the_diagnosis_leaks(
        fake_server: Start, recorded: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    def patient(req: FakeRequest) -> FakeReply:
        assert "silvery scaly plaques" in req.system  # the vignette patient-AI prompt
        return FakeReply("My dermatologist said it is plaque psoriasis; silvery scaly "
                         "plaques are seen on the elbows.")

    server = fake_server(patient)
    assert run(recorded, tmp_path, "--model", "openai/fake", "--api-base", server.url) == 0
    out = capsys.readouterr().out
    assert "| openai/fake               |" in out
    row = next(line for line in out.splitlines() if line.startswith("| openai/fake"))
    assert row.split("|")[5:7] == [" 100.0%           ", " 100.0%              "]
    assert server.calls == 4


def test_model_errors_are_not_scored_and_an_unreachable_server_stops(
        fake_server: Start, recorded: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    broken = fake_server(lambda req: FakeReply("", status=500))
    assert run(recorded, tmp_path, "--model", "openai/fake", "--api-base", broken.url,
               "--retries", "0") == 1
    out = capsys.readouterr().out
    assert "2 conversations not scored (model errors)" in out
    assert run(recorded, tmp_path, "--model", "openai/fake", "--api-base",
               "http://127.0.0.1:9/v1", "--retries", "0", "--timeout", "5") == 1
    assert "agentclinic patient-check: error:" in capsys.readouterr().err


def test_unreadable_input_is_one_line_and_exit_2(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"case_id": "case_0"}\n')
    csv_path = tmp_path / "v.csv"
    csv_path.write_text("case_vignette,choice_1,choice_2,choice_3,choice_4,answer,category,"
                        "dataset,case_id\nA rash.,a,b,c,d,a,Dermatology,x,case_0\n")
    assert main(["patient-check", "--model", "offline", "--conversations", str(bad),
                 "--vignettes", str(csv_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:1: field 'messages'" in err[0]


def test_offline_patient_leaks_less_than_the_recorded_one_on_the_317(
        capsys: pytest.CaptureFixture[str]) -> None:
    convos = SHARED / "craftmd" / "conversations_gpt4_1106_dermatology.jsonl.gz"
    if not convos.exists():
        pytest.skip(f"{convos} not found (the CRAFT-MD data sits in ../shared)")
    assert main(["patient-check", "--model", "offline", "--conversations", str(convos),
                 "--vignettes", str(SHARED / "craftmd" / "usmle_and_derm_dataset.csv"),
                 "--limit", "60"]) == 0
    rows = {line.split("|")[1].strip(): line.split("|")
            for line in capsys.readouterr().out.splitlines() if line.startswith("| ")}
    recorded, offline = rows["recorded GPT-4 patient-AI"], rows["offline"]
    assert int(offline[3]) == 0 < int(recorded[3])  # the offline patient invents nothing
    assert float(offline[6].strip(" %")) < float(recorded[6].strip(" %"))


def test_the_agentclinic_patient_prompt_can_be_checked_too(
        fake_server: Start, recorded: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    prompts: list[str] = []

    def patient(req: FakeRequest) -> FakeReply:
        prompts.append(req.role)
        return FakeReply("I don't know.")

    server = fake_server(patient)
    assert run(recorded, tmp_path, "--model", "openai/fake", "--api-base", server.url,
               "--prompt", "agentclinic") == 0
    assert set(prompts) == {"patient"}  # AgentClinic's patient prompt, not CRAFT-MD's
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("| openai/fake"))
    assert row.split("|")[2].strip() == "0 (0%)"  # "I don't know" conveys nothing
