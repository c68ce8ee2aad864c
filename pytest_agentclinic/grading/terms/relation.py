"""What stage 2 (relate) says of two names: the relation's kind, why, and how sure the rules
are (:class:`Relation` for one form of the truth, :class:`Equivalence` for the verdict over
all of them). Types only, below :mod:`.equivalence` which decides them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RelationKind = Literal["same", "synonym", "broader", "narrower", "sibling", "qualifier-flip",
                       "related", "different"]


@dataclass(frozen=True)
class Equivalence:
    """Whether a given name is right for the truth, how they relate and why."""

    correct: bool
    relation: RelationKind
    reason: str
    #: False when the rules had to guess (a partial overlap): the case for asking a model.
    sure: bool = True
    #: A broader name of a family of diseases (see :attr:`Relation.family`).
    family: bool = False
    #: For a broader name placed by a hierarchy: levels above the truth, concepts below it.
    height: int | None = None
    breadth: int | None = None


@dataclass(frozen=True)
class Relation:
    """How one name relates to one form of the truth, why, and whether that is certain."""

    kind: RelationKind
    reason: str
    sure: bool = True
    #: False when one source alone states the hierarchy (any one of them holds slips).
    curated: bool = True
    #: For a broader name: True when it names a family of diseases rather than one disease
    #: with its variants (see :data:`.by_words.FAMILY_BREADTH`); the strict policy rejects those.
    family: bool = False
    #: For a broader name placed by a hierarchy: levels above the truth, concepts below it.
    height: int | None = None
    breadth: int | None = None
