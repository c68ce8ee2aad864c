"""The labels that declare an answer ("Final Diagnosis:", "Diagnosis:", "Dx:", "Answer:",
"Assessment:", "Most likely:") and what each declares; :mod:`.statement` reads the answer
after the strongest of them.
"""

from __future__ import annotations

import re

from .retelling import retells

__all__ = ["DIFFERENTIAL_LABEL", "LABELS", "PROSE_LABEL", "declared", "first_line",
           "heads_differential", "starts_labelled"]

# --- labels -----------------------------------------------------------------------------------

# Markdown may wrap a label ("**Final Diagnosis:**", "## Diagnosis", "- **Dx**: X").
_EMPHASIS = r"[*_`]*"
_LINE_START = r"^[ \t>#*_\-\u2022]*"
# After the label: a colon, an equals sign, a dash, or the end of its line (a heading, perhaps
# underlined), then blank lines before the answer.
# (An arrow, "Diagnosis \u2192 T", "Answer -> T", points to the value as a colon does.)
_SEPARATOR = (rf"{_EMPHASIS}[ \t]*(?:[:=\u2192]|[-=]>|[ \t][-\u2010-\u2015]+[ \t]|[ \t]*\n"
              rf"(?:[ \t]*[-=]{{3,}}[ \t]*\n)?)(?:{_EMPHASIS}[ \t]*\n)*\s*{_EMPHASIS}[ \t]*(?=\S)")
_QUALIFIER = (r"(?:final|working|provisional|clinical|primary|principal|leading|top|main|"
              r"presumptive|presumed|tentative|probable|most\s+probable|most\s+likely|likely|"
              r"initial|preliminary)")
# A conclusion that opens its sentence or line: a connective of consequence, then what the
# answer is.
_CONCLUSION = (r"(?:^|(?<=[.!?])[ \t]+)[ \t>*_]*(?:therefore|thus|hence|so|in\s+conclusion|"
               r"in\s+summary|to\s+summari[sz]e|overall),?[ \t]+(?:the|my)[ \t]+(?:(?:final|"
               r"most\s+likely|likely|probable)[ \t]+)?(?:diagnosis|answer)[ \t]+(?:is|would"
               r"\s+be)[ \t]*:?[ \t]*(?=\S)")
# Strongest first: "Final Diagnosis:" wherever it stands; the others only where a line starts,
# since in prose "answer" and "assessment" are ordinary words, and a label alone on its line
# heads the line below ("## Final Diagnosis" over "Psoriasis").
LABELS = tuple(re.compile(pattern, re.I | re.M) for pattern in (
    rf"\bfinal\s+(?:diagnosis|answer){_SEPARATOR}",
    # "Diagnosis (ICD-10): T": a short note in brackets on the label, how the name is coded
    # ("Working diagnosis confirmed: T", red team round 12: the label's status, as
    # "(confirmed)" after the name is)
    rf"{_LINE_START}(?:(?:my|the|our)\s+)?(?:{_QUALIFIER}\s+)*(?:diagnosis|dx)"
    rf"(?:[ \t]*\([^()\n]{{1,25}}\)|[ \t]+(?:confirmed|established))?{_SEPARATOR}"
    # "Primary: T" over "Secondary: none": the main diagnosis by its role, a colon after it
    rf"|{_LINE_START}(?:primary|principal|main){_EMPHASIS}[ \t]*:[ \t]*{_EMPHASIS}[ \t]*(?=\S)"
    # "Most likely: T" on a line of its own, after a ranked list (red team round 8): the
    # diagnosis the answer commits to, as "Most likely diagnosis: T"
    rf"|{_LINE_START}most\s+(?:likely|probable){_EMPHASIS}[ \t]*:[ \t]*{_EMPHASIS}[ \t]*(?=\S)",
    # an instruction-tuned model's template heading ("### Response:", red team round 8) heads
    # its answer as "Answer:" does, and so do "TL;DR:" and "Bottom line:"
    # (and "Best guess:", "Ans:", red team round 13: one guess is the answer it gives)
    rf"{_LINE_START}(?:(?:(?:my|the|our)\s+)?(?:(?:final\s+)?answer|response|output|ans|"
    rf"(?:best|educated|final)\s+guess)|tl;?\s*dr|"
    rf"bottom\s+line){_SEPARATOR}"
    # the conclusion a chain of reasoning ends in ("1. ... 2. ... Therefore, the diagnosis is
    # T.", "Let's think step by step. ... So the answer is T."): the answer it gives
    rf"|{_CONCLUSION}",
    # "Assessment and Plan:", "A&P:" (a clinical note's heading over its problem list)
    # ("Final impression:", red team round 12: the qualifiers a diagnosis label takes)
    rf"{_LINE_START}(?:(?:{_QUALIFIER}\s+)*(?:impression|assessment|conclusion)(?:\s*(?:and|&|/)\s*"
    rf"plan)?|a\s*[&/]\s*p){_SEPARATOR}",
))
PROSE_LABEL = 3  # the index of the labels that may head prose rather than a name


def first_line(text: str) -> str:
    """The first line of ``text`` that is not blank ("" when there is none)."""
    return next((line for line in text.splitlines() if line.strip()), "")


#: The labels read in one answer, each label's text and each look at what follows a final
#: one counted: real answers need at most five (CRAFT-MD's recorded answers, 875,978
#: texts), the adversarial library's shapes seven. A label whose text opens with another is
#: read through that one, so a hostile reply of thousands ("Dx: Dx: Dx: ...") was read again
#: through every later label: exponential, a recursion past Python's limit at 4 KB.
MAX_LABELS = 16


def declared(text: str) -> list[str]:
    """The text after every label that declares a diagnosis or an answer ("Final Diagnosis:",
    "Diagnosis:", "Dx:", "Answer:"; not "Assessment:", which holds prose), each text once. A
    label whose text opens with another label ("Final Diagnosis: Answer: X") declares what
    that one does; a final diagnosis supersedes a working one ("Most likely diagnosis: X ...
    Final diagnosis: Y" declares Y). At most :data:`MAX_LABELS` labels are read."""
    return _declared(text, {}, [MAX_LABELS])


def _declared(text: str, read: dict[int, list[str]], left: list[int]) -> list[str]:
    # Every text read is a suffix of the answer, so its length names it: each is read once.
    if len(text) in read:
        return read[len(text)]
    final = False  # a final diagnosis that heads no differential
    for m in LABELS[0].finditer(text):
        if not _spend(left):
            break
        if not heads_differential(text[m.end():]):
            final = True
            break
    out: list[str] = []
    for pattern in LABELS[:3]:
        for found in pattern.finditer(text):
            if not _spend(left):
                break
            if final and _TENTATIVE.search(found.group()):
                continue  # a final diagnosis supersedes a working one
            part = text[found.end():].lstrip()
            if heads_differential(part):
                # "Differential: X, Y. Final answer: Z" declares Z; "Final Diagnosis:" over
                # "Differential diagnosis: ... Most likely diagnosis: Z" declares Z
                continue
            out.extend(_declared(part, read, left) if starts_labelled(part) else [part])
    read[len(text)] = out = list(dict.fromkeys(out))
    return out


def _spend(left: list[int]) -> bool:
    """Take one from the labels left to read: False when none was left."""
    left[0] -= 1
    return left[0] >= 0


def heads_differential(part: str) -> bool:
    """Whether a label's text opens with a differential, or a section of its own (a case
    summary, the reasoning), that a later label answers after ("Differential: X, Y. Final
    answer: Z"; "Differential diagnosis: 1. X 2. Y ... Most likely diagnosis: Z"; "Summary:
    ... Diagnosis: Z"): the label heads the section, and declares nothing of its own."""
    part = part.lstrip()
    if (DIFFERENTIAL_LABEL.match(part) is not None or _SECTION.match(part) is not None
            or retells(_FIRST_SENTENCE.split(part, maxsplit=1)[0])):
        # (or the case retold in prose before the conclusion: "Final Diagnosis: The patient
        # has had fever ... So the answer is T", as "DIAGNOSIS READY:" over it reads;
        # red team round 11)
        return any(p.search(part) for p in LABELS[:3])
    # A ranked list is a differential too (ranks offer alternatives: the paper's "more than
    # one possible diagnosis"): "Final Diagnosis: 1. X (85%) 2. Y (10%) ... Most likely: X"
    # declares X, as "DIAGNOSIS READY:" over the same list does (red team round 9)
    ranked = _RANKED_LIST.match(part)
    return (ranked is not None and len(_RANK.findall(ranked.group())) >= 2
            and any(p.search(part, ranked.end()) for p in LABELS[:3]))


# A numbered list from its first item on, one item a line or "1. X 2. Y" on one line, blank
# lines between items; and an item's number.
_RANKED_LIST = re.compile(r"1[.)][ \t]+\S[^\n]*(?:\n[ \t]*(?:\d{1,2}[.)][ \t]+\S[^\n]*)?)*")
_RANK = re.compile(r"(?:^|(?<=\s))\d{1,2}[.)][ \t]+(?=\S)", re.M)


# A section of its own opening the label's text ("Final Diagnosis: Summary: a 45-year-old
# with fever ... Diagnosis: T"): a case summary or the reasoning, then the label that answers.
# The first label heads the whole answer, as "DIAGNOSIS READY:" over the same text does
# (issue 31: one reader for both protocols; red team round 10).
_SECTION = re.compile(r"[*_#\s]*(?:(?:case|clinical|patient|brief)\s+)?(?:summary|synopsis|"
                      r"presentation|history|findings|reasoning|rationale|analysis|explanation|"
                      r"discussion|thinking|thought\s+process|background|overview|hpi|"
                      r"key\s+(?:findings|features))[*_]*[ \t]*:", re.I)


_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")


_TENTATIVE = re.compile(r"\b(?:working|provisional|tentative|presumptive|presumed|probable|likely|"
                        r"leading|top|initial|preliminary)\b", re.I)


#: "Differential:", "Differential diagnoses", "DDx": what follows lists candidates.
DIFFERENTIAL_LABEL = re.compile(r"[*_#\s]*(?:differentials?(?:\s+diagnos[ie]s)?|ddx)\b", re.I)


def starts_labelled(text: str) -> bool:
    """Whether ``text`` opens with a label."""
    return any(pattern.match(text.lstrip()) for pattern in LABELS)
