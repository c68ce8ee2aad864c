"""Names the answer excludes: "not X", "X ruled out", "X is unlikely", "W was considered,
but T". A name the doctor excludes is not a name the doctor gives (the paper's step 1
extracts the diagnosis given); :mod:`.extract` drops them before the statement is read.
"""

from __future__ import annotations

import re

from .name_patterns import NAME, NAME_ALONE, NAME_IN_CLAUSE, NAMES_AFTER_DASH

__all__ = ["drop_negations"]

# --- negation ---------------------------------------------------------------------------------

# Whole clauses that only exclude a name; each pattern captures the excluded name.
# What the doctor weighed: "W was considered".
_WEIGHED = r"(?:also\s+|initially\s+|first\s+)?(?:considered|entertained|raised)"
# The name weighed may carry its bracket ("eosinophilic granulomatosis with polyangiitis
# (Churg-Strauss syndrome) was considered"): set aside whole.
# A bracket after a name that is set aside with it ("X (ABBR) was excluded"; round 10).
_ITS_BRACKET = r"(?:\s*\([^()\n]{1,60}\))?"
_WEIGHED_NAME = rf"{NAME_IN_CLAUSE}{_ITS_BRACKET}"
# Before "excluded" or "ruled out", words that deny it ("W cannot be excluded", "W has not
# been ruled out", "W not yet excluded"): the name is kept open, not set aside
# (reading/hedges.py; red team rounds 5 and 6)
_NOT_DENIED = (r"(?<!\bnot\s)(?<!\bcannot\sbe\s)(?<!\bnot\sbe\s)(?<!n't\sbe\s)"
               r"(?<!\bnot\sbeen\s)(?<!\bnot\syet\s)(?<!\bentirely\s)(?<!\bfully\s)"
               r"(?<!\bcompletely\s)"
               # "W (to be ruled out)": still to rule out, so kept open (red team round 14)
               r"(?<!\bto\sbe\s)(?<!\byet\sto\sbe\s)")
_RELATIVE = (r"(?:mother|father|parents?|sister|brother|siblings?|son|daughter|twin|aunt|"
             r"uncle|cousin|grand(?:mother|father|parents?)|(?:maternal|paternal)\s+"
             r"(?:aunt|uncle|grand(?:mother|father)))")
# A heading that sets its name aside as "Ruled out:" does ("Rejected: W", "Not: W",
# "Considered: W"), or gives a history, known and not diagnosed now ("Previous diagnosis:
# W", "Past history: W"; docs/grading.md, *A heading of its own*)
_ASIDE_LABEL = (r"(?:[*_]*\s*)(?:rejected|discarded|eliminated|not\s+supported|not|incorrect|"
                r"wrong|improbable|doubtful|less\s+favou?red|disfavou?red|deprioriti[sz]ed|"
                r"(?:also\s+)?considered|"
                r"(?:(?:previous|prior|past|old|former|earlier)\s+(?:medical\s+)?"
                r"(?:diagnos[ie]s|history|hx)|(?:past\s+)?medical\s+history|history|pmh|hx))"
                r"[*_]*")
_NEGATED_CLAUSES = (
    re.compile(rf"^\s*(?:it\s+is\s+|it's\s+|this\s+is\s+|definitely\s+|certainly\s+)?"
               rf"(?:not|no)\s+(?:a\s+|an\s+)?({NAME})\s*$", re.I),
    # "You do not have X" (then "; you have Y"): denied, as "not X" is (red team round 8)
    re.compile(rf"^\s*(?:you|the\s+patient|he|she|your\s+child)\s+(?:do(?:es)?\s+not|don't|"
               rf"doesn't)\s+have\s+(?:a\s+|an\s+)?({NAME})\s*$", re.I),
    # "Likely not X, as the symptoms do not fit": a reason may follow the excluded name
    re.compile(rf"^\s*(?:(?:most\s+)?(?:likely|probably)\s+)?not\s+(?:a\s+|an\s+)?"
               rf"({NAME_IN_CLAUSE}),\s*(?:as|because|since|given)\b.*$", re.I),
    re.compile(rf"^\s*(?:i\s+)?(?:do\s+not|don't)\s+(?:think|believe)\s+(?:it\s+is\s+|it's\s+"
               rf"|this\s+is\s+)?({NAME})\s*$", re.I),
    # "X was considered" (then "however, Y"): what was weighed, set aside
    re.compile(rf"^\s*({_WEIGHED_NAME})\s+(?:was|were|has\s+been|had\s+been)\s+{_WEIGHED}\s*$",
               re.I),
    # "X is unlikely", "X - unlikely", "X: ruled out"; the name with its bracket ("X (ABBR)
    # was excluded by imaging": an abbreviation never turns off a negation; round 10)
    re.compile(rf"^\s*({NAME}{_ITS_BRACKET})(?:\s+(?:is|has\s+been|was|can\s+be|"
               rf"seems?)\s+(?:\w+\s+)?"
               rf"|\s*[-:,]\s*(?:(?:very|highly|much\s+less|less)\s+)?)"
               # "not excluded" keeps the name open (red team round 5)
               rf"{_NOT_DENIED}(?:ruled\s+out|excluded|unlikely|not\s+likely|not\s+the\s+diagnosis|"
               r"not\s+favou?red|disfavou?red"
               # "T is a red herring": a finding or a name that misleads, set aside (the
               # idiom of clinical teaching; red team round 13)
               r"|red\s+herring|distractor)"
               # with its grounds ("X is unlikely given the normal examination", "X was ruled
               # out by the biopsy": red team round 6)
               r"(?:\s+(?:given|because|as|since|by|on|with|due\s+to|based\s+on)\b.*)?\s*$",
               re.I),
    # "T cannot be ruled in": the evidence does not establish T, so the answer gives it as no
    # diagnosis, as a name weighed and set aside (red team round 11)
    re.compile(rf"^\s*({NAME}{_ITS_BRACKET})\s+(?:cannot|can't|could\s+not)\s+"
               rf"(?:yet\s+)?be\s+ruled\s+in\b(?:\s+(?:given|because|as|since|by|on|with|"
               rf"without|based\s+on)\b.*)?\s*$", re.I),
    # "T; W less likely", "W unlikely; T": a name weighed and set aside, as a list item or a
    # table row marked "less likely" is (docs/grading.md, red team round 4)
    re.compile(rf"^\s*({NAME_ALONE})\s+(?:(?:is|are|seems?)\s+)?(?:(?:much|far|considerably|"
               rf"very|highly)\s+)?{_NOT_DENIED}(?:less\s+likely|unlikely|excluded|ruled\s+out)\s*$",
               re.I),
    # "T. Why not W? ...": a question the answer asks itself to set W aside
    re.compile(rf"^\s*why\s+not\s+(?:a\s+|an\s+)?({NAME})\s*$", re.I),
    # "Ruled out: W", "Excluding W"; and "Less likely: W" after the answer, a label (its colon
    # needed) that sets its name aside as "W less likely" does (red team round 13;
    # "Diagnosis: W\nLess likely: T" is graded on W)
    re.compile(rf"^\s*(?:(?:ruled\s+out|excluded|excluding|exclude)\s*:?|(?:less\s+likely|"
               rf"unlikely|not\s+favou?red|{_ASIDE_LABEL})\s*:)\s*({NAME}{_ITS_BRACKET})\s*$",
               re.I),
    # "Unlikely to be T": weighed and set aside, as "T is unlikely" (red team round 13)
    re.compile(rf"^\s*(?:(?:it|this)\s+is\s+|it's\s+)?(?:unlikely|not\s+likely)\s+to\s+be\s+"
               rf"(?:a\s+|an\s+)?({NAME})\s*$", re.I),
    # "Family history of T": a relative's disease, no diagnosis of the patient, as "Her
    # mother has T" (clinical convention; red team round 13: the history alone)
    re.compile(rf"^\s*(?:(?:a|positive|strong|known)\s+)?family\s+history\s*"
               rf"(?:of|for|:)\s*({NAME})\s*$", re.I),
    # "Low suspicion for X", "low likelihood of X": weighed and set aside, as "X is unlikely"
    # (red team round 9)
    re.compile(rf"^\s*(?:(?:a|very|only)\s+)?low\s+(?:clinical\s+|index\s+of\s+|pre-?test\s+)?"
               rf"(?:suspicion|likelihood|probability)\s+(?:for|of)\s+({NAME})\s*$", re.I),
    # "X (not favored)", "X (unlikely)": a bracket that sets its name aside, as "X - unlikely"
    re.compile(rf"^\s*({_WEIGHED_NAME})\s*[(\[]\s*(?:not\s+favou?red|disfavou?red|unlikely|less\s+likely|"
               rf"{_NOT_DENIED}(?:ruled\s+out|excluded))\s*[)\]]\s*$", re.I),
    # "Her mother has X", "His father had X": a relative's disease, the family history
    # (clinical convention: a risk for the patient, no diagnosis of the patient; red team
    # round 9, as "Family history of X" since round 8)
    re.compile(rf"^\s*(?:(?:his|her|their|the\s+patient's|your|my)\s+)?(?:{_RELATIVE})\s+"
               rf"(?:has|had|have|was\s+diagnosed\s+with|died\s+(?:of|from)|with|suffers\s+from|"
               rf"suffered\s+from)\s+(?:a\s+history\s+of\s+)?(?:a\s+|an\s+)?({NAME})\s*$", re.I),
    re.compile(rf"^\s*(?:the\s+|my\s+)?(?:\w+\s+){{0,2}}diagnosis\s+is\s+not\s+({NAME})\s*$",
               re.I),
)
# Asides inside a clause that exclude a name: "(X ruled out)", ", not X", "rather than X".
_NEGATED_ASIDES = (
    # "T (W was considered, but T fits better)": the sentence "W was considered, but T" in
    # the answer's bracket sets W aside as it does on its own (one reader for both; red team
    # round 19); the rest of the bracket only restates the answer
    re.compile(rf"\(\s*({NAME_IN_CLAUSE})\s+(?:was|were|has\s+been|had\s+been)\s+"
               rf"{_WEIGHED}(?:\s*[,;]?\s*(?:but|however)\b[^()\n]{{0,200}})?\s*\)", re.I),
    # "(rather than X)", "(instead of X)": the bracket of ", rather than X" (round 13); not
    # "(not yet excluded)", which keeps the name before it open (roles.kept_open, round 16)
    # "(favoured over X)", "(preferred to X)", "(more likely than X)": the bracket of "T
    # favored over W" and "T more likely than W" (round 17)
    re.compile(r"\(\s*(?:not|no|rather\s+than|instead\s+of|(?:favou?red|preferred)\s+(?:over|to)|"
               r"(?:much\s+|far\s+)?more\s+likely\s+than)\s+"
               rf"(?!(?:yet\s+)?(?:excluded|ruled\s+out)\s*\))({NAME})\)"
               rf"|\(\s*({NAME})\s+{_NOT_DENIED}(?:ruled\s+out|"
               rf"excluded|unlikely)\s*\)|\(\s*(?:ruled\s+out|excluded|excluding)\s*:?\s*({NAME})\)",
               re.I),
    re.compile(rf"\s*,?\s*(?:rather\s+than|(?:and|but)\s+not|,\s*not|instead\s+of)\s+"
               rf"({NAME})(?=$|[.;,])", re.I),
    # "T - W and W2 are less likely": names set aside after a dash (docs/grading.md, round 4)
    re.compile(rf"\s+-\s+({NAMES_AFTER_DASH})\s+(?:(?:is|are|seems?|remains?)\s+)?(?:(?:much|far)\s+)?"
               rf"(?:less\s+likely|unlikely|not\s+likely|ruled\s+out|excluded)(?=$|[.;,])", re.I),
    # "W favored over T", "W preferred to T": T weighed and set aside
    re.compile(rf"\s+(?:is\s+)?(?:favou?red|preferred)\s+(?:over|to)\s+({NAME})(?=$|[.;,])",
               re.I),
    # ", without complications", ", with no evidence of W": what the patient does not have
    # (after a comma only: "preeclampsia without severe features" is one name)
    re.compile(rf",\s*(?:without|with\s+no|no)\s+(?:(?:evidence|signs?|features?)\s+of\s+)?"
               rf"({NAME})(?=$|[.;,])", re.I),
)
_NOT_BUT = re.compile(rf"\s*(?:it\s+is\s+|it's\s+|this\s+is\s+)?not\s+(?:a\s+|an\s+)?"
                      rf"({_WEIGHED_NAME})(?:,?\s+but\s+(?:rather\s+|instead\s+)?|\s+-\s+)",
                      re.I)
# "... but the findings favour T": the evidence, the subject of the contrast, chooses T, as
# "but T fits better" does (red team round 19)
_EVIDENCE_FAVOURS = (r"(?:(?:the\s+)?(?:clinical\s+)?(?:findings|picture|presentation|evidence|"
                     r"history|examination|work-?up)\s+(?:(?:strongly|clearly|better|more)\s+)?"
                     r"(?:favou?rs?|supports?|points?\s+(?:to|towards)|suggests?)\s+)?")
# "W was considered, but T fits better": what the doctor weighed and set aside is no answer.
# Also "Although W was considered, T ...", "I considered W, but T ...", and "W was considered;
# however, T ..." (the clause "W was considered" alone sets W aside: see _NEGATED_CLAUSES).
_CONSIDERED_BUT = re.compile(
    rf"\s*(?:({_WEIGHED_NAME})\s+(?:was|were|is|has\s+been|had\s+been)\s+{_WEIGHED}"
    # a dash sets the contrast off as a comma does ("W was considered - but T", red team
    # round 19)
    r"\s*(?:,|\s[-\u2013\u2014]{1,3})?\s*(?:but|however,?)\s+(?:rather\s+|instead\s+)?"
    rf"{_EVIDENCE_FAVOURS}"
    rf"|(?:although|though|while|whilst)\s+({_WEIGHED_NAME})\s+(?:was|were|has\s+been|"
    rf"had\s+been)\s+{_WEIGHED}\s*,\s*"
    rf"|(?:i|we)\s+(?:have\s+)?{_WEIGHED}\s+({_WEIGHED_NAME})\s*,?\s*but\s+"
    r"(?:rather\s+|instead\s+)?"
    # "W was my initial impression, but T is more likely": a first thought, set aside
    rf"|({_WEIGHED_NAME})\s+(?:was|were)\s+(?:my|our|the)\s+(?:initial|first|original|"
    r"early)\s+(?:impression|thought|suspicion|diagnosis|guess|concern)\s*,?\s*"
    r"(?:but|however,?)\s+(?:rather\s+|instead\s+|now\s+)?)", re.I)
# "Concern for T; however, W is favoured": a suspicion the next clause turns from, as "T was
# considered; however, W" (red team round 13). Alone, "Concern for T" is a suspicion of T.
_CONCERN = re.compile(rf"^\s*(?:(?:an?|some|initial|early)\s+)?(?:concern|suspicion)\s+"
                      rf"(?:for|of)\s+(?:a\s+|an\s+)?({_WEIGHED_NAME})\s*$", re.I)
_CLAUSE = re.compile(r"(?<=[;!?])\s+|(?<=\.)(?<!\b[A-Z]\.)\s+|(?<=\b[A-Z]\.)(?!\s+[a-z])\s+|\n+")
_INSTEAD = re.compile(r"^\s*(?:however|instead|rather|but)\b\s*,?\s*", re.I)
_NEGATION_WORD = re.compile(r"\b(?:not|no|don't|doesn't|ruled|exclud\w*|unlikely|rather|instead|"
                            r"considered|entertained|raised|without|(?:less|more)\s+likely|why|rejected|"
                            r"discarded|eliminated|incorrect|wrong|improbable|doubtful|"
                            r"disfavou?red|deprioriti[sz]ed|history|hx|pmh|previous|prior|past|"
                            r"old|former|earlier|"
                            r"family|herring|distractor|concern|"
                            r"favou?red|preferred|suspicion|likelihood|probability|mother|father|parents?|"
                            r"sister|brother|siblings?|son|daughter|twin|aunt|uncle|cousin|"
                            r"grand\w+|"
                            r"(?:initial|first|original|early)\s+(?:impression|thought|suspicion|"
                            r"diagnosis|guess|concern))\b",
                            re.I)


# "T vs. W - favour T", "W vs T; leaning towards T", "T vs W (favour T)": two names weighed,
# then one of them chosen: the answer is that one, the other set aside, as "T (favoured over
# W)" reads (round 17; "Favor T over W", round 4; red team round 18). A third name chosen,
# or none of the two, is left as written (an alternative). (From a line's start or a
# label's colon only: one try each.)
_CHOSEN_OF_TWO = re.compile(
    rf"(?:^|(?<=:))([ \t]*)({NAME_IN_CLAUSE})\s+(?:vs\.?|versus)\s+({NAME_IN_CLAUSE})[ \t]*"
    r"(?:[,;:.(]|[ \t]-+)[ \t]*(?:(?:i|we)[ \t]+(?:would[ \t]+)?)?(?:favou?r(?:ing|s)?|"
    r"lean(?:ing|s)?[ \t]+towards?|prefer(?:ring|s)?)[ \t]+"
    rf"(?:the[ \t]+(former|latter)|({NAME_IN_CLAUSE}))[ \t]*\)?[ \t]*(?=$|[.;\n])", re.I | re.M)
_CHOOSING = re.compile(r"\b(?:favou?r|lean|prefer)", re.I)


def _chosen(found: re.Match[str]) -> str:
    """The clause of two names weighed and one chosen, as the chosen name "favoured over"
    the other; the clause as written where the choice is neither of them."""
    first, second = found.group(2).strip(), found.group(3).strip()
    said = (found.group(4) or "").lower()
    choice = (found.group(5) or "").strip().casefold()
    if said == "former" or choice == first.casefold():
        return f"{found.group(1)}{first} (favoured over {second})"
    if said == "latter" or choice == second.casefold():
        return f"{found.group(1)}{second} (favoured over {first})"
    return found.group()


def drop_negations(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` without the names it excludes, and those names."""
    if _CHOOSING.search(text):
        text = _CHOSEN_OF_TWO.sub(_chosen, text)
    if not _NEGATION_WORD.search(text):
        return text, ()
    excluded: list[str] = []
    clauses: list[str] = []
    # a clause kept after a line break stays on a line of its own ("T\nW cannot be
    # excluded" is no name "T W")
    breaks = ["\n" if "\n" in found.group(0) else " " for found in _CLAUSE.finditer(text)]
    parts = _CLAUSE.split(text)
    for at, clause in enumerate(parts):
        if clauses and at and breaks[at - 1] == "\n" and not clauses[-1].endswith("\n"):
            clauses[-1] += "\n"
        if excluded and not clauses:  # "W was considered; however, T": T answers
            clause = _INSTEAD.sub("", clause)
        instead = _NOT_BUT.match(clause) or _CONSIDERED_BUT.match(clause)
        if instead is not None:  # "Not X, but Y", "X was considered, but Y": Y answers
            excluded.append(next(g for g in instead.groups() if g).strip())
            clause = clause[instead.end():]
        bare = clause.strip().rstrip(".;!? ")
        turned = _CONCERN.match(bare) if at + 1 < len(parts) and _INSTEAD.match(
            parts[at + 1]) else None
        whole = turned or next((m for p in _NEGATED_CLAUSES for m in [p.match(bare)] if m),
                               None)
        if whole is not None:
            excluded.append(whole.group(1).strip())
            continue
        for pattern in _NEGATED_ASIDES:
            for found in pattern.finditer(clause):
                excluded.extend(g.strip() for g in found.groups() if g)
            clause = pattern.sub("", clause)
        clauses.append(clause)
    kept = [c for c in clauses if c.strip()]
    return "".join(c if c.endswith("\n") or i == len(kept) - 1 else c + " "
                   for i, c in enumerate(kept)).strip(), tuple(excluded)
