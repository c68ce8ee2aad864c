"""The truth written otherwise, for the adversarial fixture's slots (``adversarial.py``):
slips of the pen, a near-miss sibling, and the typography of a name typed or pasted from
elsewhere."""

from __future__ import annotations

import re

from pytest_agentclinic.grading.terminology import content, tokens
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.eponym_words import eponyms
from pytest_agentclinic.grading.terms.equivalence import compare

__all__ = ["sibling_of", "slip_forms", "slipped", "typography_forms"]


def slip_forms(name: str) -> dict[str, str]:
    """``{slip_drop}``, ``{slip_swap}``, ``{slip_add}``: ``name`` with a letter of its longest
    word (7 letters or more) dropped, two letters swapped, or a letter doubled, each in the
    middle of the word (none when it has no such word, or the swap changes nothing)."""
    words = re.findall(r"[A-Za-z]+", name)
    longest = max(words, key=len, default="")
    if len(longest) < 7:
        return {}
    i = len(longest) // 2
    forms = {"slip_drop": longest[:i] + longest[i + 1:],
             "slip_add": longest[:i] + longest[i] + longest[i:]}
    if longest[i] != longest[i + 1]:
        forms["slip_swap"] = longest[:i] + longest[i + 1] + longest[i] + longest[i + 2:]
    return {slot: name.replace(longest, form, 1) for slot, form in forms.items()}


def typography_forms(name: str) -> dict[str, str]:
    """The truth as typed or pasted from elsewhere (red team round 5): ``{truth_curly}`` its
    apostrophes curly (or straight, where it has curly ones), or its eponym in the
    possessive with a curly apostrophe ("Bell\u2019s palsy"), ``{truth_nbsp}`` its first
    space a non-breaking one, ``{truth_zwsp}`` a zero-width space after its first word,
    ``{truth_endash}`` its hyphens en dashes, ``{truth_hyphen_break}`` a line break after its
    first hyphen inside a word (each absent where the truth has no such character)."""
    forms: dict[str, str] = {}
    first, _, rest = name.partition(" ")
    if "'" in name or "\u2019" in name:
        forms["truth_curly"] = name.translate({ord("'"): "\u2019", ord("\u2019"): "'"})
    elif rest and first[:1].isupper() and content(first)[-1:] and \
            content(first)[-1] in eponyms():
        # an eponym the sources write in the possessive ("Bell palsy": "Bell\u2019s palsy")
        mark = "\u2019" if first.endswith("s") else "\u2019s"
        forms["truth_curly"] = f"{first}{mark} {rest}"
    if " " in name:
        forms["truth_nbsp"] = name.replace(" ", "\u00a0", 1)
        forms["truth_zwsp"] = name.replace(" ", "\u200b ", 1)
    if "-" in name:
        forms["truth_endash"] = name.replace("-", "\u2013")
    if re.search(r"\w-\w", name):  # a hyphen inside a word, not a spaced dash
        forms["truth_hyphen_break"] = re.sub(r"(?<=\w)-(?=\w)", "-\n", name, count=1)
    return forms


def sibling_of(name: str) -> str | None:
    """``name`` with one letter of a long word (7 letters or more) changed so that it names
    another disease the terminology knows (an osteoblastoma for an osteoclastoma): a
    near-miss sibling, no slip of the pen. None when no such letter exists."""
    terms = default_terminology()
    for word in sorted(set(re.findall(r"[A-Za-z]{7,}", name)), key=len, reverse=True):
        for i, old in enumerate(word.lower()):
            for new in "abcdefghijklmnopqrstuvwxyz":
                changed = word[:i] + new + word[i + 1:]
                if new == old or not all(terms.is_word(t) for t in tokens(changed)):
                    continue
                other = name.replace(word, changed, 1)
                if terms.known(other) and compare(other, name).kind not in ("same", "synonym"):
                    return other
    return None


def slipped(name: str) -> str | None:
    """``name`` with one letter of its longest word (7 letters or more) changed, or None."""
    words = re.findall(r"[A-Za-z]+", name)
    longest = max(words, key=len, default="")
    if len(longest) < 7:
        return None
    i = len(longest) // 2
    swap = "e" if longest[i].lower() != "e" else "a"
    return name.replace(longest, longest[:i] + swap + longest[i + 1:], 1)
