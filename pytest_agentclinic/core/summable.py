"""Records of counters that add up field by field: a transcript's usage, a process's model
calls, the run's progress.

One mixin instead of an ``__add__`` in each: ``a + b`` is a new record whose every field is
the sum of the two's, so a field added to such a record is summed without a change here.
Every field must be a count, a sum or itself summable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import TypeVar

from pydantic import BaseModel

_S = TypeVar("_S", bound="Summable")


class Summable:
    """Mix in before ``BaseModel`` or into a ``@dataclass``: ``a + b`` sums every field."""

    __slots__ = ()

    def __add__(self: _S, other: _S) -> _S:
        make: Callable[..., _S] = type(self)
        return make(**{name: getattr(self, name) + getattr(other, name)
                       for name in _field_names(self)})


def _field_names(record: object) -> Iterable[str]:
    if isinstance(record, BaseModel):
        return type(record).model_fields
    if dataclasses.is_dataclass(record):
        return [f.name for f in dataclasses.fields(record)]
    raise TypeError(f"{type(record).__name__} is neither a dataclass nor a pydantic model")
