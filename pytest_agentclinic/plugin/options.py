"""The ``--agent-*`` options and their ini twins, declared.

pytest declares them in every run its user makes, agents or not: this module imports only
the declarations (see ``benchmarks/bench_startup.py``); :mod:`.settings` resolves them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ..core import converters as c
from ..core.converters import Repeated
from ..core.options import Option
from ..llm.modes import CACHE_MODES, TRANSPORTS
from ..protocols import registry
from ..report.reducer_names import REDUCERS

# Each option is a constant typed by its converter (``Option[int]``...): the settings read
# ``given(RETRIES)`` as an int, and mypy checks every such read.
DOCTOR = Option("doctor", "doctor model: 'offline' or a litellm model string (repeatable)",
                ["offline"], Repeated(c.model, required=True), "MODEL")
PATIENT = Option("patient", "patient model: 'offline' or a litellm model string (repeatable: "
                 "one item per doctor x patient pair)", ["offline"],
                 Repeated(c.model, required=True), "MODEL")
TURNS = Option("turns", "doctor interaction budget(s), e.g. 20 or 10,20,30", [20], c.counts(1),
               "N[,N]")
PROTOCOL = Option("protocol", "the benchmark protocol: agentclinic (default), craftmd, or one "
                  "a plugin registers", "agentclinic", c.text, "NAME")
REPEAT = Option("repeat", "samples per case (each its own item and cache entry)", 1,
                c.count(1), "K")
CONCURRENCY = Option("concurrency", "model calls in flight per process (items start ahead to "
                     "fill them)", 16, c.count(1), "N")
API_BASE = Option("api_base", "API base URL for every LLM role (e.g. a local vLLM/Ollama "
                  "server)", None, c.optional(c.api_base), "URL")
TIMEOUT = Option("timeout", "wall-clock deadline of one model call attempt, in seconds (a call "
                 "past it is a retriable timeout, never cached)", 60.0, c.duration, "S")
ENCOUNTER_TIMEOUT = Option("encounter_timeout", "wall-clock deadline of one whole encounter, "
                           "in seconds (past it the item is an error)", 900.0, c.duration, "S")
RETRIES = Option("retries", "retries of a failed call (timeouts, 429, 5xx)", 3, c.count(0), "N")
BACKOFF = Option("backoff", "first retry delay in seconds (doubles, with jitter)", 1.0, c.delay,
                 "S")
RETRY_AFTER_CAP = Option("retry_after_cap", "longest Retry-After to honour, in seconds", 30.0,
                         c.delay, "S")
# -- transport: rate limits, deployments, the HTTP path (docs/transport.md)
RPM = Option("rpm", "requests per minute the provider allows per model, for the whole run: "
             "split evenly over --agent-shard's N shards and xdist workers (or shared on "
             "--agent-limits-url); without --agent-rpm/--agent-tpm, calls in flight adapt to "
             "429s and timeouts", None, c.optional(c.positive), "N")
TPM = Option("tpm", "tokens per minute the provider allows per model, for the whole run "
             "(split evenly over shards and xdist workers, or shared on --agent-limits-url)",
             None, c.optional(c.positive), "N")
LIMITS_URL = Option("limits_url", "a Valkey/Redis server (redis://[:PASSWORD@]HOST:PORT/DB, or "
                    "the environment's AGENTCLINIC_LIMITS_URL) that keeps one "
                    "--agent-rpm/--agent-tpm schedule for every process of the run (xdist "
                    "workers, shards on other machines) instead of an even share each; needs "
                    "pip install 'pytest-agentclinic[redis]'", None, c.optional(c.text), "URL")
MODELS = Option("models", "deployments file in litellm's model_list format (model_name, "
                "litellm_params, rpm/tpm): a role's model named there is served by litellm's "
                "Router", None, c.optional(c.path), "FILE")
TRANSPORT = Option("transport", "auto (an aiohttp fast path for openai/ and hosted_vllm/ models "
                   "with --agent-api-base, litellm otherwise) or litellm (every call through "
                   "litellm)", "auto", c.choice(TRANSPORTS), "NAME")
TEMPERATURE = Option("temperature", "sampling temperature of every LLM role", 0.7, c.number(0.0),
                     "T")
MAX_TOKENS = Option("max_tokens", "max tokens per model reply", 512, c.count(1), "N")
MAX_REPLY_BYTES = Option("max_reply_bytes", "largest model reply (or error body) read, in "
                         "bytes: past it the call is an error for that item, never cached",
                         4_194_304, c.count(1), "BYTES")
CACHE = Option("cache", "response cache mode: " + ", ".join(CACHE_MODES), "read-write",
               c.choice(CACHE_MODES), "MODE")
CACHE_DIR = Option("cache_dir", "response cache directory", ".agentclinic_cache", c.path, "DIR")
REPORT_DIR = Option("report_dir", "where run directories are written", "reports", c.path, "DIR")
RUN_NAME = Option("run_name", "name of this run's directory (default: a timestamp)", None,
                  c.optional(c.text), "NAME")
MIN_ACCURACY = Option("min_accuracy", "gate: the run fails when accuracy is below X (0..1)",
                      None, c.optional(c.fraction), "X")
BASELINE = Option("baseline", "gate: a run directory (or its summary.json) to compare against",
                  None, c.optional(c.path), "RUN")
MAX_DROP = Option("max_drop", "gate: the run fails when accuracy drops by more than D against "
                  "the baseline and the drop is significant", None, c.optional(c.fraction), "D")
GATE_ALPHA = Option("gate_alpha", "gate: significance level of the baseline comparison", 0.05,
                    c.fraction, "P")
GATE_ON = Option("gate_on", "gate: which conditions are gated, each doctor model on its own "
                 "(repeatable): default (the unbiased condition, every other varied "
                 "condition), all, pooled, or FIELD=VALUE (patient, bias, turn_budget, "
                 "experiment, answer_format)", ["default"], Repeated(c.text, required=True),
                 "SPEC")
# Operations (many machines, progress, cost): resolved by settings._operations.
SHARD = Option("shard", "run only shard K of N (1-based), chosen by a stable hash of each "
               "case's id, so every variant of a case lands in one shard; merge the shards' "
               "runs with 'agentclinic merge'", None, c.optional(c.shard), "K/N")
PROGRESS = Option("progress", "status line: 'auto' (live on a terminal, a line every 30 s "
                  "otherwise), 'off', or a number of seconds between lines", "auto", c.progress,
                  "auto|off|S")
MAX_COST = Option("max_cost", "start no new encounter once the spent plus in-flight cost (USD) "
                  "would pass this; encounters already started finish, so the run may "
                  "overshoot by up to --agent-concurrency encounters per worker (more for "
                  "CRAFT-MD's shared conversations)", None, c.optional(c.money), "USD")
# A smoke run on a few cases (plugin/subset.py); the gate refuses to pass a subset.
LIMIT = Option("limit", "run only the first N selected cases (after -k/-m), every item of each",
               None, c.optional(c.count(1)), "N")
SAMPLE = Option("sample", "run a random N of the selected cases, stratified by specialty "
                "(reproducible with --agent-seed)", None, c.optional(c.count(1)), "N")
SEED = Option("seed", "seed of --agent-sample", 0, c.count(0), "S")
GATE_ALLOW_SUBSET = Option("gate_allow_subset", "gate: whether a run of "
                           "--agent-limit/--agent-sample cases may pass (yes or no)", "no",
                           c.choice(("yes", "no")), "yes|no")
GATE_REDUCER = Option("gate_reducer", "gate: which reducer over a case's --agent-repeat trials "
                      "the minimum accuracy applies to: mean, pass@k, majority or all", "mean",
                      c.choice(REDUCERS), "NAME")
# Per-encounter budgets: past one the encounter ends with the outcome 'limit'.
MAX_TOKENS_PER_ENCOUNTER = Option("max_tokens_per_encounter", "end an encounter once its calls "
                                  "used more tokens than this (outcome 'limit': neither a "
                                  "misdiagnosis nor an error)", None, c.optional(c.count(1)),
                                  "N")
MAX_COST_PER_ENCOUNTER = Option("max_cost_per_encounter", "end an encounter once its calls cost "
                                "more than USD (outcome 'limit')", None,
                                c.optional(c.positive), "USD")
# How a broader answer is graded (docs/grading.md): the experts' rule, or CRAFT-MD's.
GRADING_POLICY = Option("grading_policy", "strict (a broader answer counts when it names one "
                        "disease with its variants, not a family) or paper (a broader name the "
                        "truth is a subtype of counts, as CRAFT-MD's grader)", "strict",
                        c.choice(("strict", "paper")), "strict|paper")

OPTIONS: tuple[Option, ...] = (
    DOCTOR, PATIENT, TURNS, PROTOCOL, REPEAT, CONCURRENCY, API_BASE, TIMEOUT, ENCOUNTER_TIMEOUT,
    RETRIES, BACKOFF, RETRY_AFTER_CAP, RPM, TPM, LIMITS_URL, MODELS, TRANSPORT, TEMPERATURE,
    MAX_TOKENS, MAX_REPLY_BYTES, CACHE, CACHE_DIR, REPORT_DIR, RUN_NAME, MIN_ACCURACY, BASELINE,
    MAX_DROP, GATE_ALPHA, GATE_ON, SHARD, PROGRESS, MAX_COST, LIMIT, SAMPLE, SEED,
    GATE_ALLOW_SUBSET, GATE_REDUCER, MAX_TOKENS_PER_ENCOUNTER, MAX_COST_PER_ENCOUNTER,
    GRADING_POLICY,
)



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
        action = "append" if opt.repeatable else "store"
        group.addoption(opt.flag, action=action, dest="agent_" + opt.name, default=None,
                        metavar=opt.metavar, help=f"{opt.help} (ini: {opt.ini})")
        if opt.repeatable:
            parser.addini(opt.ini, opt.help, type="linelist", default=None)
        else:
            parser.addini(opt.ini, opt.help, type="string", default=None)
    if options is not None:
        return
    # Case files are collected only from paths given on the command line or listed here,
    # so a plain ``pytest`` in a repository that merely uses the plugin runs no encounters.
    parser.addini("agent_cases", "case files or folders a plain `pytest` collects (paths "
                  "relative to the ini file)", type="paths", default=[])
