"""A name the terminology does not know, read as the one known disease it is a usual form of
(stage 2, relate): a Latin binomial name is shortened to its noun, the epithet that follows
left out ("molluscum" for molluscum contagiosum, "lichen simplex" for lichen simplex
chronicus), where the sources name one disease so (:func:`epithet_left_out`).

It reads only a name no source lists, against a name the sources know: where the short name
is a disease of its own ("psoriasis" above psoriasis vulgaris), the hierarchy decides. Where
the sources give the short form to several diseases ("condyloma" latum and acuminatum), it
does not read it: which disease is meant is the writer's to say. (A second rule, an eponym
with another class word, raised only the studied fold of the dermatologists' dev half and
was dropped: docs/grading.md.)
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..terminology import GENERIC, Key, tokens
from ..wording import LATIN_ADJECTIVES
from .concepts import Terminology
from .name_parts import names_a_disease, ontology_of

__all__ = ["EPITHET_ENDINGS", "epithet", "epithet_left_out"]

#: Endings of the Latin adjectives and genitives that follow a disease's noun ("contagiosum",
#: "chronicus", "acuminatum", "suppurativa", "rheumatica", "gravidarum", "dorsalis",
#: "mellitus", "insipidus", "pectoris"), besides :data:`.wording.LATIN_ADJECTIVES`.
EPITHET_ENDINGS = ("osum", "osa", "osus", "atum", "ata", "atus", "icus", "ica", "icum",
                   "alis", "aris", "ilis", "ivus", "iva", "ivum", "itus", "ita", "idus",
                   "ida", "ans", "ens", "arum", "orum", "ium", "oris", "icis")
#: The Latin and Greek plurals of a noun's endings ("condylomata", "verrucae"): a source may
#: name a disease in the plural ("Condylomata Acuminata"), and that name is a rival too.
_PLURALS = (("ma", "mata"), ("um", "a"), ("us", "i"), ("a", "ae"))
#: The least a rival name needs to be in use: a disease's own (preferred) name, or a name two
#: sources give. One source's entry term alone may be obsolete ("molluscum fibrosum", MeSH's
#: old name of neurofibromatosis 1).
_IN_USE_SOURCES = 2
_WORDS = re.compile(r"[^\W\d_]+")


def epithet(word: str, terms: Terminology) -> bool:
    """Whether a normalised word is a Latin epithet: a Latin adjective or genitive by its
    form, that names no disease by itself and no place ICD-10-CM names conditions at."""
    return ((word in LATIN_ADJECTIVES or word.endswith(EPITHET_ENDINGS)) and len(word) >= 4
            and not names_a_disease(word, terms) and word not in terms.site_words
            and word not in GENERIC)


def epithet_left_out(given: str, truth: str, g: Key, t: Key, terms: Terminology) -> str | None:
    """Why one name is the other with its trailing Latin epithet(s) left out, its usual short
    form, or None. The short name no source lists; its words open the full name as written,
    the words after them epithets (:func:`epithet`); and of the names the sources give that
    are the short name and epithets, every one in use names the full name's disease."""
    for short, full, s_key, f_key in ((truth, given, t, g), (given, truth, g, t)):
        if not (s_key < f_key and terms.known(f_key)) or terms.known(s_key):
            continue
        s_words, f_words = _written(short), _written(full)
        extra = f_words[len(s_words):]
        if (f_words[:len(s_words)] != s_words or not extra
                or not all(epithet(w, terms) for w in (*extra, *(f_key - s_key)))):
            continue
        if _one_disease(_rivals(s_key, terms, lambda k: all(epithet(w, terms) for w in k)),
                        f_key, terms):
            return (f"{short!r} is the usual short form of {full!r}: its Latin epithet "
                    f"({' '.join(extra)}) left out, and the sources name no other disease so")
    return None


def _written(name: str) -> list[str]:
    # The words as written, each normalised alone: the key's words in the name's own order,
    # with no word between (no "of", no comma).
    return [w for part in _WORDS.findall(name.replace("-", " ")) for w in tokens(part)
            or [part.lower()]]


def _rivals(short: Key, terms: Terminology, extra_ok: Callable[[Key], bool]) -> list[Key]:
    """The names in use the sources give that are ``short`` and more words (which
    ``extra_ok`` accepts), its nouns in the singular or a Latin plural."""
    found: list[Key] = []
    for words in _forms(short):
        for name in terms.names_with(words):
            rest = name - words
            if rest and extra_ok(rest) and _in_use(name, terms):
                found.append(name)
    return found


def _forms(short: Key) -> list[Key]:
    forms = [short]
    for word in sorted(short):
        for singular, plural in _PLURALS:
            if word.endswith(singular):
                forms.append(short - {word} | {word[: -len(singular)] + plural})
                break
    return forms


def _in_use(name: Key, terms: Terminology) -> bool:
    tier, idents = terms.concepts(name)
    return tier == 0 or (tier <= 2 and len({ontology_of(i) for i in idents})
                         >= _IN_USE_SOURCES)


def _one_disease(names: list[Key], full: Key, terms: Terminology) -> bool:
    """Whether ``names`` name one disease, ``full``'s: one of them ``full`` or its synonym,
    each of the others a synonym of it, a kind of it or above it (a disease and its kinds
    are one disease, as for an abbreviation's senses)."""
    links = [None if name == full else terms.link(name, full) for name in names]
    if not any(name == full or (link is not None and link.kind == "synonym")
               for name, link in zip(names, links, strict=True)):
        return False
    return all(name == full or (link is not None and link.kind != "sibling")
               for name, link in zip(names, links, strict=True))
