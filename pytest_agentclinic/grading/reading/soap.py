"""A SOAP note's assessment (stage 1, for :mod:`.extract`; red team round 8, docs/grading.md).

Clinicians and models trained on their notes write the problem-oriented note of Weed (1968):
Subjective, Objective, Assessment, Plan, each under its letter or word ("S:", "O:", "A:",
"P:"). The diagnosis is the Assessment's; the Subjective part holds the patient's account
(a worry, "S: worried about W", names no diagnosis the doctor makes), the Objective part
the findings, the Plan the next steps. An answer written as such a note is read from its
Assessment to its Plan, as "Final Diagnosis:" would be. Only a note with an Assessment and a
Subjective or Objective part is one: "A:" alone is a multiple-choice option's letter.
"""

from __future__ import annotations

import re

__all__ = ["soap_assessment"]

# A part's heading, at a line's start or right after a label on the answer's first line
# ("Final Diagnosis: S: ..."), its letter or word, then a colon.
_PART = re.compile(r"(?:^|(?<=:))[ \t>#*_\-]*(?P<part>s|o|a|p|a/p|subjective|objective|"
                   r"assessment|plan)[*_]*[ \t]*:", re.I | re.M)
_NARRATIVE = {"s", "o", "subjective", "objective"}
_ASSESSMENT = {"a", "a/p", "assessment"}


def soap_assessment(answer: str) -> str:
    """``answer`` as its Assessment, labelled as a final diagnosis, when it is a SOAP note;
    else ``answer`` itself."""
    parts = [(m.group("part").lower(), m) for m in _PART.finditer(answer)]
    names = [p for p, _ in parts]
    if not _NARRATIVE & set(names) or not _ASSESSMENT & set(names):
        return answer
    at = next(i for i, (p, _) in enumerate(parts) if p in _ASSESSMENT)
    start = parts[at][1].end()
    end = next((m.start() for p, m in parts[at + 1:] if p in {"p", "plan"}), len(answer))
    assessment = answer[start:end].strip()
    return "Final Diagnosis: " + assessment if assessment else answer
