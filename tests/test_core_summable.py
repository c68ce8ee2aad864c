"""Records of counters that add up field by field, dataclasses and pydantic models alike."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from pydantic import BaseModel

from pytest_agentclinic.core.summable import Summable


@dataclass
class _Inner(Summable):
    n: int = 0
    usd: float = 0.0


@dataclass
class _Outer(Summable):
    done: int = 0
    inner: _Inner = field(default_factory=_Inner)


class _Model(Summable, BaseModel):
    calls: int = 0
    cost_usd: float = 0.0


def test_every_field_is_summed_nested_records_too() -> None:
    total = _Outer(1, _Inner(2, 0.25)) + _Outer(3, _Inner(4, 0.5))
    assert total == _Outer(4, _Inner(6, 0.75)) and type(total) is _Outer


def test_a_pydantic_model_sums_its_fields() -> None:
    total = _Model(calls=1, cost_usd=0.5) + _Model(calls=2)
    assert (type(total), total.calls, total.cost_usd) == (_Model, 3, 0.5)


def test_a_record_of_no_known_kind_is_refused() -> None:
    class Plain(Summable):
        pass

    with pytest.raises(TypeError, match="Plain is neither a dataclass nor a pydantic model"):
        Plain() + Plain()
