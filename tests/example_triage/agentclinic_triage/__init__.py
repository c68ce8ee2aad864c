"""A triage protocol: the doctor asks the nurse for vital signs, then assigns an urgency.

Cases come from ``.triage`` files (one case a line: ``id; urgency; complaint; vitals;
working diagnosis``) or any case file whose cases carry ``metadata: {urgency: ...}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_agentclinic import api

LEVELS = ("emergent", "urgent", "routine")
_SAID = re.compile(r"URGENCY:\s*(\w+)", re.I)
_RED_FLAGS = ("chest pain", "unresponsive", "spo2 8", "bp 8", "stridor")


def read_triage(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """The ``.triage`` case format: one ``;``-separated case a line, ``#`` for comments."""
    for line, row in enumerate(text.splitlines(), 1):
        if not row.strip() or row.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in row.split(";")]
        if len(parts) != 5:
            yield line, api.CaseError(path, line, "<row>", f"expected 5 fields, got {len(parts)}")
            continue
        case_id, urgency, complaint, vitals, diagnosis = parts
        yield line, {"id": case_id, "objective": "Assign an urgency level.",
                     "patient": {"history": complaint}, "physical_exam": {"vitals": vitals},
                     "diagnosis": diagnosis, "metadata": {"urgency": urgency}}


class Nurse:
    """Reports the case's vital signs when asked."""

    model = "offline"
    prompt_version = "nurse-1"

    async def respond(self, view: api.TurnView) -> api.Reply:
        return api.Reply(str(view.case.physical_exam.get("vitals", "no vitals taken")))


class RuleDoctor:
    """The offline doctor: red flags are emergent, a fever urgent, the rest routine."""

    model = "offline"
    prompt_version = "rules-1"

    async def respond(self, view: api.TurnView) -> api.Reply:
        if not view.history:
            return api.Reply("Nurse, vital signs please.")
        said = f"{view.case.patient.history} {view.incoming}".lower()
        level = ("emergent" if any(flag in said for flag in _RED_FLAGS)
                 else "urgent" if "fever" in said else "routine")
        return api.Reply(f"URGENCY: {level}")


class Triage(api.Protocol):
    """Triage: two turns, graded on the urgency level."""

    name = "triage"
    roles = (api.RoleSpec("doctor", api.Agent, None, "assigns the urgency"),
             api.RoleSpec("nurse", api.Agent, "nurse", "reports vital signs"))
    options = (api.Option("nurse", "nurse model: 'offline' or a model string", "offline",
                          metavar="MODEL"),)
    wording = api.Wording(wrong="mistriage", missing="no urgency")

    def expand(self, cases: Sequence[api.Case], run: api.RunOptions) -> Iterator[api.ItemSpec]:
        for case in cases:
            for doctor in run.doctors:
                yield api.ItemSpec(case, f"{case.specialty_slug}-{doctor}",
                                   self.models_of(run, doctor, api.OFFLINE), turn_budget=2)

    def expected(self, case: api.Case) -> str:
        return str(case.metadata.get("urgency", "?"))

    async def play(self, item: api.ItemSpec, ctx: api.PlayContext) -> api.Transcript:
        t = api.Transcript(**self.header(item).header())
        doctor = self.agent(ctx, "doctor", item.doctor, item.case, "none", RuleDoctor)
        nurse = self.agent(ctx, "nurse", item.models["nurse"], item.case, "none", Nurse)
        with api.settled(t):
            said = ""
            for turn, (agent, role, kind) in enumerate(
                    [(doctor, "doctor", "vitals_request"), (nurse, "nurse", "vitals"),
                     (doctor, "doctor", "urgency")], 1):
                view = api.TurnView(item.case, tuple(t.utterances), said, 3 - turn, 2,
                                    item.sample)
                said = (await agent.respond(view)).text
                t.utterances.append(api.Utterance(turn=turn, role=role, kind=kind, text=said,
                                                  model=agent.model))
            self._grade(t, said, self.expected(item.case))
        return t

    @staticmethod
    def _grade(t: api.Transcript, said: str, expected: str) -> None:
        found = _SAID.search(said)
        if found is None or found.group(1).lower() not in LEVELS:
            t.outcome = "no_diagnosis"
            return
        t.diagnosis = found.group(1).lower()
        t.verdict = api.Verdict(correct=t.diagnosis == expected, decided_by="triage-rules",
                                reason=f"{t.diagnosis} for {expected}")
        t.outcome = "correct" if t.verdict.correct else "incorrect"

    def tables(self, records: Sequence[api.ResultRecord], resamples: int) -> list[api.Table]:
        """Under- and over-triage by the expected urgency."""
        rows = []
        for level in LEVELS:
            mine = [r for r in records if r.expected == level and r.outcome != "error"]
            given = [LEVELS.index(r.given) for r in mine if r.given in LEVELS]
            under = sum(g > LEVELS.index(level) for g in given)
            over = sum(g < LEVELS.index(level) for g in given)
            rows.append([level, str(len(mine)), str(under), str(over)])
        return [api.Table("triage: under- and over-triage by expected urgency",
                          ["expected", "n", "under-triaged", "over-triaged"], rows)]
