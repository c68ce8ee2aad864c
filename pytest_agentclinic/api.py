"""The public extension API: what a ``conftest.py`` or a plugin needs to add an agent or a
protocol. Everything here is stable; the modules it comes from are not.

**Adding an agent.** Implement the hook in a conftest::

    from pytest_agentclinic.api import Reply

    class Oracle:
        model = "oracle"
        prompt_version = "1"
        async def respond(self, view):
            return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

    def pytest_agentclinic_make_agent(role, model, case, bias, config):
        return Oracle() if role == "doctor" else None

The hook is asked for every role of the run's protocol; what it returns must implement the
role's interface (:func:`role_interfaces`), or the item ends as an error naming the role.

**Adding a protocol.** Subclass :class:`Protocol` (its options, its roles, :meth:`~Protocol.
expand` a file's cases into items, :meth:`~Protocol.play` an item into a :class:`Transcript`,
optionally its report :meth:`~Protocol.tables`), then :func:`register_protocol` it and run
``pytest --agent-protocol=<name>``. Its records, reports, ``agentclinic compare`` and the gate
work as for the built-in protocols. A conftest that declares options also calls
:func:`add_protocol_options` from its ``pytest_addoption``. A distribution declares it in
the ``pytest_agentclinic.protocols`` entry-point group instead (and case formats in
``pytest_agentclinic.case_formats``, report tables in ``pytest_agentclinic.report_tables``,
JSON-lines record shapes, recognised by their keys, in ``pytest_agentclinic.jsonl_shapes``);
docs/extending.md walks through a complete one, docs/mediq.md through a real benchmark. A
protocol calls models with :func:`ask_model`.

**Without pytest.** :func:`load_cases` reads a case file, :func:`play_encounter` plays one
case through a protocol with the agents given, :func:`grade_free_response` and
:func:`grade_multiple_choice` grade an answer, :func:`read_records` / :func:`write_records`
read and write ``results.jsonl``, and :func:`build_report` makes a run's tables from records.

**Stability.** Every name in ``__all__`` is stable: it keeps its meaning and signature
within a major version (new keyword arguments get defaults; removals are announced in
CHANGELOG.md a minor version ahead). The modules these names come from are internal.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # What type checkers see; at run time each name is imported on first use (PEP 562,
    # :func:`__getattr__` below, from ``_LAZY``): an installed protocol's module imports this
    # one in every pytest run of its environment, which must not pay for pydantic models,
    # grading, reports and the HTTP clients it does not use.
    from .cases.errors import CaseError
    from .cases.formats import JsonlShape, RecordReader, register_jsonl_shape
    from .cases.formats import register as register_case_format
    from .core.case import Case
    from .core.errors import AgentClinicError, ExtensionError, InputError
    from .core.measures import EncounterMeasures
    from .core.options import Option
    from .core.records import ResultRecord
    from .core.roles import OFFLINE, Agent, Judgement, Moderator, Reply, TurnView
    from .core.transcript import (
        KNOWN_KINDS,
        KNOWN_ROLES,
        ItemHeader,
        Transcript,
        Usage,
        Utterance,
        Verdict,
    )
    from .grading.judging.pipeline import Grade
    from .grading.judging.pipeline import grade_choice as grade_multiple_choice
    from .protocols.base import ItemSpec, PlayContext, Protocol, RoleSpec, RunOptions, Wording
    from .protocols.registry import get as get_protocol
    from .protocols.registry import names as protocol_names
    from .protocols.registry import register as register_protocol
    from .protocols.runner import settled
    from .report.table_registry import TableBuilder
    from .report.table_registry import register as register_report_tables
    from .report.tables import Table

__all__ = [
    "KNOWN_KINDS", "KNOWN_ROLES", "OFFLINE", "Agent", "AgentClinicError", "Case", "CaseError",
    "EncounterMeasures", "ExtensionError", "Grade", "InputError", "ItemHeader", "ItemSpec",
    "JsonlShape", "Judgement", "Moderator", "Option",
    "PlayContext",
    "Protocol", "RecordReader", "Reply", "ResultRecord", "RoleSpec", "RunOptions", "Table",
    "TableBuilder", "Transcript", "TurnView", "Usage", "Utterance", "Verdict", "Wording",
    "add_protocol_options", "ask_model", "build_report", "get_protocol", "grade_free_response",
    "grade_multiple_choice", "load_cases", "play_encounter", "protocol_names",
    "read_records", "register_case_format", "register_jsonl_shape", "register_protocol",
    "register_report_tables",
    "role_interfaces", "settled", "write_records",
]

def _from(module: str, *names: str) -> dict[str, tuple[str, str]]:
    return {name: (module, name) for name in names}


#: Each name imported on first use: name -> (module, its name there). The same as the
#: ``TYPE_CHECKING`` imports above (tests/test_plugin_startup.py checks that they agree).
_LAZY: dict[str, tuple[str, str]] = {
    **_from(".cases.errors", "CaseError"),
    **_from(".cases.formats", "JsonlShape", "RecordReader", "register_jsonl_shape"),
    "register_case_format": (".cases.formats", "register"),
    **_from(".core.case", "Case"),
    **_from(".core.errors", "AgentClinicError", "ExtensionError", "InputError"),
    **_from(".core.measures", "EncounterMeasures"),
    **_from(".core.options", "Option"),
    **_from(".core.records", "ResultRecord"),
    **_from(".core.roles", "OFFLINE", "Agent", "Judgement", "Moderator", "Reply", "TurnView"),
    **_from(".core.transcript", "KNOWN_KINDS", "KNOWN_ROLES", "ItemHeader", "Transcript",
            "Usage", "Utterance", "Verdict"),
    **_from(".grading.judging.pipeline", "Grade"),
    #: Grade a multiple-choice answer (letter, option text or paraphrase) against the truth.
    "grade_multiple_choice": (".grading.judging.pipeline", "grade_choice"),
    **_from(".protocols.runner", "settled"),
    **_from(".protocols.base", "ItemSpec", "PlayContext", "Protocol", "RoleSpec",
            "RunOptions", "Wording"),
    "get_protocol": (".protocols.registry", "get"),
    "protocol_names": (".protocols.registry", "names"),
    "register_protocol": (".protocols.registry", "register"),
    **_from(".report.table_registry", "TableBuilder"),
    "register_report_tables": (".report.table_registry", "register"),
    **_from(".report.tables", "Table"),
}

if not TYPE_CHECKING:  # a type checker sees the imports above, and no catch-all

    def __getattr__(name: str) -> Any:
        """A public name, imported from its module on first use (then a plain attribute)."""
        try:
            module, attr = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, __package__), attr)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


async def grade_free_response(answer: str, case: Case, moderator: Moderator | None = None,
                              sample: int = 0) -> Grade:
    """Grade a free-text final answer against ``case`` through the pipeline both built-in
    protocols use: extraction (single / multiple / none), the rules, and ``moderator`` (a
    model, or a conftest's) for what the rules cannot decide; offline by default."""
    from .grading.judging.moderator import OfflineModerator
    from .grading.judging.pipeline import grade_answer

    return await grade_answer(answer, case, moderator or OfflineModerator(), sample)


async def ask_model(ctx: PlayContext, *, role: str, model: str,
                    messages: list[dict[str, Any]], case_id: str, sample: int,
                    prompt_version: str) -> Reply:
    """Ask ``model`` (a litellm model string) for the reply to chat ``messages``, as the
    built-in LLM agents do: through the run's caller, so the response cache, retries,
    ``--agent-api-base``, the encounter's token and cost limits and the usage counts apply.
    ``role``, ``case_id``, ``sample`` and ``prompt_version`` enter the cache key. A failure
    raises (inside :func:`settled` the item becomes an *error*)."""
    return await ctx.caller.complete(role=role, model=model, messages=messages,
                                     case_id=case_id, sample=sample,
                                     prompt_version=prompt_version)


def role_interfaces(protocol: str) -> dict[str, type]:
    """Each role of ``protocol`` and the interface its agent must implement."""
    from .protocols.registry import get as get_protocol

    return {role.name: role.interface for role in get_protocol(protocol).roles}


def add_protocol_options(parser: Any, protocol: type[Protocol]) -> None:
    """Add ``protocol``'s ``--agent-*`` options (call from a conftest's ``pytest_addoption``;
    the plugin has added its own and the built-in protocols' by then)."""
    from .plugin.options import add_options

    add_options(parser, protocol.options)


def load_cases(path: str | Path) -> tuple[list[Case], list[CaseError]]:
    """The cases of one case file (any supported format, an extension's included) and its
    bad records, each naming file, line and field; nothing is raised for bad input."""
    from .cases.errors import CaseError
    from .cases.loaders import load_case_file

    loaded = load_case_file(Path(path))
    errors = list(loaded.errors)
    if loaded.not_cases is not None and not errors:
        errors.append(CaseError(Path(path), 1, "<file>", f"not a case file: "
                                                          f"{loaded.not_cases}"))
    return [case for _, case in loaded.cases], errors


def _defaults(protocol: type[Protocol]) -> dict[str, Any]:
    """Each of the protocol's options at its default, as the pytest layer resolves it."""
    out = {}
    for opt in protocol.options:
        value = tuple(opt.default) if isinstance(opt.default, list) else opt.default
        out[opt.name] = opt.check(value) if opt.check is not None else value
    return out


async def play_encounter(protocol: str, case: Case, agents: Mapping[str, object], *,
                         turn_budget: int = 20, sample: int = 0,
                         options: Mapping[str, Any] | None = None) -> Transcript:
    """Play ``case`` once through ``protocol`` (a registered name) with ``agents`` (role ->
    agent; the roles left out get the built-in offline agent) and return its transcript.

    ``options`` are the protocol's option values, as converted (its defaults otherwise).
    The first item the protocol makes of the case is played, under its first condition.
    """
    from .llm.cache import CacheMode, ResponseCache
    from .llm.call_options import call_settings
    from .llm.caller import ModelCaller
    from .protocols.base import PlayContext, RunOptions
    from .protocols.registry import get as get_protocol

    kind = get_protocol(protocol)
    opts = {**_defaults(kind), **(options or {})}
    proto = kind()
    run = RunOptions(turns=(turn_budget,), options=opts)
    item = next(iter(proto.expand([case], run)), None)
    if item is None:
        raise ValueError(f"protocol {protocol!r} makes no item of case {case.id!r}")

    def make_agent(role: str, model: str, case: Case, bias: str) -> object | None:
        del model, case, bias
        return agents.get(role)

    # No model is called unless a role is left to a built-in LLM agent (none is: every
    # model here is offline), so the caller caches nothing.
    caller = ModelCaller(call_settings(), ResponseCache(Path("."), CacheMode.OFF))
    return await proto.play(item, PlayContext(caller, make_agent, opts))


def read_records(path: str | Path) -> list[ResultRecord]:
    """The records of a run directory or its ``results.jsonl``; ValueError naming the line
    of a bad one."""
    from .runs import directory

    return directory.load_records(directory.results_path(path))


def write_records(run_dir: str | Path, records: Sequence[ResultRecord]) -> Path:
    """Write ``records`` as ``run_dir/results.jsonl`` (atomically, secrets redacted), what
    ``agentclinic report`` and :func:`read_records` read; returns the file written."""
    from .runs import directory, results

    results.write_results(Path(run_dir), records)
    return directory.results_path(run_dir)


def build_report(records: Sequence[ResultRecord], resamples: int = 10_000) -> list[Table]:
    """Every table of a run from its records: the common ones and each protocol's own
    (installed protocols' included), as ``agentclinic report`` prints them."""
    from .protocols.registry import report_tables

    return report_tables(records, resamples)
