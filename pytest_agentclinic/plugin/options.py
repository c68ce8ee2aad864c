"""The ``--agent-*`` options and their ini twins, declared.

pytest declares them in every run its user makes, agents or not: this module imports only
the declarations (see ``benchmarks/bench_startup.py``); :mod:`.settings` resolves them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ..core.options import Option
from ..llm.transports import TRANSPORTS
from ..protocols import registry
from ..report.reducer_names import REDUCERS

OPTIONS: tuple[Option, ...] = (
    Option("doctor", "doctor model: 'offline' or a litellm model string (repeatable)",
           ["offline"], "list", "MODEL"),
    Option("patient", "patient model: 'offline' or a litellm model string (repeatable: one "
           "item per doctor x patient pair)", ["offline"], "list", "MODEL"),
    Option("turns", "doctor interaction budget(s), e.g. 20 or 10,20,30", [20], "ints", "N[,N]"),
    Option("protocol", "the benchmark protocol: agentclinic (default), craftmd, or one a plugin "
           "registers", "agentclinic", metavar="NAME"),
    Option("repeat", "samples per case (each its own item and cache entry)", 1, "int", "K"),
    Option("concurrency", "model calls in flight per process (items start ahead to fill them)",
           16, "int", "N"),
    Option("api_base", "API base URL for every LLM role (e.g. a local vLLM/Ollama server)",
           None, metavar="URL"),
    Option("timeout", "wall-clock deadline of one model call attempt, in seconds (a call past "
           "it is a retriable timeout, never cached)", 60.0, "float", "S"),
    Option("encounter_timeout", "wall-clock deadline of one whole encounter, in seconds (past "
           "it the item is an error)", 900.0, "float", "S"),
    Option("retries", "retries of a failed call (timeouts, 429, 5xx)", 3, "int", "N"),
    Option("backoff", "first retry delay in seconds (doubles, with jitter)", 1.0, "float", "S"),
    Option("retry_after_cap", "longest Retry-After to honour, in seconds", 30.0, "float", "S"),
    # -- transport: rate limits, deployments, the HTTP path (docs/transport.md)
    Option("rpm", "requests per minute the provider allows per model, for the whole run: "
           "split evenly over --agent-shard's N shards and xdist workers (or shared on "
           "--agent-limits-url); without "
           "--agent-rpm/--agent-tpm, calls in flight adapt to 429s and timeouts",
           None, "limit", "N"),
    Option("tpm", "tokens per minute the provider allows per model, for the whole run "
           "(split evenly over shards and xdist workers, or shared on --agent-limits-url)",
           None, "limit", "N"),
    Option("limits_url", "a Valkey/Redis server (redis://[:PASSWORD@]HOST:PORT/DB, or the "
           "environment's AGENTCLINIC_LIMITS_URL) that keeps one --agent-rpm/--agent-tpm "
           "schedule for every process of the run (xdist workers, shards on other machines) "
           "instead of an even share each; needs pip install 'pytest-agentclinic[redis]'",
           None, metavar="URL"),
    Option("models", "deployments file in litellm's model_list format (model_name, "
           "litellm_params, rpm/tpm): a role's model named there is served by litellm's Router",
           None, metavar="FILE"),
    Option("transport", "auto (an aiohttp fast path for openai/ and hosted_vllm/ models with "
           "--agent-api-base, litellm otherwise) or litellm (every call through litellm)",
           "auto", metavar="NAME", choices=TRANSPORTS),
    Option("temperature", "sampling temperature of every LLM role", 0.7, "float", "T"),
    Option("max_tokens", "max tokens per model reply", 512, "int", "N"),
    Option("max_reply_bytes", "largest model reply (or error body) read, in bytes: past it "
           "the call is an error for that item, never cached", 4_194_304, "int", "BYTES"),
    Option("cache", "response cache mode: read-write, replay, refresh or off", "read-write",
           metavar="MODE"),
    Option("cache_dir", "response cache directory", ".agentclinic_cache", metavar="DIR"),
    Option("report_dir", "where run directories are written", "reports", metavar="DIR"),
    Option("run_name", "name of this run's directory (default: a timestamp)", None,
           metavar="NAME"),
    Option("min_accuracy", "gate: the run fails when accuracy is below X (0..1)", None,
           "fraction", "X"),
    Option("baseline", "gate: a run directory (or its summary.json) to compare against", None,
           metavar="RUN"),
    Option("max_drop", "gate: the run fails when accuracy drops by more than D against the "
           "baseline and the drop is significant", None, "fraction", "D"),
    Option("gate_alpha", "gate: significance level of the baseline comparison", 0.05,
           "fraction", "P"),
    Option("gate_on", "gate: which conditions are gated, each doctor model on its own "
           "(repeatable): default (the unbiased condition, every other varied condition), "
           "all, pooled, or FIELD=VALUE (patient, bias, turn_budget, experiment, "
           "answer_format)", ["default"], "list", "SPEC"),
    # Operations (many machines, progress, cost): resolved by :func:`_operations`.
    Option("shard", "run only shard K of N (1-based), chosen by a stable hash of each case's "
           "id, so every variant of a case lands in one shard; merge the shards' runs with "
           "'agentclinic merge'", None, metavar="K/N"),
    Option("progress", "status line: 'auto' (live on a terminal, a line every 30 s "
           "otherwise), 'off', or a number of seconds between lines", "auto",
           metavar="auto|off|S"),
    Option("max_cost", "start no new encounter once the spent plus in-flight cost (USD) "
           "would pass this; encounters already started finish, so the run may overshoot "
           "by up to --agent-concurrency encounters per worker (more for CRAFT-MD's shared "
           "conversations)", None, metavar="USD"),
    # A smoke run on a few cases (plugin/subset.py); the gate refuses to pass a subset.
    Option("limit", "run only the first N selected cases (after -k/-m), every item of each",
           None, "limit", "N"),
    Option("sample", "run a random N of the selected cases, stratified by specialty "
           "(reproducible with --agent-seed)", None, "limit", "N"),
    Option("seed", "seed of --agent-sample", 0, "int0", "S"),
    Option("gate_allow_subset", "gate: whether a run of --agent-limit/--agent-sample cases "
           "may pass (yes or no)", "no", metavar="yes|no", choices=("yes", "no")),
    Option("gate_reducer", "gate: which reducer over a case's --agent-repeat trials the "
           "minimum accuracy applies to: mean, pass@k, majority or all", "mean",
           metavar="NAME", choices=REDUCERS),
    # Per-encounter budgets: past one the encounter ends with the outcome 'limit'.
    Option("max_tokens_per_encounter", "end an encounter once its calls used more tokens "
           "than this (outcome 'limit': neither a misdiagnosis nor an error)", None, "limit",
           "N"),
    Option("max_cost_per_encounter", "end an encounter once its calls cost more than USD "
           "(outcome 'limit')", None, "limit", "USD"),
    # How a broader answer is graded (docs/grading.md): the experts' rule, or CRAFT-MD's.
    Option("grading_policy", "strict (a broader answer counts when it names one disease with "
           "its variants, not a family) or paper (any broader name counts, as CRAFT-MD's "
           "grader)", "strict", metavar="strict|paper", choices=("strict", "paper")),
)


OPTION_BY_NAME = {opt.name: opt for opt in OPTIONS}


def add_options(parser: pytest.Parser, options: Sequence[Option] | None = None) -> None:
    """Register the ``--agent-*`` group and the ini twins: the run's options and every
    registered protocol's (or only ``options``, for a protocol registered later)."""
    group = parser.getgroup("agentclinic", "AgentClinic encounters")
    # A protocol registered by an earlier import (a conftest seen before) is already here.
    added = {name for argument in group.options for name in argument.names()}
    for opt in options if options is not None else (*OPTIONS, *registry.all_options()):
        if opt.flag in added:
            continue
        added.add(opt.flag)
        action = "append" if opt.kind == "list" else "store"
        group.addoption(opt.flag, action=action, dest="agent_" + opt.name, default=None,
                        metavar=opt.metavar, help=f"{opt.help} (ini: {opt.ini})")
        if opt.kind == "list":
            parser.addini(opt.ini, opt.help, type="linelist", default=None)
        else:
            parser.addini(opt.ini, opt.help, type="string", default=None)
    if options is not None:
        return
    # Case files are collected only from paths given on the command line or listed here,
    # so a plain ``pytest`` in a repository that merely uses the plugin runs no encounters.
    parser.addini("agent_cases", "case files or folders a plain `pytest` collects (paths "
                  "relative to the ini file)", type="paths", default=[])
