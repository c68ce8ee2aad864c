"""A person at the terminal playing the doctor or the patient of an encounter.

:class:`HumanAgent` implements the :class:`~pytest_agentclinic.core.roles.Agent` protocol,
so the engine runs a person exactly as it runs a model: it shows what the agent is shown (the
objective and the interactions left for a doctor; the case sheet and the doctor's questions
for a patient) and returns the line the person types.

Leaving: end of input (Ctrl-D) or two empty lines in a row raise :class:`EncounterAbandoned`,
which carries the conversation so far, so the caller can still save and grade it (a doctor
who leaves has given no diagnosis).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, NoReturn

from ..core.errors import AgentClinicError
from ..core.roles import Reply, TurnView
from ..core.threads import start_thread
from ..core.transcript import Utterance
from ..grading.reading.markers import after_ready
from .llm_agents import patient_sheet

VERSION = "human-1"
HumanRole = Literal["doctor", "patient"]

DOCTOR_HELP = (
    "You are the doctor. Type one question for the patient per line.\n"
    "  REQUEST TEST: <name>          asks for an examination or test result (one interaction)\n"
    "  DIAGNOSIS READY: <diagnosis>  gives your diagnosis and ends the encounter\n"
    "  Ctrl-D, or two empty lines    gives up (no diagnosis)"
)
IMAGES_HELP = "  REQUEST IMAGES                shows the case's images (one interaction)"
PATIENT_HELP = (
    "You are the patient. Answer each of the doctor's questions on one line, as this patient\n"
    "would, using the case sheet below; you do not know your diagnosis, so never name one.\n"
    "  Ctrl-D, or two empty lines    leaves the encounter"
)

_TEST_WORDS = re.compile(r"\s*request\s+tests?\b", re.I)
#: What the engine takes for a test request (its own pattern, with a name required).
_TEST_REQUEST = re.compile(r"request\s+tests?\s*[:\-]\s*[^\s.*]", re.I)

#: Reads one line after showing a prompt; returns None at end of input.
LineReader = Callable[[str], Awaitable[str | None]]


class EncounterAbandoned(AgentClinicError):
    """The person left (end of input or repeated empty lines) before the encounter ended."""

    def __init__(self, role: HumanRole, turn: int, history: Sequence[Utterance]) -> None:
        super().__init__(f"the {role} (human) left the encounter at interaction {turn}")
        self.role = role
        #: The doctor interaction during which the person left (1-based).
        self.turn = turn
        #: Everything said before the person left, as the engine recorded it.
        self.history = tuple(history)


async def read_line(prompt: str) -> str | None:
    """``input(prompt)`` without blocking the event loop; None at end of input.

    A daemon thread rather than :func:`asyncio.to_thread`: on Ctrl-C the loop ends while the
    thread is still blocked in ``input``, and the default executor's threads are joined at
    shutdown, so the program would hang until the person pressed Enter.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def deliver(value: str | None, error: BaseException | None) -> None:
        if future.done():  # cancelled meanwhile: nobody is waiting for this line
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        try:
            line: str | None = input(prompt)
        except EOFError:
            line = None
        except BaseException as exc:  # e.g. a closed terminal: hand it to the awaiting task
            loop.call_soon_threadsafe(deliver, None, exc)
            return
        loop.call_soon_threadsafe(deliver, line, None)

    start_thread(work, name="agentclinic-input")
    return await future


def _write(text: str) -> None:
    print(text, flush=True)


def _indent(label: str, text: str) -> str:
    lines = text.strip().splitlines() or [""]
    pad = " " * (len(label) + 2)
    return "\n".join([f"{label}: {lines[0]}", *(pad + line for line in lines[1:])])


def _rating(view: TurnView) -> bool:
    """Whether this turn asks the patient to rate the doctor (after the diagnosis)."""
    return bool(view.history) and view.history[-1].kind == "perception_request"


class HumanAgent:
    """The person at the terminal, as a doctor or patient
    :class:`~pytest_agentclinic.core.roles.Agent`."""

    model = "human"
    prompt_version = VERSION

    def __init__(self, role: HumanRole, *,
                 read: LineReader | None = None,
                 write: Callable[[str], None] = _write) -> None:
        if role not in ("doctor", "patient"):
            raise ValueError(f"a person can play the doctor or the patient, not {role!r}")
        self.role: HumanRole = role
        self._read: LineReader = read or read_line
        self._write = write
        self._started = False
        #: How much of the history the person has been shown already.
        self._shown = 0

    async def respond(self, view: TurnView) -> Reply:
        """Show what this role is told now, then read the person's reply."""
        if not self._started:
            self._started = True
            self._introduce(view)
        if self.role == "doctor":
            self._show_doctor_turn(view)
        else:
            self._show_patient_turn(view)
        self._shown = len(view.history)
        return Reply(await self._ask(view))

    # ------------------------------------------------------------------ display

    def _introduce(self, view: TurnView) -> None:
        if self.role == "doctor":
            images = IMAGES_HELP + "\n" if view.case.images else ""
            self._write(f"{DOCTOR_HELP}\n{images}\nObjective: {view.case.objective}")
        else:
            sheet = patient_sheet(view.case.patient) or "(the case gives no patient details)"
            self._write(f"{PATIENT_HELP}\n\n--- your case sheet ---\n{sheet}\n"
                        "-----------------------")

    def _show_doctor_turn(self, view: TurnView) -> None:
        if view.history:
            last = view.history[-1]
            self._write(_indent(last.role, view.incoming))
        left = view.turns_left
        if left == 1:
            # The engine ends the encounter after this interaction whatever it is; say so, or
            # a last question would silently cost the diagnosis.
            self._write("[last interaction: give your diagnosis now with "
                        "DIAGNOSIS READY: <diagnosis>]")
        else:
            self._write(f"[{left} interactions left]")

    def _show_patient_turn(self, view: TurnView) -> None:
        # Tests the doctor ordered since the person last spoke go to the measurement agent;
        # naming them keeps the person aware of what is happening in the room.
        for u in view.history[self._shown:]:
            if u.kind == "test_request":
                self._write(f"(the doctor orders a test: {u.detail})")
            elif u.kind == "image_request":
                self._write("(the doctor looks at your images)")
        if _rating(view):
            self._write(f"\n{view.incoming}\n(one line, e.g. Confidence: 7 Compliance: 8 "
                        "Consultation: 6 because ...; an empty line skips the rating)")
        else:
            self._write(_indent("doctor", view.incoming))

    # ------------------------------------------------------------------ input

    async def _ask(self, view: TurnView) -> str:
        prompt = f"{self.role}> "
        empty = 0
        while True:
            line = await self._read(prompt)
            if _rating(view) and not (line or "").strip():
                # The verdict is in already: declining to rate must not lose the encounter.
                return ""
            if line is None:
                self._write("")  # end the prompt's line before anything else is printed
                self._leave(view)
            text = line.strip()
            if not text:
                empty += 1
                if empty >= 2:
                    self._leave(view)
                self._write("(empty line: type your reply, or press Enter again to "
                            + ("give up)" if self.role == "doctor" else "leave)"))
                continue
            problem = self._problem(text)
            if problem is None:
                return text
            empty = 0
            self._write(problem)

    def _problem(self, text: str) -> str | None:
        """Why a doctor's line cannot be sent as it is (None when it can)."""
        if self.role != "doctor":
            return None
        lowered = text.lower()
        answer = after_ready(text)
        if "diagnosis ready" in lowered and not (answer or "").strip(" .*:\n"):
            return "(name the diagnosis: DIAGNOSIS READY: <diagnosis>)"
        if _TEST_WORDS.match(text) and not _TEST_REQUEST.search(text):
            # The engine would pass this to the patient as a question, not order a test.
            return "(name the test after a colon: REQUEST TEST: <name>)"
        return None

    def _leave(self, view: TurnView) -> NoReturn:
        turn = view.turn_budget - view.turns_left + 1
        if self.role == "patient":
            turn -= 1  # the patient answers the interaction the doctor just spent
        raise EncounterAbandoned(self.role, turn, view.history)
