"""Agents backed by a model: each turns the encounter into chat messages for its role."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.case import Case, PatientActor
from ..core.roles import Reply, TurnView
from . import prompts
from .images import with_images
from .offline_measurement import render

if TYPE_CHECKING:  # a run that only collects never builds a caller
    from ..llm.caller import ModelCaller

OPENING = "The patient has just come in. Begin the consultation."
LAST_WARNING = "\nThis is your last interaction: reply now with DIAGNOSIS READY: <diagnosis>."

Message = dict[str, Any]


def patient_sheet(actor: PatientActor) -> str:
    """The patient's information as the patient agent is told it."""
    rows = [("Demographics", actor.demographics), ("History", actor.history),
            ("Main symptom", actor.symptoms.primary),
            ("Other symptoms", "; ".join(actor.symptoms.secondary)),
            ("Past medical history", actor.past_medical_history),
            ("Medications", actor.medications), ("Social history", actor.social_history),
            ("Family history", actor.family_history),
            ("Review of systems", actor.review_of_systems), *actor.other.items()]
    return "\n".join(f"{label}: {text}" for label, text in rows if text)


def record_sheet(case: Case) -> str:
    """The examination findings and test results as the measurement agent is told them."""
    return "\n".join([render("Physical Examination", case.physical_exam),
                      render("Test Results", case.tests)])


class _ModelAgent:
    role = ""
    templates: tuple[str, ...] = ()

    def __init__(self, model: str, caller: ModelCaller, *, bias_text: str = "",
                 bias_version: str = "") -> None:
        self.model = model
        self.caller = caller
        #: Text of an injected bias, appended to the system prompt.
        self.bias_text = bias_text
        versions = [prompts.load(t).version for t in self.templates]
        self.prompt_version = "+".join(versions + ([bias_version] if bias_version else []))

    def _system(self, text: str) -> str:
        return f"{text}\n\n{self.bias_text}" if self.bias_text else text

    async def _call(self, view: TurnView, messages: list[Message]) -> Reply:
        return await self.caller.complete(role=self.role, model=self.model, messages=messages,
                                          case_id=view.case.id, sample=view.sample,
                                          prompt_version=self.prompt_version)


class LLMDoctor(_ModelAgent):
    """The doctor under test: sees the objective, the dialogue and the interactions left."""

    role = "doctor"
    templates = ("doctor", "doctor_turn", "doctor_images")

    def __init__(self, model: str, caller: ModelCaller, *, image_mode: str | None = None,
                 bias_text: str = "", bias_version: str = "") -> None:
        super().__init__(model, caller, bias_text=bias_text, bias_version=bias_version)
        self.image_mode = image_mode

    def messages(self, view: TurnView) -> list[Message]:
        """The chat so far from the doctor's side, ending with the incoming message.

        Images go with the opening message (``initial`` mode) or with the answer to
        ``REQUEST IMAGES`` (``request`` mode), as image content parts.
        """
        case = view.case
        system = prompts.load("doctor").render(objective=case.objective,
                                               budget=view.turn_budget)
        if case.images and self.image_mode == "request":
            system += "\n\n" + prompts.load("doctor_images").text
        turn = prompts.load("doctor_turn")
        spoken = 0

        def user(text: str, attach: bool = False) -> Message:
            left = view.turn_budget - spoken
            warn = LAST_WARNING if left == 1 else ""
            body = turn.render(incoming=text, turns_left=left, last_warning=warn)
            return {"role": "user", "content": with_images(body, case.images if attach else [])}

        opening = user(OPENING, attach=self.image_mode == "initial")
        out: list[Message] = [{"role": "system", "content": self._system(system)}, opening]
        for u in view.history:
            if u.role == "doctor":
                out.append({"role": "assistant", "content": u.text})
                spoken += 1
            elif u.role in ("patient", "measurement") and u.kind != "perception":
                out.append(user(u.text, attach=bool(u.images)))
        return out

    async def respond(self, view: TurnView) -> Reply:
        """The doctor's next utterance."""
        return await self._call(view, self.messages(view))


class LLMPatient(_ModelAgent):
    """Plays the patient from the case's patient fields; sees questions, not test traffic."""

    role = "patient"
    templates = ("patient", "perception")

    async def respond(self, view: TurnView) -> Reply:
        """The patient's answer to the doctor's latest question."""
        system = prompts.load("patient").render(patient_info=patient_sheet(view.case.patient))
        out: list[Message] = [{"role": "system", "content": self._system(system)}]
        for u in view.history:
            if (u.role == "doctor" and u.kind == "question") or u.kind == "perception_request":
                out.append({"role": "user", "content": u.text})
            elif u.role == "patient":
                out.append({"role": "assistant", "content": u.text})
        return await self._call(view, out)


class LLMMeasurement(_ModelAgent):
    """Reports the requested test from the case's findings."""

    role = "measurement"
    templates = ("measurement",)

    async def respond(self, view: TurnView) -> Reply:
        """The results for the doctor's request in ``view.incoming``."""
        system = prompts.load("measurement").render(record=record_sheet(view.case))
        return await self._call(view, [{"role": "system", "content": system},
                                       {"role": "user", "content": view.incoming}])
