"""Multiple-choice replies: which option did a free-text reply choose?

Deterministic, in order of confidence:

1. a letter or number alone or announced ("B", "(b)", "Option C", "Answer: 2");
2. an option's text, exactly or inside the reply (the earliest mention wins; one option's
   text inside another's, "eclampsia" in "preeclampsia", counts for the longer one only;
   options the reply rejects, "rather than X", are skipped);
3. a paraphrase: the reply's diagnosis is the same condition as exactly one option (by the
   free-response equivalence rules), or shares clearly more words with one option than with
   any other;
4. otherwise, and for refusals ("none of the options", "cannot determine"), no choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ...core.text import bounded_cache
from ..terminology import content, tokens
from ..terms.equivalence import judge
from .extract import extract
from .refusals import is_refusal
from .statement import clean, statement

How = Literal["letter", "text", "paraphrase", "refusal", "unmatched"]


@dataclass(frozen=True)
class Choice:
    """The option a reply chose (``index`` None when it chose none) and how it was read."""

    index: int | None
    how: How
    reason: str

    @property
    def sure(self) -> bool:
        """Letters, option texts and refusals are read for certain; paraphrases are not."""
        return self.how in ("letter", "text", "refusal")


_FINAL = re.compile(r"\b(?:final\s+)?(?:diagnosis|answer|choice|option)\s*(?:is)?\s*[:\-]\s*",
                    re.I)
# "B", "(b)", "Option C", "Answer: 2" alone; "B. Psoriasis" when B is psoriasis.
_ANNOUNCED = re.compile(r"^\W*(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*(?:is\s*)?"
                        r"[:\-]?\s*)\(?([A-Da-d1-4])\)?\W*$", re.I)
_ALONE = re.compile(r"^\W*\(?([A-Da-d])\)?\W*$")
_LEADING_LETTER = re.compile(r"^\W*\(?([A-Da-d])[).:]\s+(\S.*)$", re.S)
_NONE_OF = re.compile(r"\bnone\s+of\s+the\s+(?:above|options|choices|listed|provided|given)"
                      r"|\bnot\s+(?:listed|among)\b|\bno\s+(?:correct\s+)?(?:option|choice)", re.I)
_REJECTED = re.compile(r"(?:rather\s+than|instead\s+of|not|unlikely|ruled?\s+out|less\s+likely"
                       r"|versus|vs\.?|excluding|over)\s*$", re.I)


def clean_option(option: str) -> str:
    """An option as written, without the stray quotes and line breaks some datasets carry."""
    return option.strip().strip("\"'").strip()


def choose(response: str, options: Sequence[str]) -> Choice:
    """The option ``response`` chose among ``options``."""
    return _choose(response, tuple(clean_option(o) for o in options))


@bounded_cache
def _choose(response: str, options: tuple[str, ...]) -> Choice:
    text = clean(response)
    answer = _answer_part(text)
    letter = _letter(answer, options)
    if letter is not None:
        return letter
    by_text = _by_text(answer, options) or _by_text(text, options)
    if by_text is not None:
        return by_text
    if _NONE_OF.search(text) or (is_refusal(text) and extract(response).category != "single"):
        return Choice(None, "refusal", "the reply chose no option")
    return _by_paraphrase(response, options)


def _answer_part(text: str) -> str:
    marker = _FINAL.search(text)
    return text[marker.end():].strip() if marker is not None else text


def _letter(answer: str, options: tuple[str, ...]) -> Choice | None:
    """A choice made by letter or number; None when the reply does not answer that way."""
    found = _ANNOUNCED.match(answer) or _ALONE.match(answer)
    if found is None:
        leading = _LEADING_LETTER.match(answer)
        # "C. difficile colitis" is a name, not option C: the letter must agree with its text.
        if leading is None:
            return None
        index = _letter_index(leading.group(1))
        named = _by_text(leading.group(2), options)
        if named is None or named.index != index:
            return None
        found = leading
    index = _letter_index(found.group(1))
    if index >= len(options):
        return None
    return Choice(index, "letter", f"letter {chr(65 + index)}")


def _letter_index(mark: str) -> int:
    return int(mark) - 1 if mark.isdigit() else ord(mark.upper()) - ord("A")


def _by_text(text: str, options: tuple[str, ...]) -> Choice | None:
    """The option whose words the reply contains, earliest first."""
    words = " " + " ".join(tokens(text)) + " "
    found: list[tuple[int, int, int]] = []  # (position, -length, index)
    for index, option in enumerate(options):
        needle = " " + " ".join(tokens(option)) + " "
        if needle.strip() and needle in words:
            position = words.index(needle)
            if not _REJECTED.search(words[:position]):
                found.append((position, -len(needle), index))
    found = [f for f in found if not _inside_another(f, found, options)]
    if not found:
        return None
    index = min(found)[2]
    return Choice(index, "text", f"names option {chr(65 + index)}")


def _inside_another(item: tuple[int, int, int], found: list[tuple[int, int, int]],
                    options: tuple[str, ...]) -> bool:
    # "eclampsia" is found inside "preeclampsia": only the longer option was named.
    position, neg_length, _ = item
    return any(p <= position and p - n >= position - neg_length and (p, n) != (position, neg_length)
               for p, n, _ in found)


def _by_paraphrase(response: str, options: tuple[str, ...]) -> Choice:
    """The one option the reply's diagnosis is equivalent to, or a clear word-overlap winner."""
    extraction = extract(response)
    named = [m.text for m in extraction.mentions if m.role in ("main", "alias", "refinement")]
    named = named or [statement(clean(response))]
    same = sorted({i for i, option in enumerate(options) for name in named
                   if judge(name, option).relation in ("same", "synonym")})
    if len(same) == 1:
        return Choice(same[0], "paraphrase", f"same condition as option {chr(65 + same[0])}")
    scores = sorted(((_overlap(named[0], option), i) for i, option in enumerate(options)),
                    reverse=True)
    (best, index), (second, _) = scores[0], scores[1] if len(scores) > 1 else (0.0, -1)
    if best >= 0.5 and best - second >= 0.25:
        return Choice(index, "paraphrase", f"closest wording to option {chr(65 + index)}")
    return Choice(None, "unmatched", "no option recognised in the reply")


def _overlap(name: str, option: str) -> float:
    a, b = set(content(name)), set(content(option))
    return len(a & b) / len(a | b) if a and b else 0.0


def is_correct(choice: Choice, options: Sequence[str], correct_answer: str, *,
               response: str = "", verbatim: bool = False) -> bool:
    """Whether the chosen option is the correct answer (compared as normalised text).

    ``verbatim`` adds the published CRAFT-MD pipeline's condition: the correct answer, exactly
    as the dataset spells it, must occur in the reply (case aside). Some answers carry stray
    characters (a trailing quote or line break, a curly apostrophe), so this counts fewer
    replies right; it is there to reproduce the paper's table, not to grade.
    """
    if choice.index is None:
        return False
    # Case aside: datasets lower-case the answer ("toxic epidermal necrolysis (ten)"), and
    # "ten" is then no acronym to expand where the option's "TEN" is.
    right = (tokens(clean_option(options[choice.index]).lower())
             == tokens(clean_option(correct_answer).lower()))
    return right and (not verbatim or correct_answer.lower() in response.lower())
