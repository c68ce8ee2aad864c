"""Alternatives the doctor keeps open beside the answer, written as "X or Y" before the
answer is parsed: "X, though Y cannot be excluded", "torn between X and Y", "X cannot be
distinguished from Y". An answer that keeps a second diagnosis open offers several
(CRAFT-MD's grader, step 1: "more than one possible diagnosis"; docs/grading.md)."""

from __future__ import annotations

import re

from ..terms.kinds import kind
from .name_patterns import INITIAL, NAME, NAME_IN_CLAUSE
from .plans import plan_names_nothing

_KEEP_OPEN = (r"(?:cannot|can\s*not|can't|could\s+not|couldn't|may\s+not|should\s+not|"
              r"shouldn't)\s+be\s+(?:entirely\s+|fully\s+|completely\s+)?(?:excluded|ruled\s+out|"
              r"dismissed|discounted)")
# A hedged name in its clause, with a bracket of its own ("hemolytic anemia due to G6PD
# deficiency (favism)", "EGPA (Churg-Strauss syndrome)")
_HEDGED_NAME = rf"(?:[^.;:,()\[\]\n]|\([^()\n]{{1,60}}\)|{INITIAL}){{2,140}}?"
# Kept open by a denial: "cannot be excluded", "(is) not ruled out", "has not been excluded"
_DENIED_OUT = (rf"(?:{_KEEP_OPEN}|(?:(?:is|are|remains?)\s+)?not\s+(?:yet\s+)?(?:excluded|"
               r"ruled\s+out)"
               r"|(?:has|have)\s+not\s+(?:yet\s+)?been\s+(?:excluded|ruled\s+out))")
# What would settle the hedge, after it ("without a biopsy", "at this stage", "on clinical
# grounds", "until the culture is back"): the disease stays open whatever the condition
# (the paper's step 1: "more than one possible diagnosis"; red team round 7)
_UNTIL = (r"(?:\s+(?:without|until|pending|before|on|at|given|based\s+on|by|with|in|from|"
          r"clinically|yet|here|for\s+now|entirely|completely|definitively|definitely)\b"
          r"[^.;,()\[\]\n]{0,80})?")
# The denied name and its denial, the clause's whole ("W cannot be excluded.")
_DENIED_CLAUSE = rf"({_HEDGED_NAME})\s+{_DENIED_OUT}{_UNTIL}(?=$|[.;,)\]])"
# "cannot exclude W", "we cannot rule out W": the denial before the name
_CANNOT_EXCLUDE = (r"(?:i\s+|we\s+)?(?:cannot|can\s*not|can't|could\s+not|would\s+not|"
                   r"wouldn't|do\s+not|don't|will\s+not|won't)\s+(?:yet\s+)?(?:exclude|"
                   r"rule\s+out|dismiss)")
# A heading that keeps its name open: the hedges above as a line's role ("Can't rule out:",
# "Cannot exclude:", "Not excluded:", "Also possible:", "Possible:", "Consider:", "Also
# consider:"); not "Considered:", "Also considered:", which set a name aside (negations.py)
_OPEN_HEADING = (r"(?:(?:also|still)\s+)?(?:possible|possibly|consider|"
                 r"(?:cannot|can\s*not|can't|could\s+not|do\s+not|don't)\s+(?:yet\s+)?"
                 r"(?:exclude|rule\s+out)|not\s+(?:yet\s+)?(?:excluded|ruled\s+out))"
                 r"(?:\s+(?:diagnos[ie]s|alternatives?))?")
# "X, though Y cannot be excluded", "X; Y is also possible", "X, but cannot rule out Y": the
# doctor keeps Y open, so the answer offers two diagnoses ("X or Y").
_HEDGED = (
    # "X. Y cannot be excluded.", "X; Y has not been ruled out": the same hedge as a sentence
    # or clause of its own after the answer, the whole clause ("T. W1 with W2 and W3 cannot
    # be excluded": not "and W3" alone, as the next pattern would read it)
    re.compile(rf"(?:[.;]|\n)\s*(?:(?:though|although|but|however|yet|while),?\s+)?"
               rf"{_DENIED_CLAUSE}", re.I),
    # The same hedge in brackets after the answer: "T (W cannot be excluded)", "T (W not
    # excluded)", "T [cannot exclude W]" keep W open as the sentence does (round 7)
    re.compile(rf"\s*[(\[]\s*(?:{_DENIED_CLAUSE}|{_CANNOT_EXCLUDE}\s+({NAME_IN_CLAUSE})"
               rf"{_UNTIL})\s*[)\]]", re.I),
    re.compile(rf"[,;]?\s*\b(?:though|although|but|however|yet|while|and)\s+({NAME})\s+"
               rf"{_KEEP_OPEN}", re.I),
    re.compile(rf"[,;]?\s*\b(?:though|although|but|however|and)?\s*{_CANNOT_EXCLUDE}\s+"
               rf"({NAME})(?=$|[.;,])", re.I),
    # "X, but I would also consider Y": a second diagnosis the doctor weighs beside X
    re.compile(rf"[,;]?\s*\b(?:though|although|but|however|and)?\s*(?:i\s+|we\s+)(?:would|"
               rf"should|might|may|could|will)\s+also\s+consider\s+({NAME})(?=$|[.;,])", re.I),
    # "X, but it could also be Y", "X, though Y might also be the cause"
    re.compile(rf"[,;]?\s*\b(?:though|although|but|however)?\s*(?:it|this)\s+(?:could|may|"
               rf"might)\s+also\s+be\s+({NAME_IN_CLAUSE})(?=$|[.;,])", re.I),
    # "X - pending biopsy; could also be Y": the same offer after ";" or ",", its subject left
    # out (red team round 13); the ";" is kept, so that the name's clause is cut from its
    # reasons before "or Y" is joined (statement.py, as for "X - pending biopsy. Or Y.")
    re.compile(rf"(?<=[,;])\s*(?:(?:though|although|but|however),?\s+)?(?:could|may|might)\s+"
               rf"also\s+be\s+(?!(?-i:[a-z]+(?:ed|en))\b(?!['\u2019])|due\b|because\b|that\b)"
               rf"({NAME_IN_CLAUSE})(?=$|[.;,])", re.I),
    # "X, but I'm not sure; it could be Y", "X. It might be Y.": after the answer, a second
    # diagnosis offered without "also" is as open (red team round 12); not a verb ("it could
    # be treated", "caused by"), and not where a comma goes on ("It could be X, yet Y fits")
    re.compile(rf"(?<=\S)\s*[,;.]\s*(?:(?:though|although|but|however|yet),?\s+)?(?:it|this)\s+"
               rf"(?:could|may|might)\s+be\s+(?!(?-i:[a-z]+(?:ed|en))\b(?!['\u2019])|due\b|because\b|that\b|"
               rf"a\s+sign\b)"
               rf"({NAME_IN_CLAUSE})(?=\s*(?:$|[.;!]))", re.I),
    # The name stops at a comma: "X is likely, but Y is also possible" keeps Y open, not X.
    re.compile(rf"[,;.]?\s*\b(?:though|although|but|however)?\s*({_HEDGED_NAME})\s+"
               rf"(?:is|remains)\s+"
               rf"(?:also\s+)?(?:possible|a\s+possibility|in\s+the\s+differential|a\s+"
               rf"consideration|to\s+be\s+considered)(?=$|[.;,])", re.I),
    # "X; Y less likely but possible", "Y unlikely but not excluded": weighed lower, yet kept
    # open, unlike "Y less likely", which sets Y aside (red team round 5)
    re.compile(rf"[,;.]?\s*\b({NAME_IN_CLAUSE})\s+(?:(?:is|remains|seems)\s+)?(?:(?:much|far)\s+)?"
               r"(?:less\s+likely|unlikely|less\s+probable|improbable)\s*,?\s*(?:but|though|yet)\s+"
               r"(?:still\s+|remains\s+|is\s+)?(?:possible|not\s+(?:excluded|ruled\s+out)|"
               r"a\s+possibility)(?=$|[.;,)])", re.I),
    # "T with W on the differential": W is weighed beside T, not found with it (a
    # differential is "more than one possible diagnosis"; red team round 7)
    re.compile(rf"\s+(?:with|and)\s+({NAME_IN_CLAUSE})\s+(?:(?:also|still)\s+)?(?:on|in)\s+the"
               r"\s+differential(?:\s+diagnosis)?(?=$|[.;,)])", re.I),
    # "W cannot be excluded." alone: one possible diagnosis, as "W is possible" alone is
    re.compile(rf"^\s*{_DENIED_CLAUSE}", re.I),
)
# The same hedges as a heading of their own on a line below the answer ("Most likely:
# T\nCan't rule out: W", "Also possible: W", "Consider: W"): the line's role keeps W open, as
# the sentence does (red team round 15: the structure an answer gives its names); not a
# test, a treatment or a step of the plan ("Consider: MRI of the brain")
_OPEN_LINE = re.compile(rf"(?<=\S)[ \t]*\n\s*(?:\d{{1,2}}[.)][ \t]+)?{_OPEN_HEADING}[ \t]*:"
                        rf"[ \t]*({NAME_IN_CLAUSE})(?=\s*(?:$|[.;,\n]))", re.I)


# A plan or a closing line between the answer and a clause that keeps a disease open ("T.
# Please see a dermatologist; W is possible", "T. I recommend a biopsy; W is possible"): the
# plan names nothing, and the clause after ";" keeps W open as it does without the plan
# ("T. W is possible"; CRAFT-MD's grader, step 1: "more than one possible diagnosis").
_PLAN_CLAUSE = re.compile(r"(?:(?<=[.!?])[ \t]+|\n[ \t]*)([^.;!?\n]+);[ \t]+")


def _plan_before_open(text: str, found: re.Match[str]) -> bool:
    """Whether ``found`` is a plan that names nothing, right before a clause that keeps a
    disease open."""
    return plan_names_nothing(found.group(1)) and any(pattern.match(text, found.end())
                                                       for pattern in _HEDGED)


_HEDGE_WORD = re.compile(r"\b(?:cannot|can\s*not|can't|could\s+not|couldn't|may\s+not|"
                         r"would\s+not|wouldn't|do\s+not|don't|will\s+not|won't|"
                         r"should\s+not|shouldn't|possible|possibility|differential|"
                         r"consideration|considered|consider|also|excluded|ruled|"
                         r"(?:could|may|might)\s+be)\b", re.I)


# A hedge that opens the answer, with more after it: W kept open before the answer T, as
# "T. W cannot be excluded." after it (two possible diagnoses, the paper's step 1).
_OPENING_HEDGE = re.compile(rf"^\s*{_DENIED_CLAUSE}\s*[.;]\s*(?=\S)", re.I)


def open_alternatives(text: str) -> str:
    """``text`` with each alternative it keeps open written as "or Y"."""
    # (spaces before it from the first of them: the same match, not a scan of a long run of
    # spaces from each)
    text = re.sub(r"(?:(?<!\s)|(?=\S))\s*\band\s*/\s*or\b\s*", " or ", text, flags=re.I)
    text = _BETWEEN.sub(lambda m: f"{(m.group(1) or m.group(2)).strip()} or ", text)
    text = _APART.sub(lambda m: f"{(m.group(1) or m.group(2)).strip()} or ", text)
    if not _HEDGE_WORD.search(text):
        return text
    text = _PLAN_CLAUSE.sub(lambda m: "" if _plan_before_open(text, m) else m.group(0), text)
    opening = _OPENING_HEDGE.match(text)
    if opening is not None:
        # "W cannot be excluded. T is most likely.": the answer that follows, or W
        text = f"{text[opening.end():].rstrip()} Or {opening.group(1).strip()}."
    for pattern in _HEDGED:
        text = pattern.sub(lambda m: f" or {next(g for g in m.groups() if g).strip()}", text)
    return _OPEN_LINE.sub(lambda m: f" or {m.group(1).strip()}" if _offered(m.group(1))
                          else m.group(), text)


def _offered(name: str) -> bool:
    """Whether a name under a heading that keeps it open is a condition offered, not a test,
    a treatment or a step of the plan ("Consider: MRI of the brain")."""
    return kind(name) == "condition" and not plan_names_nothing(name)


# "X cannot be distinguished from Y (without a biopsy)": the doctor cannot tell the two
# apart, X or Y (docs/grading.md, red team round 4).
_APART = re.compile(rf"(?:^|(?<=[.;:]\s))({NAME})\s+(?:cannot|can\s*not|can't|could\s+not|"
                    r"couldn't)\s+be\s+(?:reliably\s+|clinically\s+|easily\s+)?(?:distinguished|"
                    r"differentiated|told\s+apart|separated)\s+from\s+"
                    # "X and Y are equally likely": X or Y
                    rf"|(?:^|(?<=[.;:]\s))({NAME})\s+and\s+(?=(?:{NAME})\s+(?:are|seem|remain)\s+"
                    r"(?:equally|both)\s+(?:likely|possible|probable))", re.I)

# "I am torn between X and Y", "deciding between X and Y", "could be X, could be Y": X or Y.
_BETWEEN = re.compile(rf"\b(?:(?:i\s+am|i'm|we\s+are)\s+)?(?:torn|deciding|choosing|undecided|"
                      rf"hesitating)\s+between\s+({NAME_IN_CLAUSE})\s+and\s+"
                      rf"|(?:^|(?<=[.;]\s))(?:it\s+)?(?:could|may|might)\s+be\s+({NAME_IN_CLAUSE}),"
                      rf"\s*(?:or\s+)?(?:it\s+)?(?:could|may|might)\s+(?:also\s+)?be\s+", re.I)
