"""What a committed answer adds after its first line that is no second diagnosis (stage 1,
for :mod:`.extract`): sections under a heading of what it weighed or why ("Differential:",
"## Reasoning"), a list whose every item is set aside, and closing lines (advice to see a
doctor, a courtesy, a disclaimer)."""

from __future__ import annotations

import re

from .statement import first_line

__all__ = ["cut_sections", "differential_after", "fold_sub_items", "unaddressed"]

# A letter's salutation on a line of its own ("Dear patient,", "Dear Mr. Smith,", "Hello
# Jane,"), also right after the protocol's label: whom the answer is written to, no name of
# a diagnosis (red team round 8).
_SALUTATION = re.compile(r"^((?:[^\n:]{1,40}:)?)[ \t*_]*(?:dear|hello|hi)\b[^\n,:;.!?]{0,40}"
                         r"[,:!]?[ \t*_]*\n", re.I)


def unaddressed(text: str) -> str:
    """``text`` without a letter's salutation on its first line."""
    return _SALUTATION.sub(r"\1 ", text.lstrip(), count=1).strip()

# A heading that opens what the answer adds after committing to one diagnosis: the
# alternatives it weighed and set aside, or its reasons ("Differential:", "Ruled out:",
# "## Reasoning", a table of differentials). None of it is a second diagnosis.
_HEADING = (
    r"(?:(?:the\s+|my\s+)?(?:differentials?(?:\s+diagnos[ie]s)?|ddx|"
    r"ruled\s+out|excluded|exclusions?|less\s+likely|other\s+(?:possibilities|considerations)|"
    r"(?:also\s+)?considered|considerations?|reasons?|reasoning|rationale|justification|"
    r"explanation|why|here(?:'s|\s+is)\s+why|supporting(?:\s+\w+)?|findings|evidence|"
    # "**Confidence**" over "High": how sure the writer is, a note under its own heading, as
    # "Confidence: high" after the answer is (docs/grading.md, other models' styles)
    r"confidence(?:\s+level)?|certainty|"
    # "Key supporting features", "Pertinent negatives", "Clinical reasoning"
    r"(?:key|pertinent|clinical|relevant)\s+(?:supporting\s+)?(?:findings|features|points|"
    r"evidence|positives|negatives|reasoning)|summary|discussion|investigations?|"
    # "**Important Considerations:**" over advice (a chat model's breakdown of its answer)
    r"important\s+(?:considerations?|notes?|points?|information)|"
    r"further\s+(?:testing|tests|workup|work-up|evaluation)|recommended\s+\w+|prognosis|"
    r"red\s+flags|patient\s+education|follow[- ]?up|notes?|"
    r"workup|work-up|next\s+steps?|plan|management|recommendations?|treatment|"
    # the answer's sources ("References:", "Sources"): citations name no diagnosis
    r"references?|sources?|citations?|bibliography|further\s+reading)\b[^\n:]{0,40}?")
_SECTION = re.compile(
    rf"^[ \t>#*_\-\u2022]*{_HEADING}[*_]*[ \t]*(?::|$))"
    # a numbered item that opens with such a heading and its colon ("1. Diagnosis: T\n2.
    # Treatment: ...", as small chat models number the parts of their answer): the parts
    # after the diagnosis are its plan or its reasons, no second diagnosis (red team round 7)
    rf"|^[ \t>*_]*\d{{1,2}}[.)][ \t]+[*_]*{_HEADING}[*_]*[ \t]*:)", re.I | re.M)


# "T. Differential: W, W2", "T\n\nDifferential:\n- W": a differential heading after the
# answer's start, at a line's start or after a sentence; what it lists the answer weighed
# and set aside (red team round 17)
_DIFFERENTIAL_AFTER = re.compile(r"(?:^|(?<=[.;])[ \t])[ \t>#*_\-]*(?:the\s+)?(?:differentials?"
                                 r"(?:\s+diagnos[ie]s)?|ddx)[*_]*[ \t]*:[*_]*", re.I | re.M)
# an item's separators, and what follows its name ("W - less likely", "W (20%)", "W: ...")
_ITEMS = re.compile(r"[,;\n]|\b(?:and|or)\b", re.I)
_ITEM_MARK = re.compile(r"^[\s>*_\-\u2022]*(?:\d{1,2}[.)][ \t]*)?[*_]*")
# (the first place where it starts, found by fixed-length alternatives: a pattern that
# opened with a run of spaces was tried from each space of a run, a time quadratic in it)
_ITEM_END = re.compile(r"\s[-\u2013\u2014]\s|[(:\[]")
#: At most this many names are read under the heading.
_MAX_ASIDE = 16


def differential_after(text: str) -> tuple[str, ...]:
    """The names ``text`` lists under a differential heading after its first words ("Bee
    sting. Differential: T"): the candidates the answer weighed beside its answer. Any
    one of them is the truth only as an alternative set aside, so an answer that names
    another main diagnosis is sure to be wrong (docs/grading.md, round 17)."""
    text = text.strip()
    found = _DIFFERENTIAL_AFTER.search(text, 1)
    if found is None:
        return ()
    section = _SECTION.search(text, found.end())
    body = text[found.end(): section.start() if section else len(text)]
    names = (_name_of(item) for item in _ITEMS.split(body)[:_MAX_ASIDE])
    return tuple(n for n in names if any(c.isalpha() for c in n) and len(n) <= 120)


def _name_of(item: str) -> str:
    """An item's name, without its list mark and what follows the name."""
    item = _ITEM_MARK.sub("", item, count=1)
    end = _ITEM_END.search(item)
    return (item if end is None else item[:end.start()]).strip(" \t\n*_.")


# A closing line after the answer: advice to see a doctor, a courtesy, a disclaimer
# ("Please consult a healthcare professional.", "I hope this helps!"). It names nothing.
_CLOSING_WORDS = (
    r"(?:please\s+(?:consult|see|seek|contact|follow\s+up)|i\s+hope|hope\s+this|"
    r"let\s+me\s+know|feel\s+free|(?:always\s+)?consult\s+(?:a|an|your|with)\b|"
    r"seek\s+(?:medical|immediate|prompt|urgent)|disclaimer|"
    # a letter's sign-off ("Kind regards,", "Sincerely,", "Yours sincerely") and its signature
    # below it (red team round 8)
    r"(?:kind|best|warm|warmest)\s+(?:regards|wishes)\b|(?:yours\s+)?sincerely\b|"
    r"yours\s+(?:truly|faithfully)\b|with\s+best\s+wishes|this\s+(?:is\s+not|does\s+not\s+"
    r"constitute)\s+(?:a\s+)?(?:medical\s+)?(?:advice|diagnosis))")
_CLOSING = re.compile(rf"^[ \t>*_]*{_CLOSING_WORDS}", re.I | re.M)
# The same closing as the last sentences of the answer's line ("T. I hope this helps! Let
# me know ..."), as small chat models end (red team round 7); each sentence after it closes
# too ("Thanks. I hope this helps. The diagnosis is T." answers after it)
_CLOSING_SENTENCE = re.compile(rf"(?<=[.!])[ \t]+(?:{_CLOSING_WORDS}[^.!?\n]*(?:[.!?]+|$)"
                               r"[ \t]*)+$", re.I | re.M)

_OPEN = re.compile(r"\b(?:or|possib\w*|consider\w*|differential|rule\s+out|exclud\w*|likely|"
                   r"vs\.?|versus|alternatively)\b", re.I)


# A labelled line after the answer that says it has nothing ("Secondary diagnoses: none",
# "Comorbidities: nil", "Allergies: N/A"): it names nothing, and is no item of a list. Not
# a label of the answer itself ("Final diagnosis: none" after a working one says no answer).
_NOTHING_LINE = re.compile(r"^[ \t>*_\-]*(?!(?:final|working|provisional|primary|principal|"
                           r"main|most\s+likely|revised|updated)\b|(?:diagnos[ie]s|dx|answer)\b)"
                           r"[^\W\d_][^\n:]{0,40}?[*_]*[ \t]*:[ \t]*[*_]*(?:none|nil|"
                           r"n/?a|not\s+applicable)[*_.]*[ \t]*$\n?", re.I | re.M)


def cut_sections(text: str) -> str:
    """``text`` up to the first section heading or closing line after a committed answer
    (its first line holds the answer, and is no section heading itself), without the
    labelled lines after it that say there is nothing ("Secondary diagnoses: none")."""
    first = first_line(text)
    if not first.strip() or _SECTION.match(first):
        return text
    start = text.find(first) + len(first)
    text = text[:start] + _NOTHING_LINE.sub("", text[start:])
    found = _SECTION.search(text, start)
    closing = _CLOSING_SENTENCE.search(text, 0, start) or _CLOSING.search(text, start)
    if closing is not None and _OPEN.search(text, closing.start()):
        closing = None  # "Please see a doctor; W is also possible" keeps W open
    cuts = [at for at in (found.start() if found else None, _set_aside_list(text, start),
                          closing.start() if closing else None)
            if at is not None]
    return text[: min(cuts)] if cuts else text


# A list after the answer whose every item sets its name aside ("1. **W** - less likely"):
# what the answer weighed, as under a "Ruled out:" heading.
_LIST_ITEM = re.compile(r"^[ \t>]*(?:\d+[.)]|[-*\u2022])[ \t]+\S[^\n]*$", re.M)
_SET_ASIDE_ITEM = re.compile(r"\b(?:less\s+likely|unlikely|not\s+likely|ruled\s+out|excluded|"
                             r"rejected|not\s+supported)\b", re.I)


def _set_aside_list(text: str, start: int) -> int | None:
    """Where the first list after ``start`` begins, when each of its items sets its name
    aside (items on consecutive lines, blank lines between them allowed); else None."""
    first = _LIST_ITEM.search(text, start)
    if first is None:
        return None
    items = []
    for line in text[first.start():].splitlines():
        if _LIST_ITEM.fullmatch(line):
            items.append(line)
        elif line.strip():
            break
    return first.start() if all(_SET_ASIDE_ITEM.search(i) for i in items) else None


# A list item and its indentation ("  - cervical lymphadenopathy"), perhaps right after the
# protocol's label ("Final Diagnosis: - T").
_INDENTED_ITEM = re.compile(r"^([ \t]*)(?:[^\n:|]{1,40}:[ \t]*)?(?:\d{1,2}[.)]|[-*+\u2022])[ \t]+"
                            r"(\S.*)$")


def fold_sub_items(text: str) -> str:
    """``text`` with each nested list item joined to the item it is nested under ("- T" over
    "  - lymphadenopathy" is "- T; lymphadenopathy"): in markdown an item indented under
    another's text is a sub-list of that item (CommonMark, list items), what it is made of or
    shows, not a sibling of it; the joined companions are then read by the rule for
    companions (red team round 9). Any deeper indentation nests: the answer's spacing may
    have been collapsed to one space before."""
    out: list[str] = []
    parent: int | None = None  # the indentation of the last item a sub-item may join
    for line in text.split("\n"):
        item = _INDENTED_ITEM.match(line)
        depth = len(item.group(1).expandtabs(4)) if item else None
        if item and depth is not None and parent is not None and depth > parent and out:
            out[-1] = f"{out[-1].rstrip(' .;')}; {item.group(2).strip()}"
            continue
        parent = depth if item else (parent if not line.strip() else None)
        out.append(line)
    return "\n".join(out)
