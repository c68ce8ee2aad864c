"""A SOAP note's assessment (stage 1, for :mod:`.extract`; red team round 8, docs/grading.md).

Clinicians and models trained on their notes write the problem-oriented note of Weed (1968):
Subjective, Objective, Assessment, Plan, each under its letter or word ("S:", "O:", "A:",
"P:"). The diagnosis is the Assessment's; the Subjective part holds the patient's account
(a worry, "S: worried about W", names no diagnosis the doctor makes), the Objective part
the findings, the Plan the next steps. An answer written as such a note is read from its
Assessment to its Plan, as "Final Diagnosis:" would be. Only a note with an Assessment and a
Subjective or Objective part is one: "A:" alone is a multiple-choice option's letter.

A note that closes its Subjective and Objective parts with a "Summary:", "Impression:",
"Conclusion:", "Bottom line:" or "TL;DR:" line, or a sentence opened by "In summary,", "In
conclusion," or "Overall,", instead of "A:" gives its assessment there (red team round 13): the
assessment opens with the summary statement that concludes the history and the findings,
and "Impression" is the assessment's name in the admission note (docs/grading.md, round
13). Only after a narrative part and where the note has no Assessment of its own: a
"Summary:" before the answer elsewhere retells the case (round 10).
"""

from __future__ import annotations

import re

__all__ = ["soap_assessment"]

# A part's heading, at a line's start or right after a label on the answer's first line
# ("Final Diagnosis: S: ..."), its letter or word, then a colon.
_PART = re.compile(r"(?:^|(?<=:))[ \t>#*_\-]*(?P<part>s|o|a|p|a/p|subjective|objective|"
                   r"assessment|plan)[*_]*[ \t]*:", re.I | re.M)
# A closing line at a line's start: a heading with its colon ("Summary:", "Impression:",
# "Conclusion:", "Bottom line:", "TL;DR:"), or the words that open a concluding sentence
# ("In summary,", "In conclusion,", "Overall,").
_CLOSING_LINE = re.compile(r"^[ \t>#*_\-]*(?:(?:summary|impression|conclusion|bottom\s+line|"
                           r"tl;\s?dr)[*_]*[ \t]*:|(?:in\s+summary|in\s+conclusion|"
                           r"overall|to\s+summari[sz]e)[ \t]*,)", re.I | re.M)
_NARRATIVE = {"s", "o", "subjective", "objective"}
_ASSESSMENT = {"a", "a/p", "assessment"}
_CLOSING = "closing"


def soap_assessment(answer: str) -> str:
    """``answer`` as its Assessment, labelled as a final diagnosis, when it is a SOAP note;
    else ``answer`` itself."""
    parts = [(m.group("part").lower(), m) for m in _PART.finditer(answer)]
    names = {p for p, _ in parts}
    if not _NARRATIVE & names:
        return answer
    after, heads = -1, _ASSESSMENT
    if not _ASSESSMENT & names:
        # no Assessment: a closing line after the note's first narrative part stands for it
        parts = sorted([*parts, *((_CLOSING, m) for m in _CLOSING_LINE.finditer(answer))],
                       key=lambda part: part[1].start())
        after = next(i for i, (p, _) in enumerate(parts) if p in _NARRATIVE)
        heads = {_CLOSING}
    at = next((i for i, (p, _) in enumerate(parts) if p in heads and i > after), None)
    if at is None:
        return answer
    start = parts[at][1].end()
    end = next((m.start() for p, m in parts[at + 1:] if p in {"p", "plan"}), len(answer))
    assessment = answer[start:end].strip()
    return "Final Diagnosis: " + assessment if assessment else answer
