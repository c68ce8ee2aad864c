"""How an answer is typed, set or abbreviated, unified before it is read (stage 1, for
:mod:`.markers` and :mod:`.statement`; red team round 5, docs/grading.md).

Models and clinicians write the same name in other hands:

* typeset, as a reasoning model's LaTeX (``\\textbf{T}``, ``$\\boxed{\\text{T}}$``), or
  with a citation marker after it ("T [1]", "T (ref. 2)"), or broken across a line at its
  hyphen ("Guillain-" then "Barre syndrome"): markup, as markdown's emphasis is, which names
  nothing;
* carried by the transport between the model and the grader (red team round 8): a
  byte-order mark, full-width punctuation ("Diagnosis\uff1aT"), HTML's
  character entities ("&amp;", "&nbsp;"), a markdown link around the name ("[T](https://
  ...)"), a chat template's special tokens ("<|im_start|>assistant", "<|eot_id|>"), or a
  line break escaped into the two characters "\\n" by a JSON or log writer: what was
  meant is a character, a link's text, nothing, and a line break;
* spelled with a full stop after each capital ("A.L.L." for "ALL");
* in a clinician's shorthand, the standard abbreviations of a medical note: "c/w"
  (consistent with), "r/o" (rule out), "s/p" (status post), "h/o" (history of), "d/t" (due
  to), "w/" and "w/o" (with, without). Read as slashes, they split one statement into two
  names ("Findings c" / "w T"); written out, the reader's joins read them as they read the
  words.

(A SOAP note's sections are read in :mod:`.soap`.)
"""

from __future__ import annotations

import html
import re

__all__ = ["expand_shorthand", "ticked", "unmarked", "untransported", "untypeset"]

# A LaTeX command that sets its argument (bold, italics, text in math, a box): the argument
# stays, the command goes; innermost first ("\boxed{\text{T}}").
_LATEX_COMMAND = re.compile(r"\\(?:textbf|textit|textrm|textsf|text|emph|mathrm|mathbf|mathit|"
                            r"boxed|fbox|underline|bf|it)\s*\{([^{}]*)\}")
# Math delimiters around it: "$...$", "$$...$$", "\(...\)", "\[...\]".
_MATH_DELIMITER = re.compile(r"\${1,2}|\\[()\[\]]")
# A citation after a name: "[1]", "[1, 2]", "[1-3]", "(ref. 2)", "(reference 3)", "(refs 1,
# 4)"; a number in brackets names nothing.
# (Spaces before a mark are taken from the first of them ("(?<![ \t])"): the same match, which
# a scan reaches there first, not one scan of a long run of spaces from each of them.)
_CITATION = re.compile(r"(?<![ \t])[ \t]*(?:\[\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\]|\((?:refs?|"
                       r"references?|citations?|cit)\.?\s*\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\))",
                       re.I)
# A word broken at its hyphen across two lines ("Guillain-" / "Barre syndrome"): one word.
_BROKEN_AT_HYPHEN = re.compile(r"(?<=[^\W_])-[ \t]*\n[ \t]*(?=[^\W_])")


# A chat model's marks (red team round 7): a cross mark opening a line (or after its label)
# rejects what the line names ("\u274c T" then "\u2705 W": the answer is W), so the line
# goes, as a name set aside does (a "not" would read "Not T - W" as "not T, but W"); a check
# mark, a star or another pictograph names nothing, as markdown's emphasis does.
_CROSS_MARK = re.compile(r"(^[ \t>*_\-]*|:[ \t]*)[\u274c\u274e\u2716\u2717\u2718][^\n]*", re.M)
_PICTOGRAPH = re.compile(r"(?<![ \t])[ \t]*[\u2600-\u27bf\u2b50\u2b55\U0001f000-\U0001faff]\ufe0f?")


# A keycap digit ("1\ufe0f\u20e3 T", red team round 12): Unicode's keycap sequence numbers an
# item of a list as "1." does.
_KEYCAP = re.compile(r"(\d)\ufe0f?\u20e3[ \t]*")


# A check mark opening a line (or after its label): two or more such lines mark two names
# chosen, a list of diagnoses (round 15: "two marked main stays multiple"; the paper's step
# 1, "more than one diagnoses present"), read as the bullets they are (red team round 16).
_CHECK_LINE = re.compile(r"(?:^|(?<=:))[ \t]*[\u2705\u2714\u2611\u2713]\ufe0f?[ \t]*(?=\S)", re.M)


# A task list item (GitHub Flavored Markdown's extension: "- [ ] W" unchecked, "- [x] T"
# checked), which a model writes to tick its answer off a list of candidates (red team round
# 18). Where a box is ticked, an unticked one is a candidate not chosen, and its line goes as
# a cross mark's does; a ticked one is a bullet, so two ticked stay two names (round 16).
# (From a line's start or a label's colon only, its spaces in one run: one try each.)
_TASK_MARK = r"(?:^|(?<=:))[ \t]*(?:[-*+][ \t]+|\d{1,2}[.)][ \t]+)?"
_TASK_ITEM = re.compile(rf"{_TASK_MARK}\[([ xX])\][ \t]+(?=\S)", re.M)
_UNTICKED_LINE = re.compile(rf"{_TASK_MARK}\[ \][ \t]+\S[^\n]*\n?", re.M)


def ticked(text: str) -> str:
    """``text`` with a task list read as what it ticks: the unticked items gone where one is
    ticked, each ticked item a bullet."""
    if "]" not in text or not any(m.group(1) in "xX" for m in _TASK_ITEM.finditer(text)):
        return text
    return _TASK_ITEM.sub("- ", _UNTICKED_LINE.sub("", text))


def unmarked(text: str) -> str:
    """``text`` without the lines a cross mark rejects, and without other pictographs (a
    keycap digit is the number of an item; lines each opened by a check mark are bullets)."""
    text = _KEYCAP.sub(r"\1. ", text) if "\u20e3" in text else text
    if not _PICTOGRAPH.search(text):
        return text
    if len(_CHECK_LINE.findall(text)) >= 2:
        text = _CHECK_LINE.sub("- ", text)
    return _PICTOGRAPH.sub("", _CROSS_MARK.sub(r"\1", text)).strip()


# Transport artifacts (red team round 8). An entity of HTML: "&amp;", "&nbsp;", "&#8212;".
_ENTITY = re.compile(r"&(?:[a-z]{2,8}|#\d{2,6}|#x[0-9a-f]{2,5});", re.I)
# An ampersand between words, spaced ("W & T"): the word "and", as the joins read it; not
# inside a short form ("A&P", "D&C").
_AMPERSAND = re.compile(r"(?<=[^\W_])[ \t]+&[ \t]+(?=[^\W_])")
# A markdown link: its text is what the reader sees ("[T](https://...)", "[T](<url>)").
_LINK = re.compile(r"\[([^\[\]\n]{1,200})\]\(\s*<?(?:https?://|www\.|/)[^\s()<>]*>?\s*\)")
# A chat template's special token, with the role it opens ("<|im_start|>assistant",
# "<|start_header_id|>assistant<|end_header_id|>", "<start_of_turn>model", "</s>"): the
# template's, not the model's words.
_SPECIAL_TOKEN = re.compile(r"(?:<\|[a-z_]{2,30}\|>|<(?:start|end)_of_turn>|</s>)"
                            r"(?:[ \t]*(?:assistant|model)\b(?:<\|[a-z_]{2,30}\|>)?)?", re.I)
# A line break written as the two characters backslash and "n" (or "r", "t"): not before a
# small letter, which would be a LaTeX command ("\\neq", "\\text").
_ESCAPED_BREAK = re.compile(r"\\[nrt](?![a-z])")


# A byte-order mark or a word joiner left at the start of a decoded text: no character.
_INVISIBLE = re.compile("[\ufeff\u2060]")
# Full-width forms of ASCII (an East Asian input method's colon "\uff1a", brackets,
# letters) and the ideographic space: their ASCII characters, as Unicode's compatibility
# decomposition maps them (NFKC).
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


# Struck-through text ("~~W~~ T", GitHub Flavored Markdown's strikethrough extension;
# HTML's <del>; not <s>, a chat template's start token): what the writer deleted, as a line
# through an entry withdraws it in a clinical record. Read as not written (red team round
# 13): "~~W~~ T" answers T.
_STRUCK = re.compile(r"~~(?!~)[^~\n]{1,200}?~~|<del>[^<\n]{1,200}?</del>", re.I)


def untransported(text: str) -> str:
    """``text`` without the transport's artifacts: a byte-order mark gone, full-width forms as
    ASCII, HTML entities decoded (a spaced "&" read as "and"), markdown links as
    their text, a chat template's special tokens gone, escaped line breaks as line breaks,
    struck-through text gone."""
    text = _INVISIBLE.sub("", text).translate(_FULL_WIDTH)
    if "~~" in text or "<" in text:
        text = _STRUCK.sub("", text)
    if "&" in text:
        text = _AMPERSAND.sub(" and ", _ENTITY.sub(lambda m: html.unescape(m.group()), text))
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "<" in text:
        text = _SPECIAL_TOKEN.sub("\n", text)
    if "\\" in text:
        text = _ESCAPED_BREAK.sub(lambda m: {"n": "\n", "r": "\n", "t": " "}[m.group()[1]], text)
    return text


def untypeset(text: str) -> str:
    """``text`` without LaTeX's commands and math delimiters (their arguments kept), citation
    markers, a chat model's marks (:func:`unmarked`), and the line breaks inside a name at
    its hyphen."""
    text = unmarked(ticked(text))
    if "\\" in text or "$" in text:
        for _ in range(4):  # nested commands, innermost first; a bound, not a limit
            text, changed = _LATEX_COMMAND.subn(r"\1", text)
            if not changed:
                break
        text = _MATH_DELIMITER.sub("", text)
    if "." in text:
        text = _DOTTED.sub(lambda m: m.group().replace(".", ""), text)
    return _BROKEN_AT_HYPHEN.sub("-", _CITATION.sub("", text))


# An abbreviation written with a full stop after each capital ("A.L.L.", "F.T.D."): the
# typographic convention of older and British style for initialisms, the same letters as
# "ALL" (red team round 20). Capitals only: "e.g." and "i.e." stay, and so does a genus's
# initial before its species ("H. pylori": one letter).
# Not the Latin abbreviations in capitals ("E.G.", "I.E." of an answer all in capitals),
# which the reader reads as words of their own.
_DOTTED = re.compile(r"(?<![\w.])(?!(?:E\.G|I\.E)\.(?![A-Z]))(?:[A-Z]\.){2,8}(?![\w])")


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
