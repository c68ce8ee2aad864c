"""Where a free-text answer states its diagnosis: the *diagnostic statement*.

Models write their answer in many shapes, and the statement is found in all of them:

* after a label: "Final Diagnosis:" anywhere; at the start of a line "Answer:", "Dx:",
  "Assessment:", "Impression:", "Conclusion:", "Working diagnosis:", or such a label as a
  heading over a line of its own ("## Final Diagnosis");
* otherwise in the first sentence that is not a courtesy ("Thank you for the information."),
  a question to the patient ("Have you had a fever?"), or the case retold before a sentence
  that answers ("The patient presents with ...", :mod:`.retelling`); after the words that
  lead to the name ("the most likely diagnosis is", "I suspect you have", "this looks like",
  "consistent with") or after the grounds it rests on ("Given fever and a rash, X is ..."),
  and up to where the prose moves on to reasons ("given ...", "which requires ...",
  :mod:`.context`).

Tags and JSON objects (``<diagnosis>X</diagnosis>``, ``{"diagnosis": "X"}``) are turned into
labels before (see :func:`.markers.unwrap`). :mod:`.extract` reads the diagnoses in the
statement; the multiple-choice reader (:mod:`.mcq`) reads its option from it.
"""

from __future__ import annotations

import re

from ..terms.kinds import INJURIES_AND_STATES
from .context import cut_context
from .joins import ROUND_BRACKET
from .labels import (
    DIFFERENTIAL_LABEL,
    LABELS,
    MAX_LABELS,
    PROSE_LABEL,
    declared,
    first_line,
    heads_differential,
    starts_labelled,
)
from .option_letters import without_option_letter
from .plans import plan_names_nothing
from .prefaces import after_grounds
from .refusals import is_refusal
from .retelling import answers_later, retells
from .support import (
    SUPPORT,
    after_findings,
    bracket_open,
    features_joined,
    findings_stated,
    in_its_bracket,
)
from .typography import expand_shorthand

__all__ = ["DIFFERENTIAL_LABEL", "DISJUNCTION", "SENTENCE_END", "bare_name", "clean",
           "declared", "first_line", "label", "starts_labelled",
           "statement"]

# Emphasis, headings, bullets, a table row's outer bars, and a quote block's marks ("> T":
# markdown's block quote, which Claude and Gemini put around an answer; red team round 11)
# (A bullet's blank lines above it go with it, from the first of them: a line start after a
# blank line, empty or of three spaces at most, is tried only where a non-space opens it,
# else each of a long run of blank lines scanned the rest of the run.)
_AFTER_BLANK = r"(?<!\n\n)(?<!\n[^\S\n]\n)(?<!\n[^\S\n]{2}\n)(?<!\n[^\S\n]{3}\n)"
_MARKUP = re.compile(rf"[*#_`]+|^(?:{_AFTER_BLANK}|(?=\S))\s*[-\u2022]\s+|^[ \t]*\||\|[ \t]*$"
                     r"|^[ \t]*>[ \t]?", re.M)

# --- labels (:mod:`.labels`) -----------------------------------------------------------

def label(text: str) -> str | None:
    """The text after the answer's strongest label, or None when it has none. "Final
    Diagnosis:" holds wherever it stands; a label of prose ("Assessment:", "Impression:") does
    not move an answer that names its diagnosis alone on its first line ("Psoriasis" then
    "Assessment: chronic plaques"). A label's text read again for its own label counts
    towards :data:`.labels.MAX_LABELS` (a hostile "Dx: Dx: Dx: ..." ran past Python's
    recursion limit)."""
    for _ in range(MAX_LABELS):
        part, again = _after_label(text)
        if not again or part is None:
            return part
        text = part
    return text


def _after_label(text: str) -> tuple[str | None, bool]:
    """The text after the strongest label, and whether that text is to be read again for a
    label of its own."""
    for index, pattern in enumerate(LABELS):
        # The last final diagnosis or answer answers: "Differential: X, Y. Final answer: Z"
        found = (pattern.search(text) if index else
                 next(reversed(list(pattern.finditer(text))), None))
        if found is None:
            continue
        part = text[found.end():]
        if starts_labelled(part):
            # "Final Diagnosis: <diagnosis>X</diagnosis>": the label inside is the answer's
            return part.lstrip(), True
        if index < PROSE_LABEL and heads_differential(part):
            # "Final Diagnosis:" over a differential and the label that answers after it
            return part, True
        before = first_line(clean(text[: found.start()]))
        return (None if index == PROSE_LABEL and before and bare_name(before) else part), False
    return None, False


# --- leads: the words that lead to the name in a sentence ---------------------------------------

_WHO = r"(?:patient|child|infant|baby|woman|man|boy|girl|she|he|you)"
# "has a history of", "has symptoms of", "has no ...": what follows is no diagnosis.
_NOT_A_NAME = r"(?!(?:a\s+)?(?:history|symptoms?|signs?|no|not|been|had|any)\b)"
_MODAL = r"(?:(?:may|might|could|most\s+likely|likely|probably)\s+)?"
# "(that) the woman might be experiencing", "you may have": who has it, before the name
# ("this patient has", "our patient has": the same patient, red team round 13).
_SOMEONE_HAS = (rf"(?:that\s+)?(?:(?:the|this|our|my|your)\s+)?{_WHO}\s+{_MODAL}"
                rf"(?:has|have|is\s+having|(?:is|are|be)\s+(?:experiencing|suffering\s+from)"
                rf"|suffers\s+from)\s+{_NOT_A_NAME}")
# The evidence a name is said to fit ("the history", "her presentation and examination"):
# after "fits" or "consistent with" it names nothing, the name came before it (red team
# round 9, and "Lichen planus is consistent with the history").
_EVIDENCE_WORD = (r"(?:(?:clinical|physical|examination|exam|laboratory|lab|imaging|biopsy|"
                  r"histologic(?:al)?)\s+)?(?:history|findings|examination|exam|presentation|"
                  r"picture|symptoms|signs|features|data|story|course|evidence|results|clinical)")
_EVIDENCE = (rf"(?:(?:the|this|her|his|all(?:\s+the)?)\s+)?{_EVIDENCE_WORD}"
             rf"(?:(?:,\s*|\s+and\s+)(?:(?:the|her|his)\s+)?{_EVIDENCE_WORD})*")

_LEADS = re.compile(
    # "the diagnosis would (most likely) be X"
    r"\bdiagnos[ie]s\b(?:[^:.;]{0,300}?\b(?:is|(?:would|could|may|might)\s+(?:(?:most\s+)?"
    r"(?:likely|probably)\s+)?be|are)\b"
    # "a diagnosis of exclusion" is the answer's status, no lead to a name
    r"|\s+of\b(?!\s+exclusion\b))\s*"
    r"|\bdiagnos[ie]s\s*[:=]\s*"
    # "The correct answer is: X" (round 9)
    r"|\b(?:answer|impression|conclusion|guess|suspicion)\s+(?:is|would\s+be)(?:\s*:\s*|\s+)"
    # "my assessment is X", as "Assessment: X" labels it; not "further assessment is needed"
    # (round 9)
    r"|\b(?:my|our)\s+(?:clinical\s+)?assessment\s+(?:is|would\s+be)(?:\s*:\s*|\s+)"
    # "I would diagnose her with X", "is diagnosed with X"; not "cannot be diagnosed with the
    # information given" or "unable to diagnose with ..."
    # (the look-behinds follow the word: tried at every position, they cost the most)
    r"|\bdiagnos(?:e|ed|ing)(?<!\bbe\sdiagnosed)(?<!\bbeen\sdiagnosed)(?<!\bto\sdiagnose)"
    r"\s+(?:\w+\s+){0,3}?with\s+"
    r"|\b(?:i'd|i\s+would)\s+say\s+"
    # "I'd go with X", "I'll go with X": a casual commitment to one answer (red team round 12)
    r"|\b(?:i'd|i\s+would|i'll|i\s+will|we'd|we\s+would)\s+go\s+with\s+"
    # "I'm going with X": the same commitment in the present, "my money is on X" its idiom
    # (red team round 13)
    r"|\bmy\s+money(?:'s|\s+is|\s+would\s+be)\s+on\s+"
    r"|\b(?:i'm|i\s+am|we're|we\s+are)\s+going\s+(?:to\s+go\s+)?with\s+"
    # "I'd diagnose X" (with "her with X" above)
    r"|\b(?:i'd|i\s+would|we\s+would|we'd)\s+diagnose\s+(?:this\s+as\s+|it\s+as\s+)?"
    r"(?!(?:\w+\s+){0,3}?with\b)"
    rf"|\b(?:possible|likely|probable)\s+that\s+{_SOMEONE_HAS}"
    r"|^(?:this|it|that)\s+(?:could|may|might)\s+(?:well\s+)?be\s+"
    r"|\b(?:organism|pathogen|cause|etiology|culprit|condition)\b[^:.;]{0,300}?\bis\b\s*"
    # "your symptoms are caused by X", to the patient (red team round 8)
    r"|\b(?:symptoms?|findings|presentation|problems?|complaints?)\s+(?:are|is)\s+(?:most\s+"
    r"likely\s+|probably\s+|likely\s+)?(?:caused|explained)\s+by\s+"
    r"|\b(?:consistent|compatible|in\s+keeping)\s+with\s+|\bsuggestive\s+of\s+"
    # "classic for X", not "the characteristic of this patient's diagnosis is X"
    # "diagnostic of X", "pathognomonic of X": the findings settle X (red team round 13)
    r"|\bindicative\s+of\s+|\b(?:diagnostic|pathognomonic)\s+(?:of|for)\s+"
    r"|\b(?:classic|typical|characteristic)\s+(?:(?:case|presentation|"
    r"picture|example)\s+|(?<!\bthe\scharacteristic\s))(?:for|of)\s+"
    # "fits X", not "..., a condition that fits the history and the findings": what a name
    # fits there is the evidence, no name (red team round 9)
    r"|\bfits\s+(?:with\s+)?(?:a\s+diagnosis\s+of\s+)?|\bpoints?\s+(?:towards?|to)\s+"
    rf"|\bsuggests?\s+(?:a\s+diagnosis\s+of\s+|{_SOMEONE_HAS})?|\bsuffering\s+from\s+"
    rf"|\b(?:sounds?|looks?|seems?)\s+like\s+(?:a\s+case\s+of\s+|{_SOMEONE_HAS})?"
    # "appears to be X", not "appears to be presenting with ..." or "appears to be here"
    r"|\b(?:appears?|seems?)\s+to\s+be\s+(?!\w+ing\b|here\b|there\b)(?:a\s+case\s+of\s+)?"
    r"|\b(?:most\s+)?likely\s+(?:has|have|suffers\s+from|is\s+suffering\s+from)\s+"
    rf"|(?:^|,\s*){_SOMEONE_HAS}"
    rf"|\b(?:think|believe|suspect|feel|confident|sure|certain)\s+(?:that\s+)?(?:it\s+is\s+|"
    rf"it's\s+|this\s+is\s+|"
    rf"{_SOMEONE_HAS})"
    # "I think X", "I strongly suspect X": the judgement right before the name (after the
    # longer forms above, which start at the same word)
    r"|(?:(?<=\bi\s)|(?<=ly\s))(?:think|believe|suspect)\s+"
    r"(?!it\b|this\b|that\b|he\b|she\b|the\s+patient)"
    r"|\b(?:is|are)\s+(?:most\s+)?(?:likely|probably)\s+(?!that\b)(?:to\s+be\s+|having\s+|due\s+to\s+)?",
    re.I)

# "This is X.", "Clinically, this is X.": the sentence says what the case is, and X is the
# answer where no other lead is in it (red team round 8; "This is consistent with X" and
# "This is most likely X" read by their leads). Not "It is important to ...", "This is a
# difficult case" names no condition and reads as none.
_THIS_IS = re.compile(
    r"^\s*(?:(?:clinically|overall|so|therefore|thus|ultimately|finally|in\s+summary|"
    r"in\s+conclusion|taken\s+together|all\s+in\s+all),?\s*)?(?:this|it|that)\s+is\s+(?!(?:not|no|my|our|what|how|why|because|"
    r"due|based|too|very|quite|also|still|all|everything|correct|right|true|likely|probably)\b"
    # "It is important to note", "It is hard to say", "It is unclear.": a judgement of the case,
    # no name ("Essential thrombocythemia" is one)
    r"|(?:\w+\s+)?(?:important|unclear|difficult|hard|challenging|impossible|possible|"
    r"necessary|essential|crucial|critical|imperative|vital|advisable|recommended|unlikely|"
    r"worth|best|better|clear|obvious|uncertain|(?:in)?appropriate|premature|prudent|wise|"
    r"reasonable)\b(?:\s+(?:to|that|for|whether|if)\b|\s*[.!]?\s*$)"
    r"|a\s+(?:difficult|complex|challenging|tricky|complicated)\b"
    # what the exchange is, not the patient: "This is a medical emergency", "... an order to
    # stop", "... a description of ...", "... a routine check-up", "... a healthy patient"
    r"|(?:a|an)\s+(?:[\w-]+\s+){0,2}(?:emergency|order|description|request|question|scenario|"
    r"simulation|reminder|summary|check-?up|error|healthy|normal)\b)"
    r"(?:(?:a\s+)?case\s+of\s+)?", re.I)

# What may follow a lead without naming anything: the name came before it.
_NO_NAME = re.compile(r"\s*(?:the\s+)?(?:most\s+|more\s+)?(?:likely|probable)\b(?:\s+(?:diagnosis|"
                      r"explanation|cause|answer|one))?\s*$"
                      # "... but X fits better", "X fits best"; "X is consistent with the
                      # history": what a name fits there is the evidence, no name
                      rf"|\s*(?:better|best|most\s+closely|{_EVIDENCE}(?:\s+best)?)\s*$", re.I)
_OPENING = re.compile(r"^\s*\(")  # "X\n(or Y)"
# An option's letter before the name, as a multiple-choice answer is written ("A. Asthma",
# "(C) Asthma", "Option C: Asthma"): the letter labels the option, the name answers. A
# number labels an item before any name ("1. von Willebrand disease", "1. 17-alpha-
# hydroxylase deficiency"); a letter only before a capital ("C. difficile" is an initial).
_ENUMERATOR = re.compile(r"^\s*(?:[A-Ea-e][.)]\s+(?=[A-Z])|\d{1,2}[.)]\s+(?=[^\W_])|"
                         r"\((?:[A-Ea-e]|\d{1,2})\)\s+(?=[^\W\d_])|"
                         r"(?i:option|choice)\s+(?:[A-Ea-e]|\d{1,2})\s*[.):-]\s*(?=[^\W\d_]))")
#: A word that offers another diagnosis at the start of a clause or sentence.
# ("Second choice: W", "Runner-up: W" under the answer: the next of a ranking, another
# possible diagnosis as "Alternative: W" is; red team round 13)
DISJUNCTION = re.compile(r"\s*(?:(?:or|and/or|nor|vs\.?|versus|alternatively)(?![-\w])"
                         r"|(?:alternatives?|(?:second|next)\s+(?:choice|most\s+likely|best)|"
                         r"runner-?up)(?:\s+diagnos[ie]s)?\s*(?=:))[\s,:]*", re.I)
# A full stop after a one-letter initial before a lower-case word ("C. difficile colitis",
# "H. pylori gastritis") is part of the name, not a sentence's end.
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\ba\.k\.a)(?<!\bvs)(?<!\bst)(?<!\bdr)"
                           r"(?<!\b[A-Z])\.(?=\s|$)|(?<=\b[A-Z])\.(?=\s*$|\s+[^a-z\s])"
                           r"|[?!]+(?=\s|$)|\n|;\s")
# An opening that answers nothing: the diagnosis comes in a later sentence.
_COURTESY = re.compile(
    r"^\s*(?:thanks?|thank\s+you|ok(?:ay)?|alright|all\s+right|i\s+see|i\s+understand|"
    r"understood|got\s+it|great|perfect|sure|certainly|of\s+course|hello|hi|dear|noted|"
    r"that(?:'s|\s+is)\s+(?:very\s+)?helpful|that\s+helps|"
    r"very\s+well|"
    # "You asked whether this is X.": the patient's question restated, not the answer (red
    # team round 9; an answer of questions names no diagnosis)
    r"(?:you|the\s+patient)\s+(?:asked|wondered|wanted\s+to\s+know|were\s+asking)\s+(?:me\s+)?"
    r"(?:whether|if|about))\b", re.I)

# A model's disclaimer: a refusal, unless a diagnosis follows it.
_DISCLAIMER = re.compile(r"(?i)^\W*(?:(?:as|i'm|i\s+am)\s+an\s+ai\b|(?:i'm|i\s+am)\s+(?:sorry|not"
                         r"\s+a\s+doctor)\b|unfortunately\b|(?:my\s+)?apologies|i\s+apologi[sz]e)")


def clean(text: str) -> str:
    """The answer without markdown, with dashes, quotes, spacing and a clinician's shorthand
    ("c/w", "r/o", "s/p") unified."""
    text = expand_shorthand(_MARKUP.sub("", text))
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text).replace("\u2019", "'")
    return re.sub(r"[ \t]+", " ", text).strip()


def statement(text: str) -> str:
    """The diagnostic statement of a cleaned answer: its first sentence that answers, from the
    words that lead to the name on. An answer of questions and courtesies only has none."""
    # "A. Asthma": the label of an answer, not a sentence ("C. eosinophilic gastritis" too)
    text = without_option_letter(_ENUMERATOR.sub("", text))
    head = _first_sentence(text)
    lead = _LEADS.search(head)
    if (lead is not None and SUPPORT.match(lead.group())
            and not _NO_NAME.match(head, lead.end())
            and _opens_with_disease(after_grounds(head[: lead.start()]))
            and not findings_stated(head[: lead.start()])):
        # "X with features suggestive of Y": X is the answer, Y a second name beside it; "X -
        # features suggestive of Y", "X presenting with features ..." are read as it is
        lead = None
        head = features_joined(head)
    if lead is not None and DISJUNCTION.match(head, lead.end()):
        # "X is likely or Y": the name came before the words, and an alternative after them
        head = f"{head[: lead.start()]} {head[lead.end():]}"
    elif lead is not None and _NO_NAME.match(head, lead.end()):
        # "X appears to be the most likely diagnosis": the name came before the words
        head = head[: lead.start()]
    elif lead is not None and len(head) - lead.end() > 2:
        # "The correct answer is (B) X": the option's letter labels the name (round 9), and
        # past the findings' own clause (support.py)
        rest = without_option_letter(_ENUMERATOR.sub("", head[lead.end():], count=1))
        return in_its_bracket(after_findings(rest, _LEADS.finditer(rest)),
                               head[: lead.start()]).strip(" .:,-\"'")
    elif lead is not None and head[lead.end():].strip(" :") == "":
        # "... the most likely diagnosis is:" then the name on the line below
        after = text[text.find(head) + len(head):].lstrip(" :.\n")
        if after:
            return statement(after)
    # the name opens the sentence, after what it rests on ("Given fever and a rash, X is the
    # most likely diagnosis"); grounds that refuse are kept ("Given the insufficient data,
    # I must ask more"), and a refusal after them read alone ("Without the image, a
    # diagnosis cannot be made": the grounds name nothing)
    if (lead is None and (this_is := _THIS_IS.match(head)) and len(head) - this_is.end() > 2
            and not is_refusal(head)):
        return head[this_is.end():].strip(" .:,-\"'")
    grounded = after_grounds(head)
    kept = head if is_refusal(head) and not is_refusal(grounded) else grounded
    return kept.strip(" .:,-\"'")


def _opens_with_disease(before: str) -> bool:
    """Whether ``before`` opens with the name of a disease the terminology knows ("Rosacea
    with features" of "Rosacea with features suggestive of lupus")."""
    # the terminology only for this rare shape
    from ..terms.concepts import default_terminology
    from ..terms.concurrent import disease_by_words, finding

    before = before.strip()
    # the longest opening that is a name: "Granulomatosis with polyangiitis with features"
    # (or before a dash or a semicolon that sets the features off, "W - features suggestive
    # of T", or "presenting with" them: red team round 19)
    cuts = [m.start() for m in re.finditer(r"\s+(?:with|showing|having|presenting|and|but)\b"
                                           r"|[,;]|\s-{1,3}\s", before)]
    # or before the bracket the lead stands in: "W (suggestive of T)" is W's bracket, as "W,
    # suggestive of T" (red team round 18)
    if bracket_open(before):
        cuts.append(before.rfind("("))
        cuts.sort()
    terms = default_terminology()
    # or an injury or a state like pregnancy ("Whiplash with features suggestive of ..."), or
    # a disease by its words the terminology does not know ("Pyostomatitis vegetans with
    # features suggestive of ..."): a sign ("Rash with features ...") is none of them
    return any(before[:cut].strip() and not finding(before[:cut]) and (
        terms.disease_like(before[:cut]) or bool(
        INJURIES_AND_STATES & set(before[:cut].lower().split()))
        or disease_by_words(before[:cut])) for cut in reversed(cuts))


def _first_sentence(text: str) -> str:
    found = _answering_sentence(text)
    if found is None:
        return ""  # questions to the patient, or courtesies, only: no diagnosis
    sentence, end, text = found
    if end is not None and end.group() == "\n" and bare_name(sentence):
        # Names one per line list them, as commas would: "Psoriasis\nEczema\nTinea".
        lines = [sentence, *_bare_lines(text[end.end():])]
        if len(lines) > 1:
            return ", ".join(line.strip(" .") for line in lines)
    # "X. Or Y.", "X; or Y", "X. Alternatively, Y." and "X\n(or Y)" offer Y in the next
    # sentence: it belongs to the statement, as "X or Y".
    rest = _OPENING.sub("", text[end.end():], count=1) if end is not None else ""
    offered = DISJUNCTION.match(rest)
    if not offered:
        return sentence
    # "T - pending biopsy. Alternatively, W.": the reasons after the name end its clause, so
    # the name, not the reasons, is offered beside W (red team round 12)
    cut = cut_context(sentence)
    if cut != sentence and _LEADS.search(sentence) is None and bare_name(cut):
        sentence = cut
    return f"{sentence} or {_first_sentence(rest[offered.end():])}"


def _answering_sentence(text: str) -> tuple[str, re.Match[str] | None, str] | None:
    """The first sentence that may answer, where it ends, and the text it starts; None when
    the answer only asks or thanks."""
    for _ in range(32):  # a bound, not a limit real answers reach
        end = SENTENCE_END.search(text)
        sentence = text[: end.start()] if end else text
        rest = text[end.end():] if end else ""
        asks = end is not None and end.group().startswith("?")
        # "The patient presents with X. The most likely diagnosis is T.": the case retold
        # before the answer, passed over as a courtesy is (retelling.py)
        lead = _LEADS.search(sentence) is not None
        retold = (not asks and retells(sentence)
                  and answers_later(rest, bare_name, over_a_name=lead))
        if lead and not asks and not retold:
            return sentence, end, text
        if not rest.strip():
            # "Acute pericarditis?" alone: one tentative answer, as "Maybe X"; "Any fever?"
            # asks the patient
            tentative = asks and bare_name(sentence) and _ASKING.match(sentence) is None
            return None if asks and not tentative else (sentence, end, text)
        # "Thank you." before the answer, or "Any fever?" or "As an AI, I cannot see the
        # image." before "I suspect you have X": not the answer. Questions or disclaimers
        # with no diagnosis after them are the whole answer.
        if not (_COURTESY.match(sentence) or retold
                or ((asks or _DISCLAIMER.match(sentence)) and _LEADS.search(rest))):
            return None if asks else (sentence, end, text)
        text = rest
    return None


# The words that open a question rather than name a diagnosis.
_ASKING = re.compile(r"\s*(?:is|are|am|do|does|did|have|has|had|any|anything|how|what|when|"
                     r"where|which|who|why|can|could|should|would|will|shall|may|might|"
                     r"was|were|tell|please)\b", re.I)


def _bare_lines(text: str) -> list[str]:
    """The lines at the start of ``text`` that are bare names (blank lines between them)."""
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if not bare_name(line):
            break
        out.append(line)
    return out


# "The history and the examination fit.": a sentence whose subject is the evidence says why,
# below the name, and names no second diagnosis (red team round 11)
_OF_EVIDENCE = re.compile(rf"\s*(?:the|this|her|his|all\s+the)\s+{_EVIDENCE_WORD}\b", re.I)


def bare_name(line: str) -> bool:
    """Whether a line is a name and nothing else: a few words, no label, question, lead,
    courtesy or explanation ("Psoriasis", not "The plaques are typical")."""
    text = line.strip(" .-")
    step = re.sub(r"^\s*(?:\d+[.)]|[-\u2022*])\s+", "", text)  # a step of a plan names nothing
    # a bracket restates or qualifies the name ("... deficiency (G6PD deficiency)"): it does
    # not make the name longer
    words = ROUND_BRACKET.sub(" ", text).split()
    return (0 < len(words) <= 8 and not re.search(r"[:?!;|]", text)
            and _LEADS.search(text) is None and _COURTESY.match(text) is None
            and DISJUNCTION.match(text) is None and cut_context(text) == text
            and _OF_EVIDENCE.match(text) is None
            and not plan_names_nothing(step))
