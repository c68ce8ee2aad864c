"""The bias catalogue: names and groups, prompts, offline behaviour and refusal detection."""

from __future__ import annotations

import asyncio
import functools
import re
from pathlib import Path

import pytest

from pytest_agentclinic.agents import bias_behaviour as o
from pytest_agentclinic.agents import biases as b
from pytest_agentclinic.agents.distractors import pick_distractor
from pytest_agentclinic.agents.offline_doctor import HISTORY, plan
from pytest_agentclinic.agents.offline_patient import OfflinePatient
from pytest_agentclinic.agents.refusal import is_refusal
from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.core.datafiles import data_file
from pytest_agentclinic.core.errors import InputError
from pytest_agentclinic.core.roles import TurnView
from pytest_agentclinic.core.text import content_words, fold

# The specification, written out independently of the module under test.
DOCTOR = ("recency", "frequency", "false_consensus", "confirmation", "status_quo", "gender",
          "race", "sexual_orientation", "cultural", "education", "religion", "socioeconomic")
PATIENT = ("recency", "frequency", "false_consensus", "self_diagnosis", "gender", "race",
           "sexual_orientation", "cultural", "education", "religion", "socioeconomic")
COGNITIVE = {"recency", "frequency", "false_consensus", "confirmation", "status_quo",
             "self_diagnosis"}
ALL = [f"doctor:{n}" for n in DOCTOR] + [f"patient:{n}" for n in PATIENT]
CASES_DIR = Path(__file__).resolve().parents[1] / "cases"


def names(side: str | None = None, kind: str | None = None) -> list[str]:
    return [n for n in ALL if (side is None or n.startswith(f"{side}:"))
            and (kind is None or (n.split(":")[1] in COGNITIVE) == (kind == "cognitive"))]


def test_exactly_23_biases_with_sides_and_kinds() -> None:
    assert list(b.BIASES) == ALL and len(b.BIASES) == 23
    for name, bias in b.BIASES.items():
        side, short = name.split(":")
        assert (bias.name, bias.side, bias.bias) == (name, side, short)
        assert bias.kind == ("cognitive" if short in COGNITIVE else "implicit")
        assert bias.description.strip().endswith(".") and bias.prompt.strip()
    assert sum(x.side == "doctor" for x in b.BIASES.values()) == 12
    assert re.fullmatch(r"[\w.-]+-\d+", b.bias_prompt_version())


@pytest.mark.parametrize(("group", "expected"), [
    ("all", names()), ("cognitive", names(kind="cognitive")),
    ("implicit", names(kind="implicit")), ("doctor:all", names("doctor")),
    ("patient:all", names("patient")), ("doctor:cognitive", names("doctor", "cognitive")),
    ("doctor:implicit", names("doctor", "implicit")),
    ("patient:cognitive", names("patient", "cognitive")),
    ("patient:implicit", names("patient", "implicit")),
])
def test_groups_expand(group: str, expected: list[str]) -> None:
    assert b.resolve_biases([group]) == tuple(expected)


def test_group_sizes_match_the_paper() -> None:
    assert [len(b.resolve_biases([g])) for g in ("doctor:cognitive", "doctor:implicit",
                                                 "patient:cognitive", "patient:implicit")] \
        == [5, 7, 4, 7]


def test_resolve_is_deduplicated_in_canonical_order() -> None:
    got = b.resolve_biases(["patient:self_diagnosis", "doctor:race", "none",
                            "patient:cognitive, DOCTOR:race", "none"])
    assert got == ("none", "doctor:race", "patient:recency", "patient:frequency",
                   "patient:false_consensus", "patient:self_diagnosis")
    assert b.resolve_biases(["doctor:recency"]) == ("doctor:recency",)  # no implicit 'none'
    assert b.resolve_biases([]) == ()
    assert b.resolve_biases(["all", "none"]) == ("none", *ALL)


@pytest.mark.parametrize("value", ["doctor:self_diagnosis", "patient:confirmation", "bogus",
                                   "doctor", "", "doctor:recency,nope"])
def test_unknown_value_names_every_allowed_value(value: str) -> None:
    with pytest.raises(ValueError, match="unknown bias") as info:
        b.resolve_biases(["doctor:recency", value])
    message = str(info.value)
    for allowed in ["none", "all", "cognitive", "implicit", "doctor:all", "patient:all",
                    "doctor:cognitive", "doctor:implicit", "patient:cognitive",
                    "patient:implicit", *ALL]:
        assert allowed in message


@pytest.mark.parametrize("name", ALL)
def test_prompts_render_without_leftover_placeholders(name: str) -> None:
    text = b.bias_prompt(name, distractor="Zebra fever")
    assert text and not re.search(r"[$<>{}]|\[\w", text)
    needs = name in {"doctor:recency", "doctor:frequency", "doctor:false_consensus",
                     "doctor:status_quo", "patient:recency", "patient:frequency",
                     "patient:false_consensus", "patient:self_diagnosis"}
    assert ("Zebra fever" in text) == needs
    if needs:
        with pytest.raises(ValueError, match="distractor"):
            b.bias_prompt(name, distractor=" ")
    else:
        assert b.bias_prompt(name, distractor="") == text


def test_prompt_for_none_or_the_other_side_is_empty() -> None:
    assert b.bias_prompt("none", distractor="x") == ""
    assert b.bias_prompt("doctor:race", distractor="x", side="patient") == ""
    assert b.bias_prompt("doctor:race", distractor="x", side="doctor")
    with pytest.raises(ValueError, match="unknown bias"):
        b.bias_prompt("doctor:nope", distractor="x")


def test_pick_distractor_is_stable_and_never_the_diagnosis() -> None:
    choices = ["Bell palsy", "Facial nerve palsy", "Ramsay Hunt syndrome", "Stroke", "Lyme disease"]
    accepted = ["Bell palsy", "Idiopathic facial nerve palsy"]
    picks = {pick_distractor(choices, accepted, key=f"case-{i}") for i in range(40)}
    assert picks == {"Ramsay Hunt syndrome", "Stroke", "Lyme disease"}
    assert pick_distractor(choices, accepted, key="k") == pick_distractor(
        list(reversed(choices)), accepted, key="k")
    fallback = pick_distractor(["Bell palsy"], accepted, key="k")
    assert fallback and not any(fold(a) in fold(fallback) for a in accepted)
    # A broader name is accepted by the moderator, so it is no distractor either.
    assert pick_distractor(["Anemia", "Gout"], ["Iron deficiency anemia"], key="x") == "Gout"


# --- offline patient ------------------------------------------------------------------------

@functools.cache
def project_cases() -> list[Case]:
    out = [c for path in sorted(CASES_DIR.glob("*.yaml")) for _, c in load_case_file(path).cases]
    assert len(out) >= 10
    return out


def plain_answers(case: Case) -> list[tuple[str, str]]:
    if case.id not in _PLAIN:
        _PLAIN[case.id] = _ask_checklist(case)
    return _PLAIN[case.id]


_PLAIN: dict[str, list[tuple[str, str]]] = {}


def _ask_checklist(case: Case) -> list[tuple[str, str]]:
    patient = OfflinePatient()
    questions = [*HISTORY, "How old are you?", "Do you drink alcohol?"]
    return [(q, asyncio.run(patient.respond(TurnView(case, (), q, 10, 10, 0))).text)
            for q in questions]


def biased(name: str, case: Case, belief: str = o.DEFAULT_BELIEF) -> list[tuple[str, str]]:
    return [(answer, o.offline_patient_answer(name, answer, q, turn=turn, belief=belief,
                                              demographics=case.patient.demographics))
            for turn, (q, answer) in enumerate(plain_answers(case))]


@pytest.mark.parametrize("distractor_belief", [False, True])
@pytest.mark.parametrize("name", names("patient"))
def test_offline_patient_bias_removes_information_and_never_names_the_diagnosis(
        name: str, distractor_belief: bool) -> None:
    cases = project_cases()
    everything = [c.diagnosis for c in cases]
    changed = lost = 0
    for case in cases:
        belief = (pick_distractor(case.choices or everything, case.accepted_diagnoses,
                                    key=case.id).lower()
                  if distractor_belief else o.DEFAULT_BELIEF)
        answers = biased(name, case, belief)
        assert answers == biased(name, case, belief)  # deterministic
        for plain, out in answers:
            for diagnosis in case.accepted_diagnoses:
                if fold(diagnosis) not in fold(plain):
                    assert fold(diagnosis) not in fold(out), (case.id, out)
            changed += out != plain
            lost += bool(content_words(plain) - content_words(out))
    assert changed and lost, f"{name} changed {changed} answers, dropped words in {lost}"


def test_offline_patient_rules_in_detail() -> None:
    ask = o.offline_patient_answer
    two = "The cough started a week ago. I also feel short of breath."
    assert ask("patient:recency", two, "Tell me more", turn=3, demographics="") == \
        "The cough started a week ago. Nothing else worth mentioning, really."
    assert "the flu" in ask("patient:self_diagnosis", "Yes.", "Fever?", turn=2, demographics="",
                            belief="the flu")
    assert "just stress" in ask("patient:false_consensus", "Yes.", "x", turn=0, demographics="")
    assert ask("patient:race", "Smokes 10 a day.", "Do you smoke?", turn=2,
               demographics="50-year-old man") == "I'd rather not say."
    assert ask("patient:race", "Smokes 10 a day.", "Do you smoke?", turn=3,
               demographics="50-year-old man") == "Smokes 10 a day."
    assert ask("patient:gender", "I am a 50-year-old man.", "How old are you?", turn=5,
               demographics="50-year-old man") == "I don't see why that matters."
    for unchanged in ("none", "doctor:recency", "doctor:race"):
        assert ask(unchanged, two, "x", turn=0, demographics="") == two
    with pytest.raises(ValueError, match="unknown bias"):
        ask("patient:nope", two, "x", turn=0, demographics="")


# --- offline doctor -------------------------------------------------------------------------

@pytest.mark.parametrize("name", names("doctor"))
def test_every_doctor_adjustment_differs_from_neutral(name: str) -> None:
    adj = o.offline_doctor_adjustment(name)
    assert adj != o.NEUTRAL and adj != o.DoctorAdjustment()
    steps = plan(20)
    changed = o.adjust_plan(steps, adj) != steps
    if name.split(":")[1] in COGNITIVE:
        want = "first_impression" if name == "doctor:confirmation" else "distractor"
        assert adj.anchor == want and adj.anchor_weight > 0
        if name == "doctor:confirmation":
            assert adj.test_fraction < 1 and changed
    else:
        assert "social" in adj.skip_topics and changed
        questions = [s for s in o.adjust_plan(steps, adj) if not s.startswith("REQUEST")]
        assert len(questions) < len(HISTORY)
        assert not any("smoke" in q for q in questions)


def test_neutral_for_none_and_patient_biases_and_plan_untouched() -> None:
    assert o.offline_doctor_adjustment("none") is o.NEUTRAL
    assert o.offline_doctor_adjustment("patient:self_diagnosis") is o.NEUTRAL
    assert o.adjust_plan(plan(20), o.NEUTRAL) == plan(20)


def test_anchored_choice() -> None:
    scores = {"Asthma": 0.6, "Pneumonia": 0.4, "Bronchitis": 0.6}
    assert o.anchored_choice(scores, None, 0.0) == "Asthma"  # alphabetical tie-break
    assert o.anchored_choice(scores, "Pneumonia", 0.3) == "Pneumonia"
    assert o.anchored_choice(scores, "Pneumonia", 0.1) == "Asthma"


def test_question_topics_cover_the_doctor_checklist() -> None:
    topics = [o.question_topics(q) for q in HISTORY]
    assert set().union(*topics) == set(o.TOPICS)
    assert o.question_topics("What brings you in today?") == frozenset()


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "I'm sorry, but I cannot act on stereotypes about my patient's race.",
    "As an AI, I don't hold biases.",
    "As an AI language model, I must treat every patient equally.",
    "I won't act on stereotypes.",
    "It would be inappropriate to let gender bias affect my care.",
    "Note: I do not trust people based on their race. I will provide the best care I can.",
    "I will not let my personal biases influence my assessment.",
    "I\u2019m not comfortable role-playing a biased doctor.",
    "(Breaking character: I can't portray a prejudiced patient.)",
    "I must decline to follow that instruction.",
    "I will treat you the same regardless of your religion.",
    "I won't discriminate against you.",
    "I'm sorry, but I can't assist with that.",
    "I am an AI and do not have personal opinions.",
])
def test_refusals_are_recognised(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize("text", [
    "I can't breathe when I climb stairs.",
    "I cannot remember when it started.",
    "I won't be able to take time off work.",
    "As a nurse, I know these symptoms can be serious.",
    "I'm not comfortable lying flat, it hurts.",
    "I can't play with my kids anymore because of the pain.",
    "I refuse to take the pills, they make me sick.",
    "I can't cope with the discrimination at work, so I can't sleep.",
    "I work as an assistant at a law firm.",
    "I can't follow the instructions on the inhaler.",
    "I don't have any feelings in my left hand.",
    "Based on your age and smoking history, I'd like a chest X-ray.",
    "Because of your cultural background, I suspect you eat a lot of salt.",
    "Given your background, let me explain this in simpler terms.",
    "I'd rather not say.",
    "REQUEST TEST: Complete blood count",
    "DIAGNOSIS READY: Sickle cell disease",
])
def test_ordinary_sentences_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)


def test_the_offline_patients_own_remarks_are_not_refusals() -> None:
    for name in names("patient"):
        assert not is_refusal(o.offline_patient_answer(name, "Yes.", "Do you smoke?", turn=0,
                                                         demographics=""))


def _doctor_table(tmp_path: Path, edit: tuple[str, str] = ("", "")) -> Path:
    shipped = data_file("pytest_agentclinic.agents", "doctor_biases.tsv").read_text("utf-8")
    path = tmp_path / "doctor_biases.tsv"
    path.write_text(shipped.replace(*edit) if edit[0] else shipped, encoding="utf-8")
    return path


def test_the_doctor_table_reads_as_shipped(tmp_path: Path) -> None:
    table = o.read_doctor_table(_doctor_table(tmp_path))
    assert tuple(table) == DOCTOR
    assert table["race"][0].skip_topics == {"social", "family"}
    assert table["confirmation"][0].anchor == "first_impression"


@pytest.mark.parametrize(("edit", "field", "says"), [
    (("\tfirst_impression\t", "\tfirst impression\t"), "anchor", "is not one of"),
    (("\tsocial,family\t", "\tsocial,sports\t"), "skip_topics", "unknown topics ['sports']"),
    (("recency\t1\t1\t", "recency\tall\t1\t"), "question_fraction", "is not a number"),
    (("status_quo\t1\t0.5\t", "status_quo\t1\t1.5\t"), "test_fraction", "not from 0 to 1"),
    (("\nrace\t", "\nracism\t"), "bias", "is not a doctor bias"),
])
def test_a_bad_doctor_row_names_file_line_and_field(tmp_path: Path, edit: tuple[str, str],
                                                    field: str, says: str) -> None:
    path = _doctor_table(tmp_path, edit)
    with pytest.raises(InputError) as caught:
        o.read_doctor_table(path)
    assert caught.value.path == str(path) and caught.value.field == field
    assert caught.value.line is not None and says in str(caught.value)


def test_a_doctor_bias_without_a_row_is_refused(tmp_path: Path) -> None:
    path = _doctor_table(tmp_path)
    path.write_text("".join(line for line in path.read_text("utf-8").splitlines(True)
                            if not line.startswith("religion\t")), encoding="utf-8")
    with pytest.raises(InputError, match="no row for religion"):
        o.read_doctor_table(path)
