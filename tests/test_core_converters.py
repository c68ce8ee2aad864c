"""core/converters.py: one converter per kind of option value, shared by the ``--agent-*``
options (plugin/options.py), the commands' arguments (commands/_args.py) and the
CallSettings builder (llm/call_options.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from pytest_agentclinic.cli import main
from pytest_agentclinic.commands._args import CALL_ARGUMENTS
from pytest_agentclinic.core import converters as c
from pytest_agentclinic.core.options import Option
from pytest_agentclinic.llm.call_options import call_settings
from pytest_agentclinic.plugin import options as o


@pytest.mark.parametrize(("convert", "given", "expected"), [
    (c.count(0), "0", 0), (c.count(1), " 7 ", 7), (c.count(1), 3, 3),
    (c.number(0.0), "0", 0.0), (c.duration, "2.5", 2.5), (c.delay, "0", 0.0),
    (c.fraction, "1", 1.0), (c.fraction, "0.25", 0.25),
    (c.optional(c.positive), "", None), (c.optional(c.positive), None, None),
    (c.optional(c.positive), "5", 5.0),
    (c.counts(1), "10,20, 30", (10, 20, 30)), (c.counts(1), [20], (20,)),
    (c.choice(("a", "b")), " b", "b"), (c.shard, "2/4", (2, 4)),
    (c.progress, "auto", None), (c.progress, "OFF", 0.0), (c.progress, "0.5", 0.5),
    (c.api_base, "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    (c.path, "out/x", Path("out/x")), (c.model, " openai/x ", "openai/x"),
    (c.Repeated(c.model), ["a", " ", "b", "a"], ("a", "b")),
])
def test_a_value_allowed_is_converted_to_its_type(convert: Any, given: object,
                                                  expected: object) -> None:
    assert convert(given) == expected


@pytest.mark.parametrize(("convert", "given", "message"), [
    (c.count(1), "0", "expected a whole number >= 1, got '0'"),
    (c.count(0), "1.5", "expected a whole number >= 0, got '1.5'"),
    (c.count(1), "many", "expected a whole number >= 1, got 'many'"),
    (c.duration, "0", "expected a number of seconds > 0, got '0'"),
    (c.duration, "nan", "expected a number of seconds > 0, got 'nan'"),
    (c.delay, "-1", "expected a number of seconds >= 0, got '-1'"),
    (c.optional(c.positive), "0", "expected a number > 0, got '0'"),
    (c.fraction, "1.5", "expected a fraction between 0 and 1, got '1.5'"),
    (c.choice(("auto", "litellm")), "curl", "'curl' is not one of: auto, litellm"),
    (c.counts(1), "10,0", "expected a whole number >= 1, got '0'"),
    (c.shard, "5/4", "expected K/N with 1 <= K <= N (e.g. 2/4), got '5/4'"),
    (c.progress, "-2", "expected auto, off or a number of seconds > 0, got '-2'"),
    (c.api_base, "localhost:8000", "expected an http:// or https:// URL with a host"),
    (c.api_base, "http://h:port/v1", "the port of 'http://h:port/v1' is not a number"),
    (c.model, "  ", "give 'offline' or a litellm model string"),
    (c.Repeated(c.text, required=True), ["", " "], "give at least one value"),
])
def test_a_value_refused_names_what_is_allowed(convert: Any, given: object,
                                               message: str) -> None:
    with pytest.raises(c.OptionValueError) as refused:
        convert(given)
    assert str(refused.value).startswith(message)


def test_credentials_in_a_url_are_refused_without_echoing_them() -> None:
    with pytest.raises(ValueError) as refused:
        c.api_base("http://user:PASSW0RD@127.0.0.1:9/v1")
    assert "credentials in the URL" in str(refused.value)
    assert "PASSW0RD" not in str(refused.value)


def test_legacy_kind_names_still_declare_a_protocols_options() -> None:
    assert Option("n", "", 30, "int").convert("4") == 4
    assert Option("r", "", 3, "int0").convert("0") == 0
    assert Option("p", "", 0.8, "fraction").convert("0.5") == 0.5
    assert Option("m", "", ["x"], "list").convert(["a", "a"]) == ("a",)
    with pytest.raises(ValueError, match="give at least one value"):
        Option("m", "", ["x"], "list").convert([""])
    assert Option("m", "", [], "list", choices=("a",)).convert([]) == ()
    with pytest.raises(ValueError, match="'b' is not one of: a"):
        Option("m", "", [], "list", choices=("a",)).convert(["b"])
    with pytest.raises(ValueError, match="unknown kind 'integer'"):
        Option("n", "", 1, "integer").convert("1")


def test_repeatable_options_are_those_of_a_repeated_converter() -> None:
    assert o.DOCTOR.repeatable and o.GATE_ON.repeatable and Option("x", "", [], "list").repeatable
    assert not o.TURNS.repeatable and not o.RETRIES.repeatable


@pytest.mark.parametrize(("name", "option"), [
    ("api_base", o.API_BASE), ("timeout", o.TIMEOUT), ("retries", o.RETRIES),
    ("backoff", o.BACKOFF), ("temperature", o.TEMPERATURE), ("max_tokens", o.MAX_TOKENS)])
@pytest.mark.parametrize("given", ["0", "-1", "x", "http://u:PASSW0RD@h/v1", "ftp://h"])
def test_the_commands_and_the_pytest_options_take_the_same_values(
        name: str, option: Option[Any], given: str) -> None:
    """Each model-call argument of the commands converts as its ``--agent-*`` twin: the same
    value, or the same refusal."""
    parse = CALL_ARGUMENTS[name].type
    try:
        expected: object = option.convert(given)
    except ValueError as exc:
        with pytest.raises(argparse.ArgumentTypeError) as refused:
            parse(given)
        assert str(refused.value) == str(exc)
    else:
        assert parse(given) == expected


def test_the_call_settings_builder_checks_each_value_and_counts_attempts() -> None:
    settings = call_settings(api_base="http://127.0.0.1:9/v1", retries=0, backoff=0,
                             timeout=2.5, max_tokens=64)
    assert settings.policy.attempts == 1 and settings.policy.backoff == 0.0
    assert settings.timeout == 2.5 and settings.sampling["max_tokens"] == 64
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"timeout": 0}, "timeout: expected a number of seconds > 0"),
        ({"retries": -1}, "retries: expected a whole number >= 0"),
        ({"transport": "curl"}, "transport: 'curl' is not one of"),
        ({"api_base": "http://k:SECRET@h/v1"}, "api_base: credentials")]
    for bad, message in refusals:
        with pytest.raises(c.OptionValueError) as refused:
            call_settings(**bad)
        assert str(refused.value).startswith(message) and "SECRET" not in str(refused.value)


@pytest.mark.parametrize("command", [
    ["play", "no-such-case.yaml", "--role", "doctor"],
    ["patient-check", "--model", "openai/x", "--vignettes", "no-such.csv"],
    ["meld", "--model", "openai/x", "no-such-cases.csv"],
])
def test_every_command_refuses_credentials_in_the_api_base(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: pytest and ``meld`` refused them, ``play`` and ``patient-check`` took them."""
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--api-base", "http://u:PASSW0RD@127.0.0.1:9/v1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--api-base: credentials in the URL" in err and "PASSW0RD" not in err


@pytest.mark.parametrize("command", [
    ["play", "no-such-case.yaml", "--role", "doctor", "--patient", " "],
    ["patient-check", "--model", "", "--vignettes", "no-such.csv"],
    ["meld", "--model", "openai/x", "--timeout", "0", "no-such-cases.csv"],
])
def test_the_commands_refuse_what_the_pytest_options_refuse(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(command)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert ("give 'offline' or a litellm model string" in err
            or "expected a number of seconds > 0, got '0'" in err)
