"""What an answer says before its diagnosis that is no part of it (stage 1, for
:mod:`.extract` and :mod:`.statement`): doubt about the one answer that follows ("I'm not
certain, but X"), the grounds it rests on ("Based on the clinical findings, X", "Given the
history, X"), the writer's stance ("In my opinion, X", "Clinically, X"), and the patient's
history before what the patient presents with now ("History of W, now presenting with X").
Other models than the recorded GPT-4 and GPT-3.5 open their answers so; read whole, such an
opening was a list item beside the name, or the name itself ("none: the answer names no
diagnosis"). Grounds that list findings before a judgement ("Given fever, rash and
arthralgia, X is the most likely diagnosis") end where the name starts
(:func:`after_grounds`).
"""

from __future__ import annotations

import re

from ..terminology import GENERIC, tokens
from ..terms.concepts import default_terminology
from ..terms.concurrent import disease_by_words, finding

__all__ = ["after_grounds", "drop_heading", "drop_preface"]

# "I'm not certain, but X", "Hard to say; most likely X": doubt about the one answer that
# follows, not a second diagnosis kept open.
_DOUBT = re.compile(
    r"^\s*(?:(?:i'm|i\s+am|we\s+are|i'm\s+still|i\s+am\s+still)\s+not\s+(?:entirely\s+|completely\s+|"
    r"fully\s+|totally\s+|100%\s+)?(?:certain|sure|confident)|(?:it's\s+|it\s+is\s+)?(?:hard|"
    r"difficult|tough)\s+to\s+(?:say|tell|be\s+(?:certain|sure))(?:\s+for\s+sure)?|not\s+"
    r"(?:entirely\s+|completely\s+)?(?:certain|sure)|(?:i\s+)?(?:can't|cannot)\s+be\s+(?:certain|"
    r"sure)|uncertain(?:ty\s+remains)?)\s*(?:[,;:.!-]+\s*|\s+(?=but\b))(?:but\s+)?(?=\S)", re.I)

# "I am an AI, not a doctor, but T", "I'm not a doctor, but T", "As an AI language model, T":
# the writer's disclaimer of its role, which says nothing of the diagnosis that follows (red
# team round 6; alone, or before "I cannot diagnose", it is read as a refusal)
_WHO_WRITES = (r"(?:an?\s+(?:ai|artificial\s+intelligence|language\s+model|chatbot|"
               r"assistant)(?:\s+(?:language\s+)?model)?|(?:just\s+|only\s+)?not\s+a\s+"
               r"(?:real\s+|licensed\s+|medical\s+)?(?:doctor|physician|clinician|"
               r"medical\s+professional|substitute\s+for\s+a\s+doctor))")
_ROLE = re.compile(rf"^\s*(?:as|(?:i'm|i\s+am)(?:\s+just|\s+only)?|while\s+(?:i'm|i\s+am))\s+"
                   rf"{_WHO_WRITES}(?:\s*,?\s*(?:and\s+)?{_WHO_WRITES})*\s*[,;:]\s*"
                   # "As an AI, I cannot examine you": the disclaimer goes on (a refusal)
                   r"(?:but\s+|however,?\s+)?(?!(?:i|we)\b)(?=\S)", re.I)

# The grounds, named by what they are ("the clinical findings", "the history and
# examination", "the patient's symptoms"), then a comma: findings listed one by one ("Given
# fever, rash and arthralgia, X") are not dropped, their commas would cut the list.
_GROUND = (r"(?:(?:the|this|these|her|his|their|all(?:\s+the)?|available|patient's|"
           r"clinical|physical|laboratory|lab|imaging|reported|presenting)\s+){0,4}"
           r"(?:findings|history|presentation|examination|exam|symptoms|signs|results|"
           r"information|data|evidence|picture|features|details|case|work-?up|labs?|tests?|"
           r"imaging|description|course)")
_GROUNDS = re.compile(
    rf"^\s*(?:based\s+(?:up)?on|given|considering|in\s+light\s+of|on\s+the\s+basis\s+of|"
    rf"after\s+(?:reviewing|considering|weighing)|from)\s+{_GROUND}(?:\s*(?:,\s*)?(?:and|&)\s+"
    rf"{_GROUND})?\s*,\s*(?=\S)"
    # the writer's stance before the name
    r"|^\s*(?:in\s+(?:my\s+)?(?:clinical\s+)?(?:opinion|view|judge?ment|assessment)|"
    r"clinically|overall|in\s+summary|in\s+conclusion|to\s+summari[sz]e|taken\s+together|"
    r"all\s+things\s+considered|on\s+balance)\s*,\s*(?=\S)"
    # the writer's leaning, in a clinician's shorthand ("Favor T", "Leaning towards T")
    r"|^\s*(?:i\s+)?(?:favou?r(?:ing)?|leaning\s+towards?|lean\s+towards?)\s+(?=\S)", re.I)
# "Favor T over W": the leaning and the name it is preferred to ("T over W" is no name)
_OVER = re.compile(r"^(\s*(?:i\s+)?(?:favou?r(?:ing)?|prefer(?:ring)?)\s+[^.;\n]+?)\s+over\s+"
                   r"[^.;\n]+", re.I)


# The patient's history before what the patient presents with now ("History of T, now
# presenting with W", "Known history of T; presents with W", "Previously diagnosed T;
# current diagnosis W", "Status post T, now W": a clinician's "s/p", after a procedure or an
# event): a history is known, not diagnosed now (docs/grading.md), and what follows it is
# the answer.
_HISTORY = re.compile(
    r"^\s*(?:(?:(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?(?:patient|man|woman|child|boy|girl|infant)\s+"
    r"with\s+)?(?:a\s+)?(?:(?:known|past|prior|previous)\s+)?(?:medical\s+)?(?:history|hx)\s+of"
    r"|previously\s+diagnosed(?:\s+with)?|status\s+post)\s+"
    r"[^,;.\n]{1,80}?\s*[,;]?\s*(?:(?:now|currently|who\s+now)\s+)?(?:presenting|presents|"
    r"admitted|now|current(?:ly)?(?:\s+diagnosis)?(?:\s+is)?)\b(?:\s+with\b)?\s*[,:]?\s*(?=\S)",
    re.I)


# A condition said to be over before what the patient has now ("T (resolved); now W", "T -
# resolved; now W"): a history too, as above (red team round 5).
_RESOLVED = re.compile(r"^\s*[^,;.\n()]{1,80}?\s*(?:\(\s*(?:now\s+)?resolved\s*\)|[-,]\s*"
                       r"(?:now\s+)?resolved)\s*[;,.]?\s*(?:now|currently)\b(?:\s+with\b)?\s*[,:]?\s*(?=\S)",
                       re.I)


# "ICD-10 L40.0 - T", "L40.0: T": the diagnosis's code before its name, as a coded list
# writes it; a code names nothing (reading/notes.py: "T (ICD-10: L40.0)"; red team round 9).
# Its label or its decimals make it a code ("B12 - ..." alone may be a vitamin).
_CODE_FIRST = re.compile(r"^\s*(?:icd[- ]?(?:9|10|11)?(?:[- ]?cm)?\s*(?:code)?\s*[:#=]?\s*"
                         r"[a-z]\d{2}(?:\.[0-9a-z]{1,4})?|[a-z]\d{2}\.[0-9a-z]{1,4})\s*"
                         r"(?:[:=]|\s-+)\s*(?=\S)", re.I)


# A heading of its own before the answer ("Verdict: T", "Prediction: T", "Doctor: T", "Model
# 3 output: T"): a word or three and a colon, as a form, a transcript or an ML-style output
# heads its value. A heading says which part of the reply follows, and the name after it is that
# part, as after "Answer:" (clinical convention: the note's heading is no part of the
# entry; docs/grading.md, *A heading of its own*). Headings that set the name aside or give
# it another role ("Excluded:", "History:", "Differential:", "Q:") are no neutral heading:
# :mod:`.negations` and the labels read those, and an unknown one keeps its words.
_HEADING = re.compile(r"^[ \t>#*_]*((?:[^\W_][\w'/&-]*[ \t]+){0,2}[^\W_][\w'/&-]*)[*_]*"
                      r"[ \t]*:[ \t]*[*_]*[ \t]*(?=[^\W\d_])")
_ASIDE_HEADING = re.compile(
    r"\b(?:not|no|non|never|without|un\w+|less|least|lower|low|exclu\w*|rul\w+|reject\w*|"
    r"discard\w*|eliminat\w*|doubt\w*|improbab\w*|incorrect|wrong|false|\w*priorit\w*|"
    r"disfavou?r\w*|history|hx|past|prior|previous\w*|former\w*|old|earlier|family|"
    r"differential\w*|ddx|alternat\w*|other\w*|also|secondary|second|third|consider\w*|"
    r"complicat\w*|risk\w*|pending|q|question\w*|query|queried|r/o|screen\w*|comorbid\w*|"
    r"incidental\w*|background|underlying|cause\w*|etiolog\w*|aetiolog\w*|trigger\w*|"
    r"mimic\w*|vs|versus|or|and|if|avoid\w*|patient|parent|mother|father|nurse|pmh|psh|fhx?|"
    r"shx?|hpi|cc|ros|meds|medications?|allerg\w*|vitals?|"
    r"user|human|instruction|prompt|system|grader|moderator|judge|evaluator|assistant|"
    r"symptoms?|complaints?|signs?|findings?|presentation|features?|exam\w*|labs?|tests?|"
    r"imaging|treatment|therapy|plan|management|next|step|recommend\w*|advice|note|"
    r"case)\b", re.I)


# Words that name a part of a reply ("Result", "Model output", "Classification"), which the
# sources' names also use ("treatment result", "classification of ...").
_REPLY_PART = re.compile(r"results?|outcomes?|outputs?|classification|class|category|"
                         r"determination|identified|thoughts?|model|responses?|reply|call",
                         re.I)


def drop_heading(text: str) -> str:
    """``text`` without a neutral heading before its name (:data:`_HEADING`). The heading is
    no heading of another role (:data:`_ASIDE_HEADING`), holds no name the terminology knows
    ("Psoriasis: plaque type" keeps its name), and is no disease by its words; and either
    none of its words is a word of the sources' names ("Verdict", "Doctor"), or the rest of
    its line is a name they know as a disease ("Result: T"): "Lisch nodules: fever, rash" is
    a name and its findings, read by :mod:`.clauses`."""
    found = _HEADING.match(text)
    if found is None:
        return text
    heading, terms = found.group(1), default_terminology()
    # (a name the sources do not know whole may still open with one they do: "Papulopustular
    # rosacea: ruled out" is a name and its status, read by :mod:`.negations`)
    if (_ASIDE_HEADING.search(heading) or disease_by_words(heading)
            or any(terms.known(part) for part in (heading, *heading.split())
                   if part.lower() not in GENERIC)):
        return text
    rest = text[found.end():]
    if any(terms.is_word(word) for word in tokens(heading) if not _REPLY_PART.fullmatch(word)):
        name = rest.split("\n", 1)[0].strip().rstrip(".")
        if (re.search(r"[,;:]", name) or finding(name)
                or not (terms.known(name) or disease_by_words(name))):
            return text
    return rest


# Findings added up to the answer, in a clinician's shorthand ("Fever + rash + hilar nodes
# -> T", "Fever + rash => T", "... \u2234 T"): the signs summed by "+" are the grounds, and the
# arrow (or "therefore") points to the conclusion, as "Therefore, T" does (red team round
# 15). Only after findings summed with "+" between spaces: "T \u2192 W" may tell the course
# of a disease, and "CD4+" is part of a name.
_NOT_ARROW = r"[^\n\u2192\u21d2\u27f9\u2234]"
# (each run bounded, so that a long reply is read in linear time)
_SUMMED = re.compile(rf"^{_NOT_ARROW}{{0,300}}?\S[ \t]+\+[ \t]+\S{_NOT_ARROW}{{0,300}}?"
                     r"[ \t]*(?:\u2192|\u21d2|\u27f9|\u2234|=>|-+>)[ \t]*(?=\S)")


def drop_preface(text: str) -> str:
    """``text`` without an opening that only says the doctor is unsure or is no doctor, or
    what the answer rests on, or the writer's stance, or the patient's history before what
    is diagnosed now, or the diagnosis's code, or a heading of its own, or the findings it
    sums up to the name."""
    text = drop_heading(_CODE_FIRST.sub("", _SUMMED.sub("", text, count=1), count=1))
    text = _OVER.sub(r"\1", _DOUBT.sub("", _ROLE.sub("", text, count=1), count=1), count=1)
    text = _HISTORY.sub("", _GROUNDS.sub("", text, count=1), count=1)
    return _RESOLVED.sub("", text, count=1)


# What a judgement rests on, before the name it judges ("Given the history of joint pain,
# X is the most likely diagnosis"; "With fever, rash and arthralgia, X is ...").
_GROUNDS_FIRST = re.compile(r"^\s*(?:given|based\s+(?:up)?on|considering|in\s+light\s+of|"
                            r"on\s+the\s+basis\s+of|with(?:out)?\b|because\s+of|from|after|in\s+(?:a|"
                            r"this|the)\s+(?:[\w-]+\s+){0,3}?(?:patient|child|woman|man)\b)", re.I)
_CLOSES_LIST = re.compile(r"\s(?:and|or|&)\s", re.I)


def after_grounds(head: str) -> str:
    """``head`` without the grounds it opens with, up to their comma: the grounds may list
    findings ("Given fever, rash and arthralgia, X"), so they end at the comma after the item
    that closes their list ("and arthralgia"), else at the first; the name after may hold a
    comma of its own ("Bipolar I disorder, current episode manic")."""
    if _GROUNDS_FIRST.match(head) is None or "," not in head:
        return head
    parts = head.split(",")
    closing = next((i for i, part in enumerate(parts[:-1]) if _CLOSES_LIST.search(part)), 0)
    return ",".join(parts[closing + 1:])
