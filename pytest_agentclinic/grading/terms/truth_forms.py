"""The forms a truth is asked in (stage 2, relate): as written, without its parentheses, each
closing parenthetical, without a stated cause or setting, and without an ICD-10-CM
"unspecified" clause."""

from __future__ import annotations

import re

from ...core.text import bounded_cache, variants
from ..terminology import content


def truth_forms(truth: str) -> list[str]:
    """The truth, its form without parentheses and, when one ends it, each parenthetical
    ("ventricular septal defect (VSD)"). A parenthetical inside the name abbreviates the words
    before it, not the truth: "MEN" of "multiple endocrine neoplasia (MEN) IIa" is no name of
    type IIa. A closing clause saying what the coder did not know ("Pneumonia, unspecified
    organism", ICD-10-CM's convention) is asked without it too."""
    name = truth.strip().strip("\"'").strip()
    forms = variants(name)
    forms = [f for f in (forms if name.endswith(")") else forms[:2]) if content(f)]
    # "Anetoderma associated with SLE": a kind of anetoderma, so "anetoderma" is broader,
    # which the experts' rule accepts.
    main = _TRUTH_CAUSE.split(name, maxsplit=1)[0].strip(" ,")
    forms = [*forms, main] if main != name and content(main) else forms
    # "Pneumonia, unspecified organism": ICD-10-CM's closing clause says which detail the
    # coder lacked, not which disease.
    plain = _UNSPECIFIED.sub("", name).strip(" ,")
    return [*forms, plain] if plain != name and content(plain) else forms


_UNSPECIFIED = re.compile(r",\s*(?:unspecified|site\s+not\s+specified|not\s+elsewhere\s+"
                          r"classified|not\s+otherwise\s+specified)\b[^,()]*$", re.I)


# The words that join a truth's main disease to its cause or setting.
_TRUTH_CAUSE = re.compile(r"\s+(?:associated\s+with|due\s+to|secondary\s+to|caused\s+by|"
                          r"induced\s+by|in\s+the\s+setting\s+of|related\s+to)\s+", re.I)


#: :func:`truth_forms`, remembered: stage 2 asks a truth's forms once per name it relates.
forms_of = bounded_cache(truth_forms)
