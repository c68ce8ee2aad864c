"""How the names of a diagnostic statement are joined, as regular expressions: an
alternative ("or", "vs", "/", a rank sign), a cause ("due to"), a refinement, a concurrent
condition, a complication, a hedge, an alias, an aside. :mod:`.parse` sorts a statement's
names by these joins (docs/grading.md, *Main and concurrent*)."""

from __future__ import annotations

import re

from .context import CONFIDENCE

HEDGE = (r"(?:most\s+|more\s+|very\s+|less\s+)?(?:likely|probably|possibly|possible|probable|"
         r"perhaps|maybe|potentially|potential|suspected)")
# "X or Y", "X vs Y", "X / Y", "X | Y" (table cells), "X, alternatively Y", "X > Y" (ranked)
# (a bar before how sure the writer is, "X | confidence: high", is a field of the same row,
# no alternative: :mod:`.context` cuts it as after a colon; red team round 19)
ALTERNATIVE = re.compile(rf"\s+(?:or|versus|vs\.?|and/or|nor)\s+|\s+/\s+|\s*\|(?!\s*{CONFIDENCE})"
                         r"\s*|\s+>\s+|[.,;]?\s+alternatively\b[\s,:]*", re.I)
CAUSE = re.compile(
    rf"\s*,?\s*(?:{HEDGE}\s+)?\b(?:due\s+to|secondary\s+to|caused\s+by|induced\s+by|"
    r"resulting\s+from|as\s+a\s+result\s+of|because\s+of|attributable\s+to|related\s+to|"
    r"associated\s+with|in\s+the\s+(?:setting|context)\s+of|triggered\s+by|precipitated\s+by|"
    r"following|after|from|exacerbated\s+by|complicating|leading\s+to|causing|"
    # "melanoma arising in a congenital nevus": the lesion it arose in, not a second one
    r"arising\s+(?:in|from|within|on)|on\s+a\s+background\s+of|superimposed\s+on|"
    # "erythema migrans, indicative of Lyme disease": what the diagnosis points to
    r"indicative\s+of|characteristic\s+of|pathognomonic\s+(?:of|for))\b", re.I)
# The heads of a look-alike's name, written open as the sources also write it ("Seckel like
# syndrome", MONDO; "influenza like illness"): "X like syndrome" is "X-like syndrome", one
# name, not "X, like syndrome" (red team round 18)
LIKE_HEAD = r"(?:syndromes?|illness|disease|disorders?|reactions?|eruptions?|phenotype)\b"
# "W ?T": a clinician's query mark before a name, "possibly T" (docs/grading.md, round 4)
QUERY = r"(?<!\S)\?(?=[^\W\d_])"
REFINE = re.compile(
    rf",?\s*(?:{QUERY}|(?<![-\w])(?:{HEDGE}|suggestive\s+of|suspicious\s+for|concerning\s+for|"
    r"consider(?:ing)?|such\s+as|e\.g\.?|for\s+example|including|specifically|particularly|"
    rf"especially|namely|like(?!\s+{LIKE_HEAD})|rule\s+out|r/o|differential|vs\.?|versus|"
    r"presumably)(?![-\w]))[\s,:]*", re.I)
CONCURRENT = re.compile(
    r"\s*\b(?:with|and|plus|along\s+with|accompanied\s+by|complicated\s+by|in\s+addition\s+to|"
    r"as\s+well\s+as|together\s+with)\b\s*|\s*[,;]\s*|\s+-\s+", re.I)
# "X complicated by Y": the answer states Y is a complication of X, a concurrent condition
# (CRAFT-MD's grader: a main diagnosis with a concurrent minor one is the main diagnosis).
# A dash sets the clause off as a comma does ("X - complicated by Y", "X — complicated
# by Y": red team round 19; dashes are one "-" by now, :func:`.statement.clean`).
COMPLICATION = re.compile(r"\s*(?:,|\s-{1,3})?\s*\b(?:(?:further\s+|now\s+)?complicated\s+by)"
                          r"\b\s*", re.I)
# A companion after a hedge stays a companion: "X, possibly with Y" or "possibly complicated
# by Y" names X and a possible complication, not X or Y.
COMPANION = (r"(?:with|and|complicated\s+by|accompanied\s+by|along\s+with|plus|"
             r"together\s+with)\b")
LEADING = re.compile(
    rf"^(?:(?:a|an|the|{HEDGE}|suspected|presumed|presumptive|early|clinical|signs?\s+of|"
    r"case\s+of|diagnosis\s+of|diagnosed\s+with|evidence\s+of|features\s+of|picture\s+of|"
    r"presentation\s+of|form\s+of|type\s+of|kind\s+of|episode\s+of|having|has|is|be|to\s+be|"
    r"could|may|might|would|appears?|seems?|suffering\s+from|suffers\s+from|resulting|"
    r"associated|concurrent|concomitant|"
    r"coexisting|co-existing|comorbid|underlying|accompanying|subsequent|resultant|"
    r"component\s+of|element\s+of|degree\s+of|"
    r"primary\s+diagnosis|diagnosis|impression|condition|suggestive\s+of|"
    # "T, but W": the contrast opens the clause, it is no word of W's name ("but secondary
    # syphilis" read as an unknown name called secondary, a concurrent condition of T)
    r"but|yet)\b[\s:,]*)+", re.I)
# A hedge alone ("X, possibly Y"), not an example ("such as") or a differential ("vs").
HEDGED = re.compile(rf"^,?\s*(?:{QUERY}|(?:{HEDGE}|suggestive\s+of|suspicious\s+for|"
                    r"concerning\s+for|presumably)(?![-\w]))[\s,:]*", re.I)
# "X (e.g. Y)", "X, such as Y": an example of X, read as a hedge is (Y a kind of X names Y,
# else another possible diagnosis: :func:`.companions.hedged_role`)
EXAMPLE = re.compile(r"^\s*,?\s*(?:e\.g\.?|for\s+example|such\s+as)(?![-\w])[\s,:]*", re.I)
SPECIFIC = re.compile(r"^\s*,?\s*(?:specifically|particularly|especially|i\.e\.?|namely|"
                      r"most\s+likely|more\s+likely|likely|probably|presumably)\b[\s,:]*", re.I)
# The likelihood words of SPECIFIC: a hedge, which may set a second disease beside the first
# ("bronchitis, probably pneumonia": :func:`.companions.two_possible`)
LIKELY = re.compile(r"^\s*,?\s*(?:most\s+likely|more\s+likely|likely|probably|presumably)\b",
                    re.I)
# "(or X)": another name of the diagnosis ("fifth disease (or erythema infectiosum)") or
# another diagnosis ("rosacea (or lupus)"); the terminology says which
# (:func:`.companions.parenthesized_role`).
OR = re.compile(r"^\s*or\b[\s,:]*", re.I)
ALIAS = re.compile(r"^\s*(?:(?:also|commonly|often|sometimes|usually)\s+(?:known|called|"
                   r"referred\s+to)\s+as|aka|a\.k\.a\.?|"
                   r"formerly|previously|known\s+as|called)\b[\s,:]*", re.I)
# Another name given after a comma (not ", or X", which offers another disease).
# ", i.e. Y", ", a subtype of Y", ", the same as Y": a claim that Y is X again, which the
# terminology must confirm (see :func:`_resolved`), else Y is another disease.
TAIL_ALIAS = re.compile(r"^\s*,?\s*(?:(?:also|formerly|previously|otherwise)\s+(?:known|"
                        r"called|referred\s+to)(?:\s+as)?|aka|a\.k\.a\.?|i\.e\.?|that\s+is|"
                        r"(?:a|the)\s+(?:sub)?(?:type|form|variant|kind)\s+of|(?:the\s+)?same\s+as|"
                        r"synonymous\s+with|equivalent\s+to)(?![-\w])[\s,:]*",
                        re.I)
ASIDE = re.compile(r"^\s*(?:considering|given|based|which|if|when|see|note|as|since|because|"
                   r"with|without|in|on|at|for|by|to|this|that|the\s+patient|patient|"
                   r"confirmed|pending|requires?|needs?|"
                   # a reason in brackets ("(classic presentation)"), as after a dash;
                   # "classical" alone may name a kind ("(classical Hodgkin lymphoma)")
                   r"(?:classic(?:al)?|typical|textbook|characteristic)\s+(?:presentation|"
                   r"findings?|features?|picture|history|case|signs?|symptoms?)|"
                   r"pathognomonic|consistent|compatible|supported|evidenced|presentation)\b"
                   # how sure the writer is: "(confidence: high)", "(high certainty)"
                   rf"|^\s*{CONFIDENCE}",
                   re.I)
PAREN = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")
#: A round bracket and what it holds, no bracket inside ("(G6PD deficiency)").
ROUND_BRACKET = re.compile(r"\([^()]*\)")
ADJECTIVE = re.compile(r"^[a-z-]+(?:al|ic|ous|ive|ed|ing|ary|ar)$")
WORD = re.compile(r"[^\W\d_][\w-]*")
# Where a finding was seen, after its name ("tachycardia on examination", "a murmur on
# auscultation"): how it was found, no part of what it is (red team round 5).
SEEN_ON = re.compile(r"\s+(?:on|at)\s+(?:(?:physical|clinical|initial|admission)\s+)?"
                     r"(?:examination|exam|auscultation|palpation|inspection|presentation)\s*$",
                     re.I)
# A condition the answer itself calls co-existing ("T, known hypertension", "T; comorbid
# asthma", "T, hypertension (comorbidity)"): a concurrent condition by the answer's own words,
# as "secondary bacterial infection" is (issue 31: "an underlying or co-existing condition"
# leaves the main diagnosis graded; red team round 5), or underlying ("T with underlying
# chronic kidney disease": the issue's own word, red team round 9).
# "Incidental" too: an incidental finding is one found beside what was looked for, which the
# answer itself says is no part of its diagnosis ("T (final); hypokalemia (incidental)";
# red team round 14).
COEXISTING = re.compile(r"^\s*(?:(?:with|and|plus)\s+)?(?:known|pre-?existing|co-?existing|"
                        r"coexistent|comorbid|concomitant|underlying|incidental)\s+(?=\S)",
                        re.I)
# The name runs back to the start of its clause: a match found inside a clause is found from
# its start too, which a left-to-right scan reaches first, and the greedy name then takes the
# last note of the clause; so the name starts only where a clause does ("(?<![^,;()])"),
# which reads the same and tries each clause once, not from each of its characters (a 40 KB
# clause without commas took ~50 s of CPU).
COEXISTING_NOTE = re.compile(r"(?<![^,;()])([^,;()]*[^,;()\s])\s*\(\s*(?:a\s+|an\s+)?"
                             r"(?:known|pre-?existing|co-?existing|coexistent|comorbid(?:ity)?|"
                             r"concomitant|incidental(?:\s+finding)?)\s*\)"
                             # "hypokalemia noted incidentally", "... as an incidental finding"
                             r"|(?<![^,;()])([^,;()]*[^,;()\s])\s+(?:(?:was|is)\s+)?"
                             r"(?:(?:noted|found|seen)\s+incidentally|"
                             r"as\s+an\s+incidental\s+finding)\b", re.I)


def as_comorbid(text: str) -> str:
    """``text`` with each condition a note calls co-existing or incidental written as
    "comorbid X" ("hypertension (comorbidity)", "hypokalemia noted incidentally")."""
    if "(" not in text and "incidental" not in text.lower():
        # no note to find: the pattern's open-ended name would cost a time quadratic in the
        # length of a long reply without commas (40 KB: ~50 s of CPU)
        return text
    return COEXISTING_NOTE.sub(lambda m: f"comorbid {m[1] or m[2]}", text)
