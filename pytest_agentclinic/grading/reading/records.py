"""An answer given as one record of named fields, written as labelled lines (stage 1, for
:mod:`.extract`, before :func:`.markers.unwrap`).

Models other than the recorded GPT-4 and GPT-3.5 return their answer as data more often than
as prose: a CSV header over one row ("diagnosis,confidence" then "T,0.9"), a markdown table
whose header names a diagnosis column over one row, a Python dictionary (single quotes, which
JSON does not allow), XML elements inside a wrapper element (``<response>``), or the last of
numbered steps ("Step 4: Diagnosis: T"). Each holds one answer under a field's name, as
"Diagnosis: T" would (the paper's grader, step 1, returns the diagnosis the answer gives);
read as prose, the header and the row were a list of names, or the wrapper a second answer.
A table of several rows stays a table (a differential), and CSV of several rows a list.
"""

from __future__ import annotations

import ast
import json
import re

__all__ = ["as_labelled_lines"]

# The field that holds the answer ("diagnosis", "final_diagnosis", "Dx", "answer").
# A column or field headed "Most likely" alone holds the answer too, as the label "Most
# likely: T" does (red team rounds 15 and 17).
_ANSWER_FIELD = re.compile(r"(?:(?:final|most[ _]likely|primary|main)[ _]+)?(?:diagnosis|dx|"
                           r"answer)|most[ _]likely", re.I)
# A CSV header: two to six field names (words, no spaces inside a field but "_" or one space).
_CSV_FIELD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?: [A-Za-z0-9_-]+)?")


def _csv(text: str) -> str:
    """A CSV header with an answer field over exactly one row, as labelled lines."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) != 2:
        return text
    fields = [f.strip() for f in lines[0].split(",")]
    answer = next((i for i, f in enumerate(fields) if _ANSWER_FIELD.fullmatch(f)), None)
    if (answer is None or not 2 <= len(fields) <= 6
            or not all(_CSV_FIELD.fullmatch(f) for f in fields)):
        return text
    cells = [c.strip().strip('"') for c in lines[1].split(",")]
    if len(cells) < len(fields):
        return text
    # the answer's own commas ("Bipolar I disorder, current episode manic") stay in its cell
    after = len(fields) - answer - 1
    value = ",".join(cells[answer: len(cells) - after]).strip().strip('"')
    others = [*zip(fields[:answer], cells[:answer], strict=True),
              *zip(fields[answer + 1:], cells[len(cells) - after:], strict=True)]
    # a field's name as words ("final_diagnosis" as "final diagnosis": "_" is emphasis later)
    named = [(f.replace("_", " "), c) for f, c in [(fields[answer], value), *others]]
    return "\n".join(f"{f}: {c}" for f, c in named)


_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$")
_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|?)+[ \t]*$")


# A table that opens right after a label's colon ("Final Diagnosis: | Diagnosis | ... |"):
# its header starts a line of its own, as it does after "DIAGNOSIS READY:" (red team round
# 11: one reader for both protocols).
# A colon (and spaces) before a bar, in a line that ends in a bar over a rule: the line is a
# header. (Once ":[ \t]*(?=\|[^\n]*\|[ \t]*\n" + the rule + ")": each colon's lookahead
# scanned to its line's end, a time quadratic in a long line of colons; all colons of a line
# need the same end, so the line's end is looked at once.)
_BEFORE_BAR = re.compile(r":[ \t]*(?=\|)")
_RULE_BELOW = re.compile(r"\|[ \t]*\n[ \t]*\|?[ \t]*:?-{3,}")


def _tables_after_labels(text: str) -> str:
    """``text`` with a line break after each colon that opens a table's header."""
    lines = text.split("\n")
    for at, line in enumerate(lines[:-1]):
        bar = len(line.rstrip(" \t")) - 1
        if ":" in line and _RULE_BELOW.match(f"{line[bar:]}\n{lines[at + 1]}"):
            lines[at] = _BEFORE_BAR.sub(":\n", line[:bar]) + line[bar:]
    return "\n".join(lines)


def _table(text: str) -> str:
    """A markdown table whose header names an answer column, over exactly one row, as
    labelled lines; the text around the table is kept."""
    lines = _tables_after_labels(text).splitlines()
    for at in range(len(lines) - 2):
        header, rule = _ROW.match(lines[at]), _RULE.match(lines[at + 1])
        if header is None or rule is None:
            continue
        rows = []
        for line in lines[at + 2:]:
            row = _ROW.match(line)
            if row is None:
                break
            rows.append(row)
        names = [c.strip(" *_") for c in header.group(1).split("|")]
        if len(rows) > 1:
            chosen = _chosen_row(names, [[c.strip(" *_") for c in r.group(1).split("|")]
                                         for r in rows])
            if chosen is None:
                return text
            return "\n".join([*lines[:at], f"Diagnosis: {chosen}",
                              *lines[at + 2 + len(rows):]])
        answer = next((i for i, n in enumerate(names) if _ANSWER_FIELD.fullmatch(n)), None)
        if answer is None or len(rows) != 1 or len(names) < 2:
            return text
        cells = [c.strip(" *_") for c in rows[0].group(1).split("|")]
        if len(cells) != len(names):
            return text
        fields = [f"{names[answer]}: {cells[answer]}",
                  *(f"{n}: {c}" for i, (n, c) in enumerate(zip(names, cells, strict=True))
                    if i != answer and n and c)]
        return "\n".join([*lines[:at], *fields, *lines[at + 3:]])
    return text


# A differential table with a column that marks the row chosen ("| Diagnosis | Chosen |"
# over "| T | \u2705 |" and "| W | |"): the row marked is the answer, the others the
# candidates it set aside, as "W (differential), T (final)" reads (red team round 15; issue
# 31: the main diagnosis is "the one marked final"). Exactly one row marked; every other
# row's mark empty or a mark of one set aside.
_NAME_COLUMN = re.compile(r"(?:(?:final|most[ _]likely|primary|main)[ _]+)?(?:diagnos[ie]s|dx|"
                          r"answer|differentials?(?:[ _]+diagnos[ie]s)?|ddx|candidates?)", re.I)
_CHOICE_COLUMN = re.compile(r"chosen|selected|choice|pick(?:ed)?|final(?:\s+answer)?|verdict|"
                            r"decision|status|conclusion", re.I)
_CHOSEN = re.compile(r"\u2705|\u2714\ufe0f?|\u2713|\u2611\ufe0f?|x|yes|y|chosen|selected|final|"
                     r"(?:final|most\s+likely|working)\s+diagnosis|most\s+likely", re.I)
_NOT_CHOSEN = re.compile(r"|\u274c|\u2717|\u2718|\u2716\ufe0f?|no|n|-+|\u2014|ruled\s+out|excluded|"
                         r"less\s+likely|unlikely|rejected|not\s+chosen|differential", re.I)


def _chosen_row(names: list[str], rows: list[list[str]]) -> str | None:
    """The candidate of the one row a table marks chosen; None when no column marks a
    choice, or no row or several are marked, or a row is marked otherwise."""
    name = next((i for i, n in enumerate(names) if _NAME_COLUMN.fullmatch(n)), None)
    mark = next((i for i, n in enumerate(names) if _CHOICE_COLUMN.fullmatch(n)), None)
    if name is None or mark is None or any(len(row) != len(names) for row in rows):
        return None
    chosen = [row[name] for row in rows if _CHOSEN.fullmatch(row[mark].strip())]
    if len(chosen) != 1 or not all(_CHOSEN.fullmatch(row[mark].strip())
                                   or _NOT_CHOSEN.fullmatch(row[mark].strip()) for row in rows):
        return None
    return chosen[0] or None


_BRACES = re.compile(r"\{.*\}", re.S)
_LOOSE_FIELD = re.compile(r"^\{\s*'(?P<key>(?:final[ _])?diagnosis|dx|answer)'\s*:\s*'(?P<value>"
                          r"[^\n{}]*?)'\s*(?:,\s*'[\w ]+'\s*:|\})", re.I)


def _python_dict(text: str) -> str:
    """A Python dictionary (single-quoted keys and values) as the JSON object it stands for,
    which :func:`.markers.unwrap` reads."""
    found = _BRACES.search(text)
    if found is None or "'" not in found.group():
        return text
    try:
        json.loads(found.group())
        return text  # JSON already
    except ValueError:
        pass
    try:
        value = ast.literal_eval(found.group())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        # an apostrophe left inside single quotes ('Todd's paralysis'): the answer's field up
        # to the quote that closes it before the next key or the closing brace
        loose = _LOOSE_FIELD.search(found.group())
        if loose is None:
            return text
        return f"{text[: found.start()]}\n{loose['key']}: {loose['value']}\n{text[found.end():]}"
    if not isinstance(value, dict):
        return text
    return f"{text[: found.start()]}{json.dumps(value)}{text[found.end():]}"


# A line that is only an element's opening or closing tag ("<response>", "</output>"): the
# wrapper around tagged fields, which names nothing.
_WRAPPER = re.compile(r"^[ \t]*</?[A-Za-z][\w-]*>[ \t]*$\n?", re.M)
_FIELD_TAG = re.compile(r"<((?:[a-z]+[_-])*(?:diagnosis|dx|answer))>", re.I)
# "Step 4: Diagnosis: T": a step's number before the label of the answer
_STEP = re.compile(r"^([ \t>*_#]*)step[ \t]+\d{1,2}[ \t]*[:.)-][ \t]*(?=[*_]*(?:final[ \t]+)?"
                   r"(?:diagnosis|dx|answer|conclusion)\b)", re.I | re.M)


def as_labelled_lines(text: str) -> str:
    """``text`` with an answer given as one record (CSV, a one-row table, a Python
    dictionary, wrapped XML fields, a numbered step) written as labelled lines."""
    text = _STEP.sub(r"\1", text)
    if _FIELD_TAG.search(text):
        text = _WRAPPER.sub("", text)
    if "|" in text:
        text = _table(text)
    if "{" in text:
        text = _python_dict(text)
    return _csv(text) if "," in text else text
