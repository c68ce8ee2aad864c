"""The case as an answer retells it before giving its diagnosis (stage 1, for
:mod:`.statement`).

Models other than the recorded GPT-4 and GPT-3.5 often open with the patient and the findings
("The patient presents with itchy plaques on the elbows.", "A 45-year-old man has fever and a
rash.", "Key findings: ...") and state the diagnosis in a later sentence ("The most likely
diagnosis is T."). The paper's grader returns the diagnosis the answer gives (CRAFT-MD, step
1), not the findings it repeats: a retelling sentence is passed over, as a courtesy is, when a
later sentence gives a diagnosis. Read as the answer, it named a finding ("rash") or nothing.

A sentence that weighs a diagnosis itself ("The findings are consistent with T", "She most
likely has T") is no retelling, and a later sentence that only weighs others ("The
differential includes W", "W is less likely") gives no diagnosis to prefer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .joins import ROUND_BRACKET

__all__ = ["answers_later", "retells"]

# Who the sentence is about: the patient, by role or age ("A 45-year-old man", "The
# patient's", "This 3-month-old infant"), or a pronoun.
_PERSON = (r"(?:patient|child|woman|man|boy|girl|infant|baby|toddler|neonate|newborn|lady|"
           r"gentleman|female|male|adult|adolescent|teenager|individual|person)")
_WHO = (rf"(?:(?:(?:the|this|our|a|an)\s+)?(?:[\w-]+\s+){{0,4}}?{_PERSON}(?:'s)?|"
        r"(?:she|he|they)\b)(?:\s*,\s*[^,.;]{1,60},)?")  # "The patient, a 30-year-old woman,"
_AGE = r"(?:this\s+is\s+)?an?\s+\d{1,3}[\s-]*(?:year|month|week|day)s?[\s-]*old\b"
# What the case is made of, as a subject ("Her symptoms include", "Key findings are",
# "The physical examination reveals").
_PARTS = (r"(?:symptoms?|findings?|signs?|features?|history|presentation|examination|exam|"
          r"complaints?|labs?|laboratory\s+(?:results|findings|tests)|test\s+results|results|"
          r"vitals|vital\s+signs|picture|case|vignette)")
_RETELLS = re.compile(
    # "The patient presents with ...", "She reports ...", "A 6-year-old boy has ..."
    rf"^\s*(?:{_WHO}\s+(?:also\s+)?(?:(?:(?:is|was|has\s+been|had\s+been)\s+)?"
    r"(?:presents?|presented|presenting|complains?|complained|complaining|reports?|reported|"
    r"reporting|describes?|described|notes?|noted|denies|denied|came|comes|developed|"
    r"experienced|is\s+experiencing|has|had|have)\b|is\s+an?\s+\d)"
    # "A 45-year-old man with fever and a rash ...", "This is a 30-year-old woman ..."
    rf"|{_AGE}"
    # "Her symptoms include ...", "The key findings are ...", "The examination reveals ..."
    r"|(?:(?:the|her|his|their|this|these|our)\s+)?(?:(?:patient|child)'s\s+)?"
    r"(?:(?:key|main|clinical|presenting|relevant|important|notable|pertinent|physical|"
    rf"positive|cardinal|salient)\s+)*{_PARTS}(?:\s+(?:and|&)\s+[\w\s]{{1,30}}?)?\s+"
    r"(?:include|includes|included|are|is|was|were|show|shows|showed|reveal|reveals|revealed|"
    r"demonstrate|demonstrates|demonstrated|consist)\b"
    # "Symptoms: ...", "Findings: ..." (a heading of what was found)
    rf"|(?:key\s+|main\s+|clinical\s+)?{_PARTS}\s*:"
    # "On examination there is ...", "The blood count shows ...", "Inflammatory markers are
    # raised": the examination and the tests as a clinical note reports them (red team
    # round 11)
    r"|on\s+(?:physical\s+)?exam(?:ination)?\b"
    r"|(?:(?:the|her|his|their)\s+)?(?:full\s+|complete\s+)?(?:blood\s+(?:count|tests?|"
    r"film|cultures?)|inflammatory\s+markers|chest\s+(?:radiograph|x-?ray)|radiograph|"
    r"urinalysis)\s+(?:shows?|showed|reveals?|revealed|are|is|was|were)\b"
    # "Let me summarize the case", "Let's review the findings"
    r"|(?:let\s+me|let's|i'll|i\s+will|we\s+will|we'll)\s+(?:first\s+)?(?:summari[sz]e|recap|"
    r"review|go\s+over|look\s+at|consider|think|walk))",
    re.I)
# Words that weigh a diagnosis: a sentence with one gives (or keeps open) a diagnosis.
_WEIGHS = re.compile(
    r"diagnos|impression|conclu|consistent|compatible|in\s+keeping|suggest|indicat|suspect|"
    r"think|believe|likely|probabl|possib|classic|typical|characteristic|point(?:s|ing)?\s+"
    r"(?:to|towards?)|fits?\b|sounds?|looks?\s+like|seems?|appears?|favou?r|concern|"
    r"differential|consider|rule\s+out|exclude"
    # a conclusion drawn from what was retold ("Taken together, this is T"; round 11)
    r"|taken\s+together|all\s+in\s+all|putting\s+(?:it|this|everything)\s+(?:all\s+)?together",
    re.I)
# A sentence that weighs other diagnoses than the answer's: no answer to prefer.
_OTHERS = re.compile(
    r"differential|\bddx\b|rule\s+out|\balso\b(?!\s+(?:known|called|termed|named)\b)|"
    r"\bother\b|alternativ|less\s+likely|unlikely|exclude|excluded|\bnot\b|\bno\b|\bor\b|"
    r"(?<!-)\b(?:vs|versus)\b(?!-)|cannot|can't", re.I)
# A sentence that says no diagnosis can be given yet ("Further tests are needed for a
# diagnosis", "A diagnosis cannot be made", "There is no diagnosis to be made"): no answer
# to prefer. (Not the refusal reader's words: "undetermined" and "unknown" are words of
# names too, "monoclonal gammopathy of undetermined significance".)
_UNDECIDED = re.compile(r"\b(?:cannot|can't|unable|impossible|not\s+possible|insufficient|"
                        r"required|needed|necessary|pending|no\s+(?:\w+\s+){0,2}diagnos\w*)\b",
                        re.I)
# A sentence that gives its diagnosis before it says more is needed ("The most likely
# diagnosis is T, further evaluation needed"; "I suspect T, but tests are required"): the
# answer is given, with a note on what is still to do (the paper's step 1 returns it).
_GIVEN_FIRST = re.compile(r"\b(?:diagnos[ie]s\s+(?:is|would\s+be)|suspect|think|believe|"
                          r"likely|probably)\s+[^,;]*[^\W\d_][^,;]*,\s*(?:but\s+|though\s+|"
                          r"although\s+)?[^,;]*$", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|;\s")
# How far to look for the sentence that answers: an opening retells the case in a few.
_LOOK_AHEAD = 12


def retells(sentence: str) -> bool:
    """Whether ``sentence`` retells the case (who the patient is, what they present with,
    what was found) and weighs no diagnosis."""
    return _RETELLS.match(sentence) is not None and _WEIGHS.search(sentence) is None


def answers_later(rest: str, is_name: Callable[[str], bool], *,
                  over_a_name: bool = False) -> bool:
    """Whether a sentence of ``rest`` weighs a diagnosis or is a name alone (``is_name``).
    ``over_a_name``: the retelling may name the answer itself ("The patient has T."), so
    only a sentence that gives one diagnosis counts, not one that weighs others ("The
    differential includes W") nor a name alone."""
    sentences = [s for s in _SENTENCE.split(rest) if s.strip()
                 and not _undecided(s)][:_LOOK_AHEAD]
    if over_a_name:
        # (a bracket names the answer again: "T (also known as W or V)")
        return any(_WEIGHS.search(s) is not None
                   and _OTHERS.search(ROUND_BRACKET.sub("", s)) is None for s in sentences)
    return any(_WEIGHS.search(s) is not None or is_name(s) for s in sentences)


def _undecided(sentence: str) -> bool:
    """Whether ``sentence`` says no diagnosis can be given yet, and gives none before."""
    found = _UNDECIDED.search(sentence)
    return found is not None and _GIVEN_FIRST.search(sentence, 0, found.start()) is None
