"""How far a diagnosis's name runs in an answer's text, as regular-expression parts: the
reader's patterns (:mod:`.markers`, :mod:`.hedges`) capture names with these."""

from __future__ import annotations

# A name may hold an initial's full stop ("C. difficile colitis").
INITIAL = r"(?<=\b[A-Z])\.(?=\s+[a-z])"
NAME = rf"(?:[^.;:()\[\]\n]|{INITIAL}){{2,80}}?"
NAME_IN_CLAUSE = rf"(?:[^.;:,()\[\]\n]|{INITIAL}){{2,80}}?"
# Names set aside after a dash, which run to the words that set them aside: commas, brackets
# and dashes of their own allowed ("W (Churg-Strauss syndrome) and W2, level 1 are less likely")
NAMES_AFTER_DASH = rf"(?:[^.;:()\[\]\n]|\([^()\n]{{1,60}}\)|{INITIAL}){{2,200}}?"
# A name alone in its clause: no comma, and no dash that sets another name off ("T - W");
# two names joined by "and" may be long
NAME_ALONE = rf"(?:(?!\s-\s)(?:[^.;:,()\[\]\n]|{INITIAL})){{2,200}}?"
