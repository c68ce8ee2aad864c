"""Redaction follows the environment's credentials as they come, change and go, while other
variables change around them (pytest sets PYTEST_CURRENT_TEST around every phase)."""

from __future__ import annotations

import pytest

from pytest_agentclinic.core.redact import MASK, redact


def test_credentials_are_followed_through_environment_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, third = "abcd-efgh-ijkl", "mnop-qrst-uvwx", "yzab-cdef-ghij"
    monkeypatch.setenv("BENCH_API_KEY", first)
    assert redact(f"a {first} b") == f"a {MASK} b"
    monkeypatch.setenv("UNRELATED_SETTING", second)  # not a credential's name
    assert redact(f"{first} {second}") == f"{MASK} {second}"
    monkeypatch.setenv("BENCH_API_KEY", second)  # a value changed, no name
    assert redact(f"{first} {second}") == f"{first} {MASK}"
    monkeypatch.setenv("OTHER_TOKEN", third)  # a name added
    assert redact(f"{second} {third}") == f"{MASK} {MASK}"
    monkeypatch.delenv("OTHER_TOKEN")  # and removed
    assert redact(third) == third
    monkeypatch.delenv("BENCH_API_KEY")
    monkeypatch.setenv("BENCH_API_KEY", "short")  # removed, back too short to mask
    assert redact(f"{second} short") == f"{second} short"
    monkeypatch.setenv("bench_api_key", third)  # names are matched whatever their case
    assert redact(third) == MASK
