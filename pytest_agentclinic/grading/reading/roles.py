"""Roles the answer states for its names (stage 1, for :mod:`.extract`): "T (final), W
(differential)", "W (differential), T (final)", "T (most likely); W (less likely)".

The reader decides which of two names is the main diagnosis from the join and from the
terminology: a finding beside a disease is concurrent, and the disease is graded. Where the
answer labels each name's role itself, the label decides, whatever the name's kind: the name
marked final, most likely, primary, working, leading or definitive is the main diagnosis; a
name marked differential, less likely, unlikely, ruled out, excluded, alternative or
considered is one the answer set aside, and is never graded (issue 31, *Main and
concurrent*: "the one marked final or most likely" is the main diagnosis, and "the truth
only in a secondary role never scores"; docs/grading.md's table, "Differential: W, W2.
Final answer: T" is graded on T). Read as notes, such labels were dropped, and a
laboratory state marked final was read as a finding beside the disease set aside.
"""

from __future__ import annotations

import re
from itertools import takewhile
from typing import NamedTuple

from .labels import starts_labelled

__all__ = ["Roles", "kept_open", "listed_roles", "main_label", "stated_roles"]

# The main diagnosis's label, in brackets after the name.
_MAIN = (r"(?:final|most\s+likely|most\s+probable|primary|working|leading|definitive|principal|"
         r"main|favou?red|preferred)(?:\s+(?:diagnosis|dx|impression))?")
_MAIN_LABEL = re.compile(_MAIN, re.I)


def main_label(words: str) -> bool:
    """Whether ``words`` (a field's name as words: "primary diagnosis", "working dx") are
    the main diagnosis's label, as they are in brackets after a name."""
    return _MAIN_LABEL.fullmatch(words.strip()) is not None


# A name the answer set aside: considered, then not chosen.
_ASIDE = (r"(?:(?:on\s+the\s+)?differential(?:\s+diagnosis)?|ddx|less\s+likely|less\s+probable|"
          r"unlikely|ruled\s+out|excluded|alternative(?:\s+diagnosis)?|(?:also\s+)?considered|"
          r"rejected|not\s+favou?red)")
# One item: an optional list mark, a name (its abbreviation in brackets allowed: "Benign
# paroxysmal positional vertigo (BPPV) (final)", red team round 15), and its role in brackets.
_ITEM = re.compile(rf"^\s*(?:(?:\d+[.)]|#\d+|[-*\u2022])\s*)?(?P<name>(?:[^()\[\]]|\([^()\[\]\n]"
                   rf"{{1,60}}\))*?[^\W\d_](?:[^()\[\]]|\([^()\[\]\n]{{1,60}}\))*?)\s*\(\s*"
                   rf"(?:(?P<main>{_MAIN})|(?P<aside>{_ASIDE}))\s*\)\s*[.]?\s*$", re.I)
# Items are separated as a list's are: a comma, a semicolon, a line.
_SEPARATOR = re.compile(r"\s*[,;\n]\s*")


class Roles(NamedTuple):
    """The main diagnosis an answer labels, and the names it labels as set aside."""

    main: str
    aside: tuple[str, ...]


def stated_roles(stmt: str) -> Roles | None:
    """The roles ``stmt`` states, when each of its items is a name with its role in brackets,
    exactly one of them the main diagnosis's ("T (final), W (differential)"); else None (an
    item without a role, two marked final, none marked: the reader's other rules decide)."""
    items = [part for part in _SEPARATOR.split(stmt.strip()) if part.strip()]
    if len(items) < 2:
        return None
    read = [_ITEM.match(item) for item in items]
    if any(match is None for match in read):
        return None
    mains = [m["name"] for m in read if m is not None and m["main"]]
    if len(mains) != 1:
        return None
    return Roles(mains[0].strip(), tuple(m["name"].strip() for m in read
                                         if m is not None and m["aside"]))


# A list's mark, or a line's: a number, a hash and a number, a bullet (markdown's list items)
_LISTED = re.compile(r"^[ \t>]*(?:\d{1,2}[.)]|#\d{1,2}|[-*+\u2022])[ \t]+")
_MARK = re.compile(rf"(?:{_LISTED.pattern})?")
# A line that heads its name with the role, the way a label heads the answer ("Primary
# diagnosis: T", "Secondary: W", "Less likely: W"), emphasis allowed
_HEADED = re.compile(r"[*_]*[^\W\d_][^:\n]{0,40}?[*_]*[ \t]*:[ \t]*[*_]*[ \t]*\S")


_LABEL_THEN_LIST = re.compile(r"^[ \t]*[^\n:|]{1,40}:[ \t]*(?=(?:\d{1,2}[.)]|[-*+\u2022])[ \t]+)")


def listed_roles(text: str) -> str:
    """``text`` with a list (or lines) that gives each name its role read as one line gives
    them. Bracket roles ("1. T (final)\n2. W (differential)", "- T (final)\n- W
    (differential)") become one statement, "T (final), W (differential)", which
    :func:`stated_roles` reads; numbered headings ("1. Primary diagnosis: T\n2. Secondary:
    W") lose their numbers, and read as the labelled lines they are, as bullets do. A role
    given on a list item is the role given on a line (issue 31, *Main and concurrent*: the
    main diagnosis decides, "the one marked final or most likely"); read as a list, the
    items had been two diagnoses offered. Other lists are left as they are."""
    # (after the protocol's label, "Final Diagnosis: 1. T (final) ...", as after "DIAGNOSIS
    # READY:": one reader for both protocols)
    found = _LABEL_THEN_LIST.match(text)
    label, body = (found.group(), text[found.end():]) if found else ("", text)
    lines = body.strip().splitlines()
    block = list(takewhile(str.strip, lines))  # the first paragraph: the list
    rest = lines[len(block):]
    if len(block) < 2:
        return text
    items = [_MARK.sub("", line, count=1).strip() for line in block]
    joined = ", ".join(items)
    if stated_roles(joined) is not None:
        return label + "\n".join([joined, *rest])
    # numbered or bulleted headings, the first the answer's label (a role's heading)
    if (all(_LISTED.match(line) for line in block)
            and all(_HEADED.match(item) for item in items) and starts_labelled(items[0])):
        return label + "\n".join(["", *items, *rest] if label else [*items, *rest])
    return text


# A later item still to rule out: "W (primary), T (to be ruled out)", "T, W (r/o)".
# (Or in a sentence of its own after the answer: "T. W (not yet excluded).", red team round
# 15.)
_STILL_OPEN = re.compile(r"(?P<join>[,;]\s*|(?<=[^\W\d_)\]])\.\s+)"
                         # (a name of at most 160 characters, with a letter: bounded, so
                         # that a long answer is read in linear time)
                         r"(?P<name>(?=[^,;()\[\]\n]{0,160}?[^\W\d_])[^,;()\[\]\n]{1,160}?)"
                         r"\s*\(\s*(?:(?:yet\s+|still\s+)?to\s+be\s+(?:ruled\s+out|excluded)|"
                         r"(?:to\s+)?rule\s+out|r/o|not\s+(?:yet\s+)?(?:ruled\s+out|excluded)|"
                         r"cannot\s+be\s+(?:ruled\s+out|excluded))\s*\)", re.I)


def kept_open(stmt: str) -> str:
    """``stmt`` with each later name marked as still to rule out offered as an alternative
    ("W (primary), T (to be ruled out)" reads "W (primary), or T"): a name not yet excluded
    is a possible diagnosis kept open, as "T cannot be excluded" is (docs/grading.md's
    table: alternatives, "cannot exclude"; the paper's step 1, "more than one possible
    diagnosis"). Read as a negation, "(to be ruled out)" had set the name aside."""
    if "(" not in stmt:
        return stmt  # nothing marked: the common case, read without the pattern
    return _STILL_OPEN.sub(lambda m: f"{m['join']}or {m['name']}", stmt)
