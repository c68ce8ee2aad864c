"""Stage 3 of the grader: decide a single diagnosis, the rows of docs/grading.md's table
that read the relate stage's facts.

docs/grading.md's table ("One main diagnosis decides") has rows of three kinds, held in
three places, applied in this order:

* **the answer's shape** (several diagnoses offered, none, a preface of uncertainty, a
  final answer after a differential, a name excluded, a claim of sameness, a bracket, a
  concurrent finding or complication, a cause): stage 1 reads them (:mod:`.extract`,
  :mod:`.parse`, with :mod:`.companions` and :mod:`.concurrent` saying which companion is
  concurrent); several or none score 0 here, sure;
* **how one name relates to the truth** (same, synonym, a slip, a slip that is another
  known name, a bare head noun, broader, narrower, a fragment, a symptom, another branch):
  stage 2 (:mod:`.relate`, :mod:`.equivalence`, :mod:`.readings`) works them out as facts;
* **the decision** over those facts: :data:`TABLE` below, one function a row, in order,
  then :func:`_elsewhere`; the first row with a verdict decides. The rules ask the
  terminology nothing themselves. They are *sure* of:

  * **0** when the answer names another disease beside its main one (``strict``);
  * **correct** when the statement is an accepted name whole, or the diagnosis is the
    truth, one of its accepted names, or a synonym or broader name that the terminology
    establishes (a family of diseases only under ``paper``, and there only one level above
    the truth: :data:`SUBTYPE_LEVELS`);
  * **0** when it names two of the case's answer choices, or another of them: a case's
    choices are distinct diagnoses by the case author's design;
  * **0** when the diagnosis is a fragment of the true name ("primary" for primary adrenal
    insufficiency), a symptom, or a name the terminology places in another branch;
  * **0** when the truth is named only in a secondary role, or excluded by name ("T
    unlikely; W"), or the answer names what only resembles it ("T-like illness").

Everything else (a partial overlap, a name the terminology does not know, an ICD-10-CM
relation that is as often a sibling as a synonym) is *unsure*: stage 4, the moderator model,
decides when one is configured; otherwise the rules' best guess stands, marked unsure.
:func:`grade_text` is the one entry of stages 1 to 3 for a run, ``agentclinic grade`` and
the tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from ...core.case import Case
from ...core.roles import OFFLINE as OFFLINE  # ``decided_by`` of a verdict the rules were sure of
from ..reading.extract import extract
from ..reading.parse import Extraction, Mention
from ..terms.kinds import kind
from ..terms.relation import RelationKind
from .relate import NameRelation, Related

#: ``decided_by`` of a verdict the rules were unsure of, with no model to ask.
OFFLINE_UNSURE = "offline (unsure)"


@dataclass(frozen=True)
class Decision:
    """The rules' verdict on an extraction; ``sure`` False leaves it to a model."""

    correct: bool
    sure: bool
    reason: str
    #: How the diagnosis relates to the truth (None when no single diagnosis was named).
    relation: RelationKind | None = None
    #: A broader name of a family of diseases (the strict policy rejects it).
    family: bool = False


#: How broader answers are graded: ``strict`` (the default) accepts a broader name only when
#: it names one disease with its variants; ``paper`` applies CRAFT-MD's rule literally (any
#: broader name counts), for replicating the paper.
Policy = Literal["strict", "paper"]
POLICIES: tuple[Policy, ...] = ("strict", "paper")


@dataclass
class _Answer:
    """The relate stage's facts of one answer (:class:`.relate.Related`) and the policy."""

    facts: Related
    policy: Policy

    @property
    def name(self) -> str:
        return self.facts.name

    @cached_property
    def best(self) -> Decision:
        """How the main diagnosis (or a name restating it) relates to the truth: the best of
        its matches with the accepted names (under strict, one that is no family first)."""
        strict = self.policy == "strict"
        # under paper, a name the answer gives its diagnosis in brackets or as "also known
        # as" is compared as the main name is, sure or not (CRAFT-MD's step 1 returned it:
        # "kidney stone" of "ureteral colic (kidney stone)"; its step 2 compared it)
        glosses = () if strict else self.facts.glosses
        return max((_match(self.facts.name, m, self.policy)
                    for m in (*self.facts.matches, *glosses)),
                   key=lambda d: (d.correct and not (d.family and strict), d.correct, d.sure))


Row = Callable[[_Answer], "Decision | None"]


def _beside(a: _Answer) -> Decision | None:
    # CRAFT-MD's grader returns the main diagnosis when a concurrent one accompanies it, and
    # reads "multiple" only in alternatives (``paper``); ``strict`` reads a disease beside
    # the main one that the terminology does not link to it as a second diagnosis.
    beside = a.facts.beside if a.policy == "strict" else None
    return None if beside is None else Decision(
        False, True, f"names another disease beside the main diagnosis: {beside!r} (several "
        "diagnoses)", "different")


def _resemblance(a: _Answer) -> Decision | None:
    # "psoriasis-like illness": what looks like the truth is not the truth (a clinical naming
    # convention: "flu-like illness" is no influenza)
    word = a.facts.resembles
    return None if word is None else Decision(
        False, True, f"{a.name!r} names what resembles {word!r}, not the disease", "different")


def _index_order(a: _Answer) -> Decision | None:
    # "Gastritis, eosinophilic": the truth as an index writes it, its main term first and its
    # modifiers after a comma (ICD-10-CM's alphabetic index, MeSH's inverted headings), is
    # the truth; read at the comma it was the bare head beside a note. Read so, a sibling is
    # that sibling, not the head's family ("Meningioma, anterior cranial fossa" for middle
    # cranial fossa meningioma: :attr:`.Related.index_apart`). "T, site", "T, qualifier"
    # and "T, W" for T read as before: the truth is within the reading.
    named = a.facts.index_named
    if named is not None:
        return Decision(True, True, f"the statement names {named!r}, its main term before a "
                        "comma", "same")
    reading = a.facts.index_reading
    if reading is None or not a.facts.index_apart:
        return None
    decided = decide(Extraction("single", reading, (Mention(reading, "main"),),
                                statement=reading), a.facts.accepted, a.facts.choices, a.policy)
    return replace(decided, reason=f"read in an index's order, {reading!r}: {decided.reason}")


def _whole_name(a: _Answer) -> Decision | None:
    named = a.facts.named
    if named is None or len(a.facts.chosen) > 1:
        return None
    return Decision(True, True, f"the statement names {named!r}", "same")


def _two_choices(a: _Answer) -> Decision | None:
    # The case's choices are distinct diagnoses: naming two of them commits to neither.
    chosen = a.facts.chosen
    if len(chosen) < 2 or _truth_named_in_paper_role(a):
        return None
    return Decision(
        False, True, f"names {len(chosen)} of the case's answer choices: "
        f"{', '.join(map(repr, chosen))}", "different")


def _truth_named_in_paper_role(a: _Answer) -> bool:
    """Under ``paper``: the truth itself (or a synonym the terminology is sure of) is named
    as the main diagnosis or in a role CRAFT-MD's grader compared (:data:`PAPER_ROLES`).
    Its step 2 saw the correct answer alone ("**Query Diagnosis 1**: <insert correct
    answer>"), never the case's choices, and its step 1 returned the main diagnosis with its
    concurrent ones: that the answer also names another choice beside the truth does not
    make it two diagnoses there."""
    best = a.best
    return (a.policy == "paper" and best.correct and best.sure
            and best.relation in ("same", "synonym"))


def _bare_head(a: _Answer) -> Decision | None:
    # "cyst" for a branchial cleft cyst, "colitis" for ulcerative colitis: the head noun
    # alone names the family the truth's words of kind narrow (guard rail of issue 31),
    # unless a source states it is a synonym, or it is the one disease with its variants
    # above the truth (:data:`.by_words.FAMILY_BREADTH`) and ICD-10-CM codes the truth
    # under it, no code of its own ("melanoma" for superficial spreading melanoma, which
    # the dermatologists accepted; not "cholangitis" for primary sclerosing cholangitis,
    # K83.01); the words alone ("adenocarcinoma" for pancreatic adenocarcinoma) never do
    best = a.best
    if a.policy != "strict" or not a.facts.bare_head or (
            best.correct and best.sure and not best.family
            and best.relation in ("synonym", "broader") and a.facts.head_of_variants):
        return None
    return Decision(False, True, f"{a.name!r} is the true name's head noun alone, a family "
                    "word, not the disease (strict policy)", "broader", True)


def _ambiguous_short_form(a: _Answer) -> Decision | None:
    # an abbreviation the sources give for several diseases is not read toward the truth
    # (guard rail of issue 31): which disease it names the answer does not say, unless it
    # writes the long form in a bracket ("PSC (primary sclerosing cholangitis)"). Under
    # paper a truth named whole beside it ("ADHD with possible conduct disorder") is
    # compared as any concurrent name is, not read through the letters (red team round 20)
    if not a.facts.ambiguous_short_form or (a.policy == "paper" and any(
            m.role in PAPER_ROLES and m.judged.correct and m.judged.sure
            for m in a.facts.matches)):
        return None
    return Decision(False, True, f"{a.name!r} is an abbreviation the sources give for more "
                    "than one disease", "different")


def _family(a: _Answer) -> Decision | None:
    best = a.best
    if not (best.correct and best.family and a.policy == "strict"):
        return None
    # "arthritis" for rheumatoid arthritis: the family, not the disease
    return replace(best, correct=False, sure=True, reason=f"{best.reason}: a family of "
                   "diseases above the truth, not one disease with its variants (strict policy)")


def _no_subtype(a: _Answer) -> Decision | None:
    # under paper, a broader name too far above the truth for it to be a subtype
    # (:data:`SUBTYPE_LEVELS`): sure, so that no moderator is asked to accept it
    best = a.best
    return best if best.relation == "broader" and not best.correct else None


def _same_or_synonym(a: _Answer) -> Decision | None:
    best = a.best
    return best if best.correct and best.sure and best.relation != "broader" else None


def _other_choice(a: _Answer) -> Decision | None:
    # The case's author offered the other choices as other diagnoses: a hierarchy placing
    # one above the truth ("gestational hypertension" over preeclampsia) does not make it right.
    found = a.facts.distractor
    return None if found is None else Decision(
        False, True, f"names another answer choice of the case: {found!r}", "different")


def _broader(a: _Answer) -> Decision | None:
    return a.best if a.best.correct and a.best.sure else None


def _fragment_of_truth(a: _Answer) -> Decision | None:
    return Decision(False, True, f"{a.name!r} is a fragment of the true name, not a condition "
                    "of its own", "different") if a.facts.fragment else None


def _likely_right(a: _Answer) -> Decision | None:
    return a.best if a.best.correct else None  # unsure: the moderator decides


def _symptom(a: _Answer) -> Decision | None:
    return Decision(False, True, f"{a.name!r} is a symptom or a sign, not a diagnosis",
                    "different") if a.facts.symptom else None


def _elsewhere(a: _Answer) -> Decision:
    """Wrong; sure when the terminology places the name (or the statement known whole) in
    another branch than the truth, else unsure."""
    best = a.best
    apart = (best.sure or a.facts.placed != a.name) and a.facts.placed_apart
    # the truth named only beside, after or as the cause of the main diagnosis: it never
    # scores, whatever the main name is, so no moderator is asked about that name
    secondary = any(r.judged.correct and r.judged.sure and not r.primary
                    for r in a.facts.matches)
    # the truth excluded by name ("T unlikely; W favored"): the answer says it is not T, so
    # no moderator is asked whether what it gives instead is T
    return Decision(False, apart or secondary or a.facts.truth_excluded, best.reason,
                    best.relation)


#: The table of docs/grading.md, in order: the first row with a verdict decides.
TABLE: tuple[Row, ...] = (_index_order, _beside, _bare_head, _ambiguous_short_form, _whole_name,
                          _two_choices, _resemblance, _family, _no_subtype, _same_or_synonym,
                          _other_choice, _broader, _fragment_of_truth, _likely_right,
                          _symptom)


def decide(extraction: Extraction, accepted: Sequence[str],
           choices: Sequence[str] = (), policy: Policy = "strict") -> Decision:
    """Judge ``extraction`` against the case's accepted names and its answer choices: several
    diagnoses or none score 0; otherwise the rows of :data:`TABLE` in order (another disease
    beside the main one, the statement naming the truth whole, the case's choices, a name
    that only resembles the truth ("T-like illness"), a family, under ``paper`` a family too
    far above the truth to be its subtype, the same name or a synonym, another choice, a
    broader name, a fragment, a symptom), and last :func:`_elsewhere`, each reading the
    facts the relate stage (:class:`.relate.Related`) works out. The truth in a secondary
    role, or excluded by name, never scores (:func:`_match`, :func:`_elsewhere`)."""
    if extraction.category != "single":
        return Decision(False, True, f"{extraction.category}: {extraction.reason}")
    answer = _Answer(Related(extraction, accepted, choices), policy)
    return next((d for row in TABLE for d in [row(answer)] if d is not None),
                None) or _elsewhere(answer)


#: Roles a name may match in under the ``paper`` policy: CRAFT-MD's grader compared every
#: concurrent name it returned with the truth (not a cause, not an alternative), and took
#: another name the answer gives its diagnosis as that diagnosis ("claimed").
PAPER_ROLES = frozenset({"concurrent", "listed", "beside", "after", "complication",
                         "comorbid", "claimed"})


#: How far above the truth any broader name counts under ``paper``: CRAFT-MD's step 2 says
#: "if Diagnosis 1 is a subtype of Diagnosis 2 respond with yes", and its example is a family
#: one level up ("lymphoma", 27 concepts below it, for Hodgkin's lymphoma). Higher up, a
#: broader name counts only as under strict, as one disease with its variants (at most
#: :data:`.by_words.FAMILY_BREADTH` concepts below it, :data:`.by_words.FAMILY_LEVELS`
#: levels up: "melanoma" for superficial spreading melanoma); a family two levels up or more
#: ("anemia" for iron deficiency anemia, "leukemia" for acute promyelocytic leukemia) names a
#: class of the truth's class, not the disease the truth is a subtype of.
SUBTYPE_LEVELS = 1


def _match(main: str, r: NameRelation, policy: Policy = "strict") -> Decision:
    """The decision one match says: the truth named only in a secondary role is wrong (under
    ``paper``, a concurrent name may match)."""
    if not r.role:
        return Decision(False, True, r.judged.reason, "different")
    if not r.primary and not (policy == "paper" and r.role in PAPER_ROLES):
        return Decision(False, True, f"the truth is named only in a secondary role "
                        f"({r.role} {r.name!r}); the main diagnosis is {main!r}", "different")
    j = r.judged
    reason = f"{r.role} {r.name!r}: {j.relation} ({j.reason})"
    if (policy == "paper" and j.relation == "broader" and j.family
            and (j.height or 0) > SUBTYPE_LEVELS):
        # the paper's "subtype": a family only SUBTYPE_LEVELS above the truth
        return Decision(False, True, f"{reason}: the truth lies {j.height} levels below it, "
                        "no subtype of it (paper policy)", "broader", True)
    return Decision(j.correct, j.sure, reason, j.relation, j.family)


def asks_for_a_condition(case: Case) -> bool:
    """Whether the case asks for a diagnosis: not when its answer or one of its choices is a
    test, treatment, drug or finding (some NEJM questions ask for those, and then a test or a
    treatment is an answer, not "no diagnosis")."""
    return conditions_asked(case.diagnosis, case.choices)


def conditions_asked(truth: str, choices: Sequence[str] = ()) -> bool:
    """Whether a question with this correct answer and these choices asks for a condition
    (see :func:`asks_for_a_condition`)."""
    return all(kind(name) == "condition" for name in (truth, *choices))


def grade_text(answer: str, accepted: Sequence[str], choices: Sequence[str] = (),
               policy: Policy = "strict", *,
               diagnosis_asked: bool | None = None) -> tuple[Extraction, Decision]:
    """The one grading entry of a free-text answer, for a run and for ``agentclinic grade``
    alike: extract and decide.

    What the question asked decides what may be an answer. CRAFT-MD asks every doctor for
    a diagnosis and its grader was prompted to "return the ... diagnosis name", else "None"
    (``diagnosis_asked=True``: its runs and ``agentclinic grade``): a test, treatment or drug
    then names no diagnosis, even where the dataset's answer is one. Left ``None``, the
    question is read off the truth and the choices (:func:`conditions_asked`): an
    AgentClinic NEJM question whose answer is a test or a treatment takes one as its answer.
    Under ``paper`` only a condition is ever an answer, as the paper's grader was prompted."""
    asked = conditions_asked(accepted[0], choices) if diagnosis_asked is None \
        else diagnosis_asked
    conditions_only = policy == "paper" or asked
    extraction = extract(answer, conditions_only=conditions_only)
    return extraction, decide(extraction, accepted, choices, policy)
