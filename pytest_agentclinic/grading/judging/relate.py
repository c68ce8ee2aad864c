"""Stage 2 of the grader: relate the names of a parsed answer to the truth.

:mod:`.parse` gives one main claim and the other names with their roles; this stage asks the
terminology (:mod:`.equivalence`, :mod:`.concepts`) about them and returns what the decision
(:mod:`.rules`, the table of docs/grading.md) reads, as plain facts:

* :func:`relate_name`: one name against the truth's accepted names, one :class:`NameRelation`
  (same, synonym, broader with its height and breadth, narrower, another branch, unknown);
* :class:`Related`: the facts of one answer (each worked out once, when first asked, since
  terminology calls cost): how its main diagnosis (or a name restating it) relates to each
  accepted name, another disease named beside it, the case's answer choices it names,
  whether it is a fragment of the true name or a symptom, and whether the terminology places
  it in another branch (the answer choices it names are :mod:`.choices`' facts, the names
  that share the truth's words without naming it :mod:`.word_guards`').

Nothing here decides a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import pairwise
from typing import Literal

from ..reading.companions import glosses_main
from ..reading.joins import LIKE_HEAD
from ..reading.notes import is_note
from ..reading.parse import Extraction, Mention
from ..reading.without_findings import without_findings
from ..reading.written_names import index_order
from ..terminology import key, tokens
from ..terms.concepts import default_terminology
from ..terms.concurrent import (
    concurrent,
    disease_by_words,
)
from ..terms.equivalence import judge
from ..terms.kinds import kind
from ..terms.qualifiers import leading_qualifiers
from ..terms.relation import Equivalence
from .choices import choices_named, distractor, same_name
from .initials import another_disease_abbreviated, written_as_letters
from .name_tests import (
    another_site,
    bracketed_disease,
    has_condition_word,
    head_apart,
    known_apart,
    opens_with_known,
    restates,
)
from .word_guards import bare_head, fragment, head_of_variants, unslipped

__all__ = ["NameRelation", "Related", "Standing", "relate_name"]

#: A name's relation to the truth in docs/grading.md's words.
Standing = Literal["same", "synonym", "broader", "narrower", "other-branch", "unknown"]

# The forms of a name (with and without its parentheticals), asked for again and again.

#: Roles whose match makes the answer right.
PRIMARY_ROLES = frozenset({"main", "alias", "refinement"})
#: Roles of a name whose match never scores: the truth named only in a secondary role.
SECONDARY_ROLES = frozenset({"concurrent", "listed", "cause", "beside", "complication",
                             "suggested", "comorbid", "claimed"})
#: Roles of a name the answer gives its diagnosis again, unconfirmed by the terminology: a
#: bare bracket ("X (Y)") and "also known as" (:func:`.companions.restating_role`).
GLOSS_ROLES = frozenset({"beside", "claimed"})
#: Roles of a name named beside the main diagnosis rather than restating or causing it.
_BESIDE_ROLES = frozenset({"concurrent", "listed", "beside", "after", "suggested"})
#: "X-like" (also after a bracket: "encephalopathy (PML)-like"): what resembles X.
#: (The word starts where a word does: from inside one the same "-like" is found from its
#: start, which the scan reaches first, else each letter of a long word is tried.)
#: Written open before a look-alike's head too ("Seckel like syndrome"; red team round 18).
_LIKE = re.compile(r"(?<![^\W\d_])([^\W\d_]+)(?:\s*\([^()]*\))?(?:\s*-\s*like\b|"
                   rf"\s+like(?=\s+{LIKE_HEAD}))")
#: A word before a companion that states its role beside the main diagnosis, never part of
#: a disease's name ("superimposed impetigo").
_ROLE_WORD = re.compile(r"^(?:superimposed|superadded)\s+", re.I)
@dataclass(frozen=True)
class NameRelation:
    """How one name of the answer relates to the truth: the value the decision reads."""

    #: The name and its role in the answer ("main", "alias", "listed", ...).
    name: str
    role: str
    #: The terminology's judgement of the name against the truth: right or not; its relation
    #: (same, synonym, broader, narrower, sibling, qualifier-flip: another branch when sure,
    #: related: unknown when unsure, or different); sure or not; why; a family; a height.
    judged: Equivalence

    @property
    def primary(self) -> bool:
        """Whether the name plays the main part (the main diagnosis or a restatement)."""
        return self.role in PRIMARY_ROLES

    @property
    def standing(self) -> Standing:
        """The relation in docs/grading.md's words: same, synonym, broader, narrower,
        another branch (the terminology surely tells the names apart) or unknown."""
        j = self.judged
        if j.relation == "narrower" or (j.relation in ("same", "synonym", "broader") and j.sure):
            return j.relation
        return "other-branch" if j.sure and not j.correct else "unknown"


def relate_name(mention: Mention, truth: str) -> NameRelation:
    """One name of the answer against one accepted name of the truth (any of its forms), a
    slip of the pen read as the truth where no other known name is as close
    (:func:`.word_guards.unslipped`)."""
    text = mention.text
    if mention.role in SECONDARY_ROLES:
        # "W with superimposed T": the word says the name's role, not which disease
        text = _ROLE_WORD.sub("", text) or text
    judged = judge(text, truth)
    if not judged.correct and unslipped(text, truth) is not None:
        judged = replace(judge(truth, truth), reason="the same name but for a one-letter slip, "
                         "and no other known name that close")
    return NameRelation(mention.text, mention.role, judged)


def _surely_right(related: NameRelation) -> bool:
    return related.judged.correct and related.judged.sure


@dataclass
class Related:
    """The facts of one single answer that the decision reads, each worked out once."""

    extraction: Extraction
    accepted: Sequence[str]
    choices: Sequence[str]

    @property
    def name(self) -> str:
        """The main diagnosis."""
        return self.extraction.diagnosis

    @cached_property
    def body(self) -> str:
        """The statement without its parentheses, when it holds more than its main name."""
        return self.extraction.body if len(self.extraction.mentions) > 1 else ""

    @cached_property
    def whole(self) -> str:
        """The statement read as one name, unless names are joined by a comma, a bracket or
        a sentence of their own (never one name)."""
        joined = any(m.role in ("listed", "after", "beside", "suggested", "claimed")
                     for m in self.extraction.mentions)
        return "" if joined else self.body

    @cached_property
    def named(self) -> str | None:
        """The accepted name the whole statement names ("Granulomatosis with polyangiitis"),
        with a finding or a secondary condition after it or not ("Granulomatosis with
        polyangiitis with cervical lymphadenopathy")."""
        forms = [self.whole, *without_findings(self.extraction)] if self.whole else \
            without_findings(self.extraction)
        return next((t for form in forms for t in self.accepted if same_name(form, t)), None)

    @cached_property
    def index_named(self) -> str | None:
        """The accepted name the statement names in an index's order, its main term before
        the comma and its modifiers after it ("Gastritis, eosinophilic"; ICD-10-CM's index,
        MeSH's inverted headings: :func:`.written_names.index_order`), or None."""
        inverted = self.index_reading
        if inverted is None:
            return None
        return next((t for t in self.accepted if same_name(inverted, t)), None)

    @cached_property
    def index_reading(self) -> str | None:
        """The statement in the order a clinician writes it, where it is a main term with its
        modifiers after a comma (:func:`.written_names.index_order`) and they add words to
        the main term's ("Dermatitis, unspecified" is dermatitis)."""
        reading = index_order(self.extraction.body)
        return None if reading is None or key(reading) == key(self.name) else reading

    @cached_property
    def index_apart(self) -> bool:
        """Whether the statement, read in an index's order, is a name the truth is not within
        ("Meningioma, anterior cranial fossa" for middle cranial fossa meningioma): the
        reading, not the head before the comma, is the answer's name. Where the truth is
        within it ("Psoriasis, scalp" for psoriasis) the head names the truth with a note,
        read as before. Only a statement of the head and its modifiers alone, read so as a
        name the terminology knows ("Bipolar disorder, currently in a manic episode" is
        prose after a name, read as before)."""
        reading = self.index_reading
        if reading is None or any(m.role not in ("main", "listed")
                                  for m in self.extraction.mentions):
            return False
        words = key(reading)
        if any(key(t) <= words for t in self.accepted):
            return False
        return default_terminology().known(reading) or all(
            another_site(words, key(t)) for t in self.accepted)

    @cached_property
    def one_name(self) -> bool:
        """Whether the statement is one name whole ("constitutional delay of growth and
        puberty"), its "with" and "and" included."""
        return self.named is not None or bool(self.body and default_terminology().known(
            self.body))

    @cached_property
    def beside(self) -> str | None:
        """Another disease named beside the main diagnosis, or None."""
        return _another_disease(self.extraction,
                                (self.whole or self.body) if self.one_name else "")

    @cached_property
    def chosen(self) -> list[str]:
        """The case's answer choices the answer names, when it names two or more."""
        return choices_named(self.extraction, self.choices)

    @cached_property
    def matches(self) -> tuple[NameRelation, ...]:
        """For each accepted name, the name of the answer that relates to it best: the main
        diagnosis or a restatement of it; the truth found only in a secondary role is a
        match of that role (which never scores)."""
        return tuple(_best_match(self.extraction, truth) for truth in self.accepted)

    @cached_property
    def glosses(self) -> tuple[NameRelation, ...]:
        """The names the answer gives its diagnosis in brackets or with "also known as"
        (:data:`GLOSS_ROLES`) that relate to an accepted name as a right answer would, sure
        or not ("ureteral colic (kidney stone)" for a renal calculus)."""
        glosses = [m for m in self.extraction.mentions if m.role in GLOSS_ROLES]
        if sum(m.role == "beside" for m in glosses) > 1:  # "X (A or B)": options, no gloss
            glosses = [m for m in glosses if m.role != "beside"]
        return tuple(r for truth in self.accepted for m in glosses
                     if glosses_main(self.extraction.statement, self.extraction.diagnosis,
                                     m.text)
                     for r in [relate_name(m, truth)] if r.judged.correct)

    @cached_property
    def distractor(self) -> str | None:
        """Another answer choice of the case that the main name (or the statement) names."""
        return (distractor(self.name, self.accepted, self.choices)
                or (distractor(self.whole, self.accepted, self.choices) if self.whole
                    else None))

    @cached_property
    def fragment(self) -> bool:
        """Whether the name is only modifiers of an accepted name ("plaques", "IgA")."""
        return fragment(self.name, self.accepted)

    @cached_property
    def bare_head(self) -> bool:
        """Whether the main name is one word alone, the head noun (last word) of an accepted
        name that words of kind come before ("colitis" for ulcerative colitis, "cyst" for a
        branchial cleft cyst), and no accepted name is that word alone."""
        # the statement only that word, or that word and a sentence after it that adds none
        # of the truth's other words ("Prostatitis. I hope this helps!"); not "Granulomatosis
        # with polyangiitis", read as "granulomatosis" with a companion, nor "meningitis
        # caused by a virus": what stands beside the word says which kind
        if not bare_head(self.name, self.accepted):
            return False
        rest = {w for t in self.accepted for w in tokens(t)} - set(tokens(self.name))
        return all(m.role == "main" or (m.role == "after" and not rest & set(tokens(m.text)))
                   for m in self.extraction.mentions)

    @cached_property
    def head_of_variants(self) -> bool:
        """Whether the bare head noun names the one disease an accepted name is a variant of
        (:func:`.word_guards.head_of_variants`: a stated synonym, or no ICD-10-CM code apart)."""
        return head_of_variants(self.name, self.accepted)

    @cached_property
    def ambiguous_short_form(self) -> bool:
        """Whether the main name is an abbreviation alone that the sources give for another
        disease too ("PSC": primary sclerosing cholangitis, pancreatic serous cystadenoma),
        or give for none while a known disease's name spells it ("CVI"), and the case does
        not accept it as written
        (:func:`.initials.another_disease_abbreviated`)."""
        # behind words of severity, course or side ("Severe PSC"): they narrow nothing
        # (docs/grading.md, *Broader and narrower*), so the abbreviation is read alone
        # (red team round 16)
        name = leading_qualifiers(self.name.strip())[1]
        # the long form in a bracket says which disease ("PSC (primary sclerosing
        # cholangitis)"): the letters are not left to the reader (red team round 20)
        aliases = [m for m in self.extraction.mentions if m.role == "alias"]
        if any(_surely_right(relate_name(m, t)) for m in aliases for t in self.accepted):
            return False
        if not written_as_letters(name) or any(
                name.lower() == t.strip().lower() for t in self.accepted):
            return False
        return another_disease_abbreviated(name, self.accepted)

    @cached_property
    def truth_excluded(self) -> bool:
        """Whether the answer excludes the truth by name ("T unlikely; W", "not T"): a name
        it sets aside, the same as an accepted name or a synonym the terminology states."""
        judged = (relate_name(Mention(x, "main"), t).judged
                  for x in self.extraction.excluded for t in self.accepted)
        return any(j.correct and j.sure for j in judged)

    @cached_property
    def resembles(self) -> str | None:
        """The word of an accepted name the statement says it only resembles ("psoriasis" of
        "psoriasis-like illness"), or None: a name of the form "X-like" names what looks
        like X, not X ("flu-like illness", "lupus-like syndrome"; docs/grading.md, round 4).
        An accepted name written so keeps its own "-like" ("serum sickness-like reaction")."""
        own = {w for t in self.accepted for w in _LIKE.findall(t.lower())}
        truth_words = {w for t in self.accepted for w in re.findall(r"[^\W\d_]+", t.lower())}
        said = self.extraction.statement or self.name
        return next((w for w in _LIKE.findall(said.lower()) if w in truth_words - own), None)

    @cached_property
    def symptom(self) -> bool:
        """Whether the name is a symptom or a sign."""
        return default_terminology().symptom(self.name)

    @cached_property
    def placed(self) -> str:
        """What the terminology places: the statement known whole, else the main name."""
        return self.body if self.one_name and self.body else self.name

    @cached_property
    def placed_apart(self) -> bool:
        """Whether the terminology places :attr:`placed` in another branch than the truth."""
        placed = self.placed
        apart = known_apart(placed, self.accepted) or head_apart(placed, self.accepted)
        if placed != self.name and apart:
            apart = all(not judge(placed, truth).correct for truth in self.accepted)
        return apart


def _best_match(extraction: Extraction, truth: str) -> NameRelation:
    """The mention that matches the truth (a primary one first), else the closest primary."""
    judged = [relate_name(m, truth) for m in (*extraction.mentions, *_rejoined(extraction))
              if m.role in PRIMARY_ROLES or m.role in SECONDARY_ROLES or m.role == "after"]
    for roles in (PRIMARY_ROLES, SECONDARY_ROLES | {"after"}):
        for r in judged:
            if r.role in roles and r.judged.correct and r.judged.sure:
                return r
    primary = [r for r in judged if r.primary]
    right = [r for r in primary if r.judged.correct]
    unsure = [r for r in primary if not r.judged.sure]
    if primary:
        return (right or unsure or primary)[0]
    # No role: no name of the answer is compared with the truth.
    return NameRelation(extraction.diagnosis, "", Equivalence(
        False, "different", "no diagnosis named matches the correct answer"))


def _another_disease(extraction: Extraction, whole: str) -> str | None:
    """A disease other than the main diagnosis named beside it (with, and, a comma, a dash,
    brackets, a line break, a sentence of its own), or None. Findings and symptoms beside a
    diagnosis ("X with nail pitting"), a cause ("X due to Y") and another name or a kind of
    the main diagnosis the terminology confirms do not count; nor do the words of a name
    the statement gives whole (``whole``: "Granulomatosis with polyangiitis")."""
    terms = default_terminology()
    parts = _parts_of_names(extraction)
    names = [m.text for m in extraction.mentions
             if m.role in _BESIDE_ROLES and not (whole and m.text.lower() in whole.lower())
             and m.text not in parts and not is_note(m.text, places=True)
             and kind(m.text) == "condition" and not terms.symptom(m.text)
             # a qualifier or a finding ("chronic plaque type") is no disease of its own; a
             # name in brackets that the terminology does not know may be a lay name of the
             # main one ("frozen shoulder (adhesive capsulitis)", "(canker sores)")
             and (bracketed_disease(m.text, extraction.diagnosis)
                  if m.role in ("beside", "suggested")
                  else terms.disease_like(m.text) or has_condition_word(m.text)
                  or disease_by_words(m.text) or opens_with_known(m.text))]
    # The main diagnosis and the names that restate it, each linked to one before it
    # ("Parvovirus B19 infection (fifth disease or erythema infectiosum)").
    same = [extraction.diagnosis, *(m.text for m in extraction.mentions
                                    if m.role in ("alias", "refinement"))]
    bracketed = {m.text for m in extraction.mentions if m.role in ("beside", "suggested")}
    for _ in range(len(names)):
        linked = [n for n in names if n not in same
                  and any(restates(n, s, loosely=n in bracketed) for s in same)]
        if not linked:
            break
        same.extend(linked)
    # a finding, a linked concept or a stated secondary condition is concurrent: the main
    # diagnosis is graded (CRAFT-MD's grader, step 1)
    return next((n for n in names if n not in same
                 and not concurrent(n, extraction.diagnosis)), None)


def _rejoined(extraction: Extraction) -> list[Mention]:
    """The names split at their "with" joined again, in the role of their first half
    ("... suggestive of granulomatosis with polyangiitis")."""
    terms, mentions = default_terminology(), extraction.mentions
    return [Mention(f"{before.text} with {m.text}", before.role)
            for before, m in pairwise(mentions) if before.role != "main"
            and m.role == "concurrent" and terms.known(f"{before.text} with {m.text}")]


def _parts_of_names(extraction: Extraction) -> frozenset[str]:
    """Names read as companions that are the end of the name before them: "X secondary to
    granulomatosis with polyangiitis" splits the cause's name at its "with", and the two
    halves joined again are a name the terminology knows."""
    mentions, terms = extraction.mentions, default_terminology()
    return frozenset(
        m.text for before, m in pairwise(mentions)
        if m.role == "concurrent" and terms.known(f"{before.text} with {m.text}"))
