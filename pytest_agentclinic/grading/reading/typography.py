"""How an answer is typed, set or abbreviated, unified before it is read (stage 1, for
:mod:`.markers` and :mod:`.statement`; red team round 5, docs/grading.md).

Models and clinicians write the same name in other hands:

* typeset, as a reasoning model's LaTeX (``\\textbf{T}``, ``$\\boxed{\\text{T}}$``), or
  with a citation marker after it ("T [1]", "T (ref. 2)"), or broken across a line at its
  hyphen ("Guillain-" then "Barre syndrome"): markup, as markdown's emphasis is, which names
  nothing;
* in a clinician's shorthand, the standard abbreviations of a medical note: "c/w"
  (consistent with), "r/o" (rule out), "s/p" (status post), "h/o" (history of), "d/t" (due
  to), "w/" and "w/o" (with, without). Read as slashes, they split one statement into two
  names ("Findings c" / "w T"); written out, the reader's joins read them as they read the
  words;
* as a SOAP note, whose sections a clinician heads with their letters ("S:", "O:", "A:",
  "P:"): the assessment ("A:") holds the diagnosis, and written out it is read as the label
  "Assessment:" is.
"""

from __future__ import annotations

import re

__all__ = ["expand_shorthand", "soap_headings", "unmarked", "untypeset"]

# A LaTeX command that sets its argument (bold, italics, text in math, a box): the argument
# stays, the command goes; innermost first ("\boxed{\text{T}}").
_LATEX_COMMAND = re.compile(r"\\(?:textbf|textit|textrm|textsf|text|emph|mathrm|mathbf|mathit|"
                            r"boxed|fbox|underline|bf|it)\s*\{([^{}]*)\}")
# Math delimiters around it: "$...$", "$$...$$", "\(...\)", "\[...\]".
_MATH_DELIMITER = re.compile(r"\${1,2}|\\[()\[\]]")
# A citation after a name: "[1]", "[1, 2]", "[1-3]", "(ref. 2)", "(reference 3)", "(refs 1,
# 4)"; a number in brackets names nothing.
_CITATION = re.compile(r"[ \t]*(?:\[\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\]|\((?:refs?|"
                       r"references?|citations?|cit)\.?\s*\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\))",
                       re.I)
# A word broken at its hyphen across two lines ("Guillain-" / "Barre syndrome"): one word.
_BROKEN_AT_HYPHEN = re.compile(r"(?<=[^\W_])-[ \t]*\n[ \t]*(?=[^\W_])")


# A chat model's marks (red team round 7): a cross mark opening a line (or after its label)
# rejects what the line names ("\u274c T" then "\u2705 W": the answer is W), so the line
# goes, as a name set aside does (a "not" would read "Not T - W" as "not T, but W"); a check
# mark, a star or another pictograph names nothing, as markdown's emphasis does.
_CROSS_MARK = re.compile(r"(^[ \t>*_\-]*|:[ \t]*)[\u274c\u274e\u2716\u2717\u2718][^\n]*", re.M)
_PICTOGRAPH = re.compile(r"[ \t]*[\u2600-\u27bf\u2b50\u2b55\U0001f000-\U0001faff]\ufe0f?")


def unmarked(text: str) -> str:
    """``text`` without the lines a cross mark rejects, and without other pictographs."""
    if not _PICTOGRAPH.search(text):
        return text
    return _PICTOGRAPH.sub("", _CROSS_MARK.sub(r"\1", text)).strip()


def untypeset(text: str) -> str:
    """``text`` without LaTeX's commands and math delimiters (their arguments kept), citation
    markers, a chat model's marks (:func:`unmarked`), and the line breaks inside a name at
    its hyphen."""
    text = unmarked(text)
    if "\\" in text or "$" in text:
        for _ in range(4):  # nested commands, innermost first; a bound, not a limit
            text, changed = _LATEX_COMMAND.subn(r"\1", text)
            if not changed:
                break
        text = _MATH_DELIMITER.sub("", text)
    return _BROKEN_AT_HYPHEN.sub("-", _CITATION.sub("", text))


# A clinician's shorthand, as a whole token (not inside a fraction or a word): what it stands
# for. "w/" is "with" only before a word ("w/ fever"), never a slash between names.
_SHORTHAND = {"c/w": "consistent with", "r/o": "rule out", "s/p": "status post",
              "h/o": "history of", "d/t": "due to", "w/o": "without", "w/": "with "}
_SHORT = re.compile(r"(?<![\w/])(?:(c/w|r/o|s/p|h/o|d/t|w/o)(?![\w/])|(w/)(?=\s*[^\W\d_]))",
                    re.I)


def expand_shorthand(text: str) -> str:
    """``text`` with a clinician's shorthand ("c/w", "r/o", "s/p", "h/o") written out."""
    if "/" not in text:
        return text
    written = _SHORT.sub(lambda m: _SHORTHAND[(m.group(1) or m.group(2)).lower()], text)
    return re.sub(r"[ \t]{2,}", " ", written)


# A SOAP note's section letters, each opening its line ("S: Itchy rash", "A: T", "P: ...").
_SOAP_LETTER = re.compile(r"^([ \t>*_\-]*)([SOAP])([*_]*[ \t]*:)", re.M)
_SOAP_WORDS = {"S": "Subjective", "O": "Objective", "A": "Assessment", "P": "Plan"}


def soap_headings(text: str) -> str:
    """``text`` with a SOAP note's section letters written out ("A: T" as "Assessment: T"),
    where the letters head a note: "A:" and at least two of "S:", "O:", "P:" open lines in
    that order. A letter alone before a colon is otherwise an option's letter ("A: T")."""
    found = _SOAP_LETTER.findall(text)
    letters = "".join(letter for _, letter, _ in found)
    if "A" not in letters or len(set(letters) - {"A"}) < 2 or letters != "".join(
            sorted(letters, key="SOAP".index)):
        return text
    return _SOAP_LETTER.sub(lambda m: f"{m.group(1)}{_SOAP_WORDS[m.group(2)]}{m.group(3)}",
                            text)
