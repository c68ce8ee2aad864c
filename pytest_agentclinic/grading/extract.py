"""Step 1 of the CRAFT-MD grader: extract the diagnosis from a free-text answer.

The paper's grader returns the diagnosis named in the answer, "Multiple" when the answer does
not commit to one diagnosis, "None" when it names none, and the main diagnosis when a minor
concurrent one accompanies it. This module does the same with rules on the answer's shape:

* the *diagnostic statement* is found (after "Final Diagnosis:", "the most likely diagnosis
  is", ...; otherwise the answer's first sentence);
* a refusal ("insufficient information", "cannot determine") or an answer naming a test,
  procedure or treatment instead of a condition gives ``none``;
* alternatives ("X or Y", "X vs Y", "possibly X or Y", "rule out Y") give ``multiple``;
* otherwise the statement is split into the main diagnosis and its companions: aliases in
  parentheses, concurrent conditions ("with", "and"), causes ("due to"), refinements
  ("specifically").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from .terminology import FILLER, content, kind, tokens

Category = Literal["single", "multiple", "none"]
Role = Literal["main", "alias", "refinement", "concurrent", "cause", "alternative"]


@dataclass(frozen=True)
class Mention:
    """A condition named in the answer and the part it plays there."""

    text: str
    role: Role


@dataclass(frozen=True)
class Extraction:
    """What step 1 found: the category, the main diagnosis and every mention."""

    category: Category
    diagnosis: str
    mentions: tuple[Mention, ...] = field(default=())
    reason: str = ""

    @property
    def label(self) -> str:
        """The extraction as the paper records it: the name, "multiple" or "none"."""
        return self.diagnosis if self.category == "single" else self.category


_MARKUP = re.compile(r"[*#_`]+|^\s*[-\u2022]\s+", re.M)
_FINAL = re.compile(r"\bfinal\s+diagnosis\s*(?:is\s*)?[:\-]?\s*", re.I)
_LEADS = re.compile(
    r"(?:(?:most|more)\s+)?(?:likely|probable|possible|working|best|final|clinical|"
    r"differential)?\s*diagnos[ie]s\b[^:.;]{0,60}?\b(?:is|would\s+be|could\s+be|are|of)\b\s*"
    r"|\bdiagnos[ie]s\s*:\s*"
    r"|\b(?:consistent|compatible)\s+with\s+|\bsuggestive\s+of\s+|\bindicative\s+of\s+"
    r"|\bsuffering\s+from\s+|\bsounds?\s+like\s+(?:a\s+case\s+of\s+)?|\bpoints?\s+(?:towards?|to)\s+"
    r"|\b(?:is|are)\s+(?:most\s+)?(?:likely|probably)\s+(?:to\s+be\s+|having\s+|due\s+to\s+)?",
    re.I)
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bst)(?<!\bdr)\.(?=\s|$)|\n|;\s")


def clean(text: str) -> str:
    """The answer without markdown, with dashes, quotes and spacing unified."""
    text = _MARKUP.sub("", text)
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text).replace("\u2019", "'")
    return re.sub(r"[ \t]+", " ", text).strip()


def statement(text: str) -> str:
    """The diagnostic statement: what follows the diagnosis marker, up to its sentence end."""
    marker = _FINAL.search(text)
    if marker is not None:
        text = text[marker.end():]
    head = _first_sentence(text)
    lead = _LEADS.search(head)
    if lead is not None and len(head) - lead.end() > 2:
        head = head[lead.end():]
    return head.strip(" .:,-\"'")


def _first_sentence(text: str) -> str:
    end = _SENTENCE_END.search(text)
    return text[: end.start()] if end else text


# --- refusals and answers that name no condition --------------------------------------------

_REFUSAL = re.compile(
    r"\b(?:insufficient|not\s+enough|inadequate|limited)\s+(?:information|data|details|clinical)"
    r"|\b(?:cannot|can\s*not|can't|unable\s+to|not\s+possible\s+to|impossible\s+to|difficult\s+to)"
    r"\s+(?:\w+\s+){0,3}?(?:provide|determine|make|give|establish|diagnose|identify|confirm|"
    r"ascertain|definitively|offer|say|be\s+made|be\s+determined|reach|specify)"
    r"|\bno\s+(?:definitive|specific|clear|final|certain|single|conclusive)?\s*diagnosis"
    r"|\bundetermined\b|\bunknown\s+(?:etiology|cause|diagnosis)|\bnot\s+(?:yet\s+)?determined"
    r"|\b(?:further|more|additional)\s+(?:information|history|details|evaluation|investigation|"
    r"testing|tests|questioning|examination|assessment|workup|work-up|data)\s+(?:is|are|would\s+be)"
    r"\s+(?:needed|required|necessary)"
    r"|\bpending\s+(?:further|more)|\bunclear\b|\binconclusive\b|\bnot\s+a\s+medical\s+condition",
    re.I)


def is_refusal(text: str) -> bool:
    """Whether ``text`` declines to name a diagnosis."""
    return _REFUSAL.search(text) is not None


# --- the statement's structure ----------------------------------------------------------------

_HEDGE = r"(?:most\s+|more\s+|very\s+|less\s+)?(?:likely|probably|possibly|possible|probable|perhaps|maybe)"
_ALTERNATIVE = re.compile(r"\s+(?:or|versus|vs\.?|and/or|nor)\s+|\s+/\s+|\bv\.\s", re.I)
_CAUSE = re.compile(
    rf"\s*,?\s*(?:{_HEDGE}\s+)?\b(?:due\s+to|secondary\s+to|caused\s+by|induced\s+by|"
    r"resulting\s+from|as\s+a\s+result\s+of|because\s+of|attributable\s+to|related\s+to|"
    r"associated\s+with|in\s+the\s+(?:setting|context)\s+of|triggered\s+by|precipitated\s+by|"
    r"following|after|from|exacerbated\s+by|complicating|leading\s+to|causing)\b", re.I)
_REFINE = re.compile(
    rf",?\s*\b(?:{_HEDGE}|suggestive\s+of|suspicious\s+for|concerning\s+for|consider(?:ing)?|"
    r"such\s+as|e\.g\.?|for\s+example|including|specifically|particularly|especially|like|"
    r"rule\s+out|r/o|differential|vs\.?|versus|presumably|suspected)\b[\s,:]*", re.I)
_CONCURRENT = re.compile(
    r"\s+(?:with|and|plus|along\s+with|accompanied\s+by|complicated\s+by|in\s+addition\s+to|"
    r"as\s+well\s+as|together\s+with)\s+|\s*[,;]\s*|\s+-\s+", re.I)
_HEDGE_WORDS = re.compile(
    rf"^(?:(?:a|an|the|{_HEDGE}|suspected|presumed|presumptive|early|clinical|signs?\s+of|"
    r"case\s+of|diagnosis\s+of|diagnosed\s+with|evidence\s+of|features\s+of|picture\s+of|"
    r"presentation\s+of|form\s+of|type\s+of|kind\s+of|episode\s+of|having|has|is|be|"
    r"primary\s+diagnosis|diagnosis|impression|condition|suggestive\s+of)\b[\s:,]*)+", re.I)
_SPECIFIC = re.compile(r"^\s*(?:specifically|particularly|especially|i\.e\.?|namely|"
                       r"most\s+likely|likely|probably|presumably)\b[\s,:]*", re.I)
_ALIAS = re.compile(r"^\s*(?:also\s+(?:known|called)\s+as|aka|a\.k\.a\.?|or|i\.e\.?|"
                    r"formerly|previously|known\s+as|called)\b[\s,:]*", re.I)
_PAREN = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")


def _bare(phrase: str) -> str:
    """A phrase without hedges, articles and trailing punctuation."""
    phrase = _HEDGE_WORDS.sub("", phrase.strip(" .,:;-\"'"))
    return phrase.strip(" .,:;-\"'")


def _parentheticals(text: str) -> tuple[str, list[str]]:
    """The text without its parentheses (innermost first) and their contents."""
    inner: list[str] = []
    while True:
        found = _PAREN.search(text)
        if found is None:
            return re.sub(r"\s+", " ", text).strip(), inner
        inner.append((found.group(1) or found.group(2) or "").strip())
        text = text[: found.start()] + " " + text[found.end():]


def _classify_paren(inner: str) -> list[Mention]:
    """The mentions one parenthetical adds to the diagnosis it follows."""
    if not inner or not content(inner):
        return []
    specific = _SPECIFIC.match(inner)
    if specific is not None:
        return _split_alternatives(inner[specific.end():], "refinement")
    alias = _ALIAS.match(inner)
    if alias is not None:
        return [Mention(_bare(inner[alias.end():]), "alias")]
    refine = _REFINE.match(inner)
    if refine is not None:
        found = _split_alternatives(inner[refine.end():], "alternative")
        return [m for m in found if _is_condition_phrase(m.text)]
    cause = _CAUSE.match(inner)
    if cause is not None:
        return [Mention(_bare(inner[cause.end():]), "cause")]
    # "(fifth disease or erythema infectiosum)": other names of the same condition.
    return [Mention(_bare(p), "alias") for p in _ALTERNATIVE.split(inner) if _bare(p)]


def _split_alternatives(text: str, role: Role) -> list[Mention]:
    parts = [_bare(p) for p in _ALTERNATIVE.split(text)]
    parts = [p for p in parts if p and content(p)]
    if len(parts) > 1:
        return [Mention(p, "alternative") for p in parts]
    return [Mention(p, role) for p in parts]


_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-\u2022*])\s+\S", re.M)
_ADJECTIVE = re.compile(r"^[a-z-]+(?:al|ic|ous|ive|ed|ing|ary|ar)$")


def _is_condition_phrase(phrase: str) -> bool:
    # "(possibly viral)" qualifies the diagnosis; "(possibly lupus)" names another one.
    words = [w for w in tokens(phrase) if w not in FILLER]
    return bool(content(phrase)) and not (len(words) == 1 and _ADJECTIVE.match(words[0]))


def _tail_mentions(tail: str) -> list[Mention]:
    """Mentions from the clause after the main diagnosis (its cause, refinements, companions)."""
    out: list[Mention] = []
    while tail:
        cause, refine = _CAUSE.match(tail), _REFINE.match(tail)
        marker = cause or refine
        role: Role = "cause" if cause is not None else "alternative"
        if marker is not None:
            if refine is not None and _SPECIFIC.match(tail[refine.start():].lstrip(" ,")):
                role = "refinement"
            tail = tail[marker.end():]
        else:
            role = "concurrent"
        segment, tail = _next_segment(tail)
        out.extend(m if m.role == "alternative" else Mention(m.text, role)
                   for m in _split_alternatives(segment, role)
                   if _is_condition_phrase(m.text))
    return out


def _next_segment(text: str) -> tuple[str, str]:
    """The phrase up to the next clause marker, and the rest from that marker on."""
    cuts = [m.start() for pattern in (_CAUSE, _REFINE) for m in [pattern.search(text, 1)] if m]
    concurrent = _CONCURRENT.search(text)
    if concurrent is not None:
        cuts.append(concurrent.start())
    cut = min(cuts) if cuts else len(text)
    rest = text[cut:]
    if concurrent is not None and concurrent.start() == cut:
        rest = text[concurrent.end():]
    return text[:cut], rest


@lru_cache(maxsize=131072)
def extract(response: str) -> Extraction:
    """Step 1: the category of the answer and the diagnosis it names."""
    text = clean(response)
    if not text:
        return Extraction("none", "", reason="empty answer")
    if len(_LIST_ITEM.findall(text)) >= 2 and not _FINAL.search(text):
        return Extraction("multiple", "", reason="the answer lists several items")
    stmt = statement(text)
    body, parens = _parentheticals(stmt)
    head, tail = _next_segment(_bare(body))
    main_alternatives = _split_alternatives(head, "main")
    mentions = [*main_alternatives, *_tail_mentions(tail)]
    for inner in parens:
        mentions.extend(_classify_paren(inner))
    return _categorise(text, stmt, tuple(m for m in mentions if m.text))


def _categorise(text: str, stmt: str, found: tuple[Mention, ...]) -> Extraction:
    # Tests, treatments and drugs are not diagnoses: an answer naming only those names none.
    mentions = tuple(m for m in found if kind(m.text) == "condition")
    main = next((m.text for m in mentions if m.role == "main"), "")
    if any(m.role == "alternative" for m in mentions):
        names = ", ".join(m.text for m in mentions if m.role in ("main", "alternative"))
        return Extraction("multiple", "", mentions, f"alternatives: {names}")
    if not main or is_refusal(stmt) and not _named_before_refusal(stmt, main):
        return Extraction("none", "", mentions, "the answer names no diagnosis")
    return Extraction("single", main, mentions, "one diagnosis named")


def _named_before_refusal(stmt: str, main: str) -> bool:
    refusal = _REFUSAL.search(stmt)
    return refusal is not None and stmt.find(main) != -1 and stmt.find(main) < refusal.start()
