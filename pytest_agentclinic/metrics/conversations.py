"""Reader of CRAFT-MD's recorded doctor-patient conversations (JSONL, optionally gzipped).

Each line is ``{"case_id", "trial", "messages": [{"role", "content"}, ...]}`` from the
doctor's side: ``system`` prompt, ``assistant`` = the clinical LLM, ``user`` = the
patient-AI. The reader turns a line into utterances the measures read: the doctor's n-th
message is turn n (a *question*, or the *diagnosis* when it states "Final Diagnosis" or asks
nothing), and the patient's reply carries the same turn.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InputError

_FINAL = re.compile(r"final\s+diagnosis", re.I)


@dataclass(frozen=True)
class Line:
    """One utterance of a recorded conversation."""

    turn: int
    role: str
    kind: str
    text: str
    detail: str = ""


@dataclass(frozen=True)
class Conversation:
    """A recorded conversation, ready for the measures."""

    case_id: str
    trial: int
    lines: list[Line] = field(default_factory=list)

    @property
    def questions(self) -> list[Line]:
        """The doctor's questions, in order."""
        return [u for u in self.lines if u.kind == "question"]

    def answer_to(self, question: Line) -> Line | None:
        """The patient's reply to ``question``."""
        return next((u for u in self.lines if u.role == "patient" and u.turn == question.turn),
                    None)


def to_lines(messages: list[dict[str, str]]) -> list[Line]:
    """The utterances of one conversation's messages (see the module docstring)."""
    out: list[Line] = []
    turn = 0
    for m in messages:
        text = str(m.get("content", ""))
        if m.get("role") == "assistant":
            turn += 1
            final = bool(_FINAL.search(text)) or "?" not in text
            out.append(Line(turn, "doctor", "diagnosis" if final else "question", text))
        elif m.get("role") == "user":
            out.append(Line(turn, "patient", "answer", text))
    return out


def read_conversations(path: Path | str) -> Iterator[Conversation]:
    """The conversations of ``path``; a bad line is an :class:`InputError` naming file and
    line."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
                messages = obj["messages"]
                yield Conversation(str(obj["case_id"]), int(obj.get("trial", 0)),
                                   to_lines(messages))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{p}:{lineno}: field 'messages' or 'case_id': "
                                 f"{type(exc).__name__}: {exc}") from None
