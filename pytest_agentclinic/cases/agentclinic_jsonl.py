"""AgentClinic's upstream JSONL records (the MedQA OSCE and NEJM image cases) as case data.

Upstream files vary in shape, so these builders are tolerant of extra keys, missing optional
keys and strings where mappings are usual, but strict about what the protocol needs
(objective, diagnosis, patient): a field that is missing raises :class:`FieldError` naming it,
and the loader turns it into a ``CaseError`` naming file, line and field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..core.case import Findings, slugify
from ..core.errors import AgentClinicError


class FieldError(AgentClinicError, ValueError):
    """A record's field the case cannot be built without, named by its path."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


def as_text(value: Any) -> str:
    """Flatten a value of any upstream shape into one readable string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {as_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(as_text(v) for v in value)
    return str(value)


def _findings(value: Any) -> Findings:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return {"Findings": as_text(value)}


def _required_text(record: dict[str, Any], key: str, where: str,
                   scalar: bool = False) -> str:
    if scalar and isinstance(record.get(key), (dict, list)):
        # A mapping would flatten to text such as "a:" and be judged as a diagnosis.
        kind = "mapping" if isinstance(record[key], dict) else "list"
        raise FieldError(f"{where}{key}", f"expected text, got a {kind}")
    text = as_text(record.get(key))
    if not text:
        raise FieldError(f"{where}{key}", "missing or empty")
    return text


# ---------------------------------------------------------------- format readers


def medqa_case(obj: dict[str, Any], index: int, dataset: str) -> dict[str, Any]:
    """The case data of AgentClinic's MedQA OSCE record ``obj``, the ``index``-th of its file."""
    osce = obj.get("OSCE_Examination")
    if not isinstance(osce, dict):
        raise FieldError("OSCE_Examination", "missing or not an object")
    actor = osce.get("Patient_Actor")
    if isinstance(actor, str):
        actor = {"History": actor}
    if not isinstance(actor, dict):
        raise FieldError("OSCE_Examination.Patient_Actor", "missing or not an object")
    symptoms = actor.get("Symptoms")
    if not isinstance(symptoms, dict):
        symptoms = {"Primary_Symptom": as_text(symptoms)}
    secondary = symptoms.get("Secondary_Symptoms") or []
    known = {
        "Demographics",
        "History",
        "Symptoms",
        "Past_Medical_History",
        "Social_History",
        "Review_of_Systems",
        "Family_History",
    }
    meds = [k for k in actor if "medication" in k.lower() or "drug" in k.lower()]
    other = {k: as_text(v) for k, v in actor.items() if k not in known and k not in meds}
    return {
        "id": f"{dataset}-{index:04d}",
        "dataset": dataset,
        "objective": _required_text(osce, "Objective_for_Doctor", "OSCE_Examination."),
        "patient": {
            "demographics": as_text(actor.get("Demographics")),
            "history": as_text(actor.get("History")),
            "symptoms": {
                "primary": as_text(symptoms.get("Primary_Symptom")),
                "secondary": [as_text(s) for s in secondary]
                if isinstance(secondary, list)
                else [as_text(secondary)],
            },
            "past_medical_history": as_text(actor.get("Past_Medical_History")),
            "medications": "; ".join(as_text(actor[k]) for k in meds),
            "social_history": as_text(actor.get("Social_History")),
            "family_history": as_text(actor.get("Family_History")),
            "review_of_systems": as_text(actor.get("Review_of_Systems")),
            "other": other,
        },
        "physical_exam": _findings(osce.get("Physical_Examination_Findings")),
        "tests": _findings(osce.get("Test_Results")),
        "diagnosis": _required_text(osce, "Correct_Diagnosis", "OSCE_Examination.",
                                    scalar=True),
    }


_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)")


def nejm_case(obj: dict[str, Any], index: int, dataset: str) -> dict[str, Any]:
    """The case data of AgentClinic's NEJM image record ``obj``, the ``index``-th of its file."""
    answers = obj.get("answers")
    if not isinstance(answers, list) or not answers:
        raise FieldError("answers", "missing or not a list")
    correct = [a.get("text", "") for a in answers if isinstance(a, dict) and a.get("correct")]
    if len(correct) != 1 or not correct[0]:
        raise FieldError("answers", f"needs exactly one correct answer, found {len(correct)}")
    question = _required_text(obj, "question", "")
    first = _FIRST_SENTENCE.match(question)
    objective = f"Evaluate and diagnose this patient. {first.group(1) if first else ''}".strip()
    # ``type`` names the image modality (photo, CT, X-ray), not a specialty.
    modality = as_text(obj.get("type"))
    images = [{"url": obj["image_url"], "caption": modality}] if obj.get("image_url") else []
    return {
        "id": f"{dataset}-{index:04d}",
        "dataset": dataset,
        "objective": objective,
        "patient": {"history": _required_text(obj, "patient_info", "")},
        "tests": {"Findings": _required_text(obj, "physical_exams", "")},
        "diagnosis": correct[0],
        "choices": [as_text(a.get("text")) for a in answers if isinstance(a, dict)],
        "images": images,
        "question": question,
    }


def dataset_name(path: Path) -> str:
    """``medqa`` / ``nejm-extended`` / ``nejm`` for the upstream files, else the file stem."""
    stem = slugify(path.stem)
    return next((k for k in ("medqa", "nejm-extended", "nejm") if k in stem), stem or "cases")
