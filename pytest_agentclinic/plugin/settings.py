"""The ``--agent-*`` options, their ini twins, and the frozen settings resolved from them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from ..core.options import Option
from ..core.redact import register_url
from ..llm import preflight
from ..llm.call_options import CallSettings, call_settings
from ..llm.limiter import Budget
from ..llm.modes import CacheMode
from ..llm.served import redact_url
from ..protocols import registry
from ..protocols.base import Protocol, RunOptions
from ..report.conditions import check_gate_on
from ..report.gate import GateSettings
from . import options as o
from .options import OPTIONS
from .options import add_options as add_options

if TYPE_CHECKING:
    from ..grading.judging.rules import Policy

T = TypeVar("T")


@dataclass(frozen=True)
class Operations:
    """Running at scale: the shard this process runs, the status line, the cost limit."""

    #: (K, N): this run plays shard K of N (1-based); None runs every case.
    shard: tuple[int, int] | None = None
    #: Seconds between status lines; None: live on a terminal, 30 s otherwise; 0: off.
    progress_every: float | None = None
    max_cost_usd: float | None = None

    @property
    def shard_label(self) -> str | None:
        """``K/N`` as given, or None."""
        return f"{self.shard[0]}/{self.shard[1]}" if self.shard else None


@dataclass(frozen=True)
class Subset:
    """A smoke run's selection of cases: the first ``limit`` or a sample of ``sample``."""

    limit: int | None = None
    sample: int | None = None
    seed: int = 0

    @property
    def description(self) -> str | None:
        """What the run covers, for the report and the gate; None for every case."""
        if self.sample is not None:
            return (f"a stratified random sample of {self.sample} case(s) (--agent-sample, "
                    f"seed {self.seed})")
        if self.limit is not None:
            return f"the first {self.limit} case(s) (--agent-limit)"
        return None


@dataclass(frozen=True)
class Settings:
    """Every ``--agent-*`` value after CLI > ini > default resolution and validation."""

    doctors: tuple[str, ...]
    patients: tuple[str, ...]
    turns: tuple[int, ...]
    #: The protocol's name (see :mod:`..protocols.registry`).
    protocol: str
    #: The values of the protocol's own options (its conditions and role models).
    options: Mapping[str, Any]
    repeat: int
    concurrency: int
    cache: CacheMode
    cache_dir: Path
    report_dir: Path
    run_name: str | None
    call: CallSettings
    gate: GateSettings
    #: Deadline of one whole encounter (seconds).
    encounter_timeout: float = 900.0
    #: Case files and folders listed in the ini option ``agent_cases`` (absolute).
    case_paths: tuple[Path, ...] = ()
    operations: Operations = field(default_factory=Operations)
    subset: Subset = field(default_factory=Subset)
    #: Per-encounter budgets (tokens, USD); None: none.
    encounter_tokens: int | None = None
    encounter_cost: float | None = None
    #: How broader answers are graded: ``strict`` or ``paper`` (docs/grading.md).
    grading_policy: Policy = "strict"

    @property
    def run_options(self) -> RunOptions:
        """What the protocol expands cases with."""
        return RunOptions(doctors=self.doctors, patients=self.patients, turns=self.turns,
                          repeat=self.repeat, options=self.options)

    def make_protocol(self) -> Protocol:
        """A fresh instance of the run's protocol (one per session)."""
        return registry.get(self.protocol)()

    def summary_header(self) -> dict[str, Any]:
        """The settings that ``summary.json`` records, in its order."""
        protocol = registry.get(self.protocol)()
        return {
            "protocol": self.protocol,
            "roles": self.roles,
            "turn_budgets": list(self.turns),
            **protocol.summary_fields(self.options),
            "repeat": self.repeat,
            "cache_mode": self.cache.value,
            "temperature": self.call.temperature,
            # Where the models ran and with what: another server or max_tokens is another run.
            "api_base": redact_url(self.call.api_base),
            "sampling": self.call.sampling,
            "shard": self.operations.shard_label,
            "subset": self.subset.description,
            "grading_policy": self.grading_policy,
        }

    @property
    def roles(self) -> dict[str, str]:
        """Each role's model, as the summary header shows it."""
        return registry.get(self.protocol)().role_models(self.run_options)

    @property
    def llm_models(self) -> tuple[str, ...]:
        """Every model string of a role that is not the offline agent."""
        models = (m for joined in self.roles.values() for m in joined.split(", "))
        return tuple(m for m in dict.fromkeys(models) if m and m != "offline")


def _raw(config: pytest.Config, opt: Option[Any]) -> Any:
    try:
        cli = config.getoption("agent_" + opt.name)
        ini = config.getini(opt.ini)
    except ValueError:
        # A protocol registered after the options were added, whose conftest did not add its
        # options (``api.add_protocol_options``): its defaults apply.
        return opt.default
    if cli is not None:
        return cli
    return ini if ini not in (None, "", []) else opt.default


class Given:
    """The value of each option through its converter: ``given(RETRIES)`` is an ``int`` (as
    the declaration's converter says, so mypy checks every read). A value the converter
    refuses is a :class:`pytest.UsageError` after the flag."""

    def __init__(self, raw: Callable[[Option[Any]], Any]) -> None:
        self.raw = raw

    @classmethod
    def from_config(cls, config: pytest.Config) -> Given:
        """The values of a run: CLI > ini > default."""
        return cls(lambda opt: _raw(config, opt))

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> Given:
        """``values`` by option name, else the defaults (for tests and tools)."""
        return cls(lambda opt: values.get(opt.name, opt.default))

    def __call__(self, opt: Option[T]) -> T:
        try:
            return opt.convert(self.raw(opt))
        except ValueError as exc:
            raise pytest.UsageError(f"{opt.flag}: {exc}") from None


def _protocol(config: pytest.Config, name: str) -> tuple[str, dict[str, Any]]:
    """The protocol's name and its option values; unknown names are usage errors."""
    try:
        protocol = registry.get(name)
    except ValueError as exc:
        raise pytest.UsageError(f"--agent-protocol: {exc}") from None
    given = Given.from_config(config)
    options = {opt.name: given(opt) for opt in protocol.options}
    for role in protocol.roles:
        if role.option is not None and not options.get(role.option):
            raise pytest.UsageError(f"--agent-{role.option.replace('_', '-')}: give "
                                    "'offline' or a litellm model string")
    return protocol.name, options


def resolve(config: pytest.Config) -> Settings:
    """Resolve CLI > ini > default once; bad values raise :class:`pytest.UsageError`."""
    given = Given.from_config(config)
    for opt in OPTIONS:  # every value checked, in the order --help lists them
        given(opt)
    protocol, options = _protocol(config, given(o.PROTOCOL))
    # Relative to where pytest was started, not rootdir: `pytest ../shared/x.jsonl` has its
    # rootdir beside the data, and run output must never land there.
    root = config.invocation_params.dir
    tokens = given(o.MAX_TOKENS_PER_ENCOUNTER)
    settings = Settings(
        doctors=given(o.DOCTOR), patients=given(o.PATIENT), turns=given(o.TURNS),
        protocol=protocol, options=options, repeat=given(o.REPEAT),
        concurrency=given(o.CONCURRENCY), cache=CacheMode(given(o.CACHE)),
        cache_dir=root / given(o.CACHE_DIR), report_dir=root / given(o.REPORT_DIR),
        run_name=given(o.RUN_NAME),
        call=_call(config, given, root, _limits_url(config)), gate=_gate(given, root),
        encounter_timeout=given(o.ENCOUNTER_TIMEOUT),
        case_paths=tuple(Path(p) for p in config.getini("agent_cases")),
        operations=_operations(given), subset=_subset(given),
        encounter_tokens=tokens, encounter_cost=given(o.MAX_COST_PER_ENCOUNTER),
        grading_policy="paper" if given(o.GRADING_POLICY) == "paper" else "strict",
    )
    _check_models(config, settings)
    _check_limits_server(config, settings)
    return settings


def _call(config: pytest.Config, given: Given, root: Path,
          limits_url: str | None = None) -> CallSettings:
    """The model calls' settings, through the one builder the commands use too; rate limits
    are the provider's, split over the shards (``--agent-shard K/N``: N machines) and each
    shard's xdist workers, so the whole run stays within them (each process gets an even
    share, no coordination). With ``--agent-limits-url`` every process keeps the whole
    limits, paced on that server, and falls back to its even share (1/``parts``) when the
    server is lost."""
    from ..llm.deployments import ModelsFileError, load

    shard = given(o.SHARD)
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    workers *= shard[1] if shard else 1
    deployments = None
    models = given(o.MODELS)
    if models is not None:
        try:
            deployments = load(root / models)
        except ModelsFileError as exc:
            raise pytest.UsageError(f"--agent-models: {exc}") from None
    split = 1 if limits_url else workers
    budgets = {name: b.share(split)
               for name, b in (deployments.budgets if deployments else {}).items()}
    return call_settings(
        api_base=given(o.API_BASE), timeout=given(o.TIMEOUT), retries=given(o.RETRIES),
        backoff=given(o.BACKOFF), retry_after_cap=given(o.RETRY_AFTER_CAP),
        temperature=given(o.TEMPERATURE), max_tokens=given(o.MAX_TOKENS),
        max_reply_bytes=given(o.MAX_REPLY_BYTES), concurrency=given(o.CONCURRENCY),
        transport=given(o.TRANSPORT), budget=Budget(given(o.RPM), given(o.TPM)).share(split),
        budgets=budgets, model_list=deployments.model_list if deployments else (),
        limits_url=limits_url, parts=workers)


def _check_models(config: pytest.Config, settings: Settings) -> None:
    """Reject unknown model names at once, and, once in the controller (before any worker
    starts, without importing litellm), a missing API key or an unreachable api base."""
    if config.pluginmanager.hook.pytest_agentclinic_make_agent.get_hookimpls():
        return  # a conftest's agents may answer to any model string
    call = settings.call
    groups = {str(entry.get("model_name")) for entry in call.model_list}
    models = [(role, m) for role, joined in settings.roles.items()
              for m in joined.split(", ") if m and m != preflight.OFFLINE and m not in groups]
    for role, model in models:
        problem = preflight.check_model(model)
        if problem is not None:
            raise pytest.UsageError(f"--agent-{role.replace('_', '-')}: {problem}")
    if (not models or getattr(config, "workerinput", None) is not None
            or settings.cache is CacheMode.REPLAY or config.option.collectonly):
        return  # workers were checked by the controller; a replay calls nothing
    if call.api_base is not None:
        problem = preflight.unreachable(call.api_base)
        if problem is not None:
            raise pytest.UsageError(f"--agent-api-base: {problem}")
        return
    for role, model in models:
        variable = preflight.missing_key(model)
        if variable is not None:
            raise pytest.UsageError(
                f"--agent-{role.replace('_', '-')}={model}: no API key: set {variable} "
                "(or --agent-api-base URL for a local server)")


def _subset(given: Given) -> Subset:
    limit, sample = given(o.LIMIT), given(o.SAMPLE)
    if limit is not None and sample is not None:
        raise pytest.UsageError("--agent-limit and --agent-sample: give one of them")
    return Subset(limit=limit, sample=sample, seed=given(o.SEED))


def _operations(given: Given) -> Operations:
    return Operations(shard=given(o.SHARD), progress_every=given(o.PROGRESS),
                      max_cost_usd=given(o.MAX_COST))


def _limits_url(config: pytest.Config) -> str | None:
    """``--agent-limits-url``, else the environment's variable (a CI service sets it),
    else the ini's; a URL that is not a Redis URL is a usage error (never echoing its
    password)."""
    from ..llm import limits_url

    opt = o.LIMITS_URL
    cli = config.getoption("agent_" + opt.name)
    env = os.environ.get(limits_url.ENV, "").strip()
    source, url = ((opt.flag, cli) if cli else (limits_url.ENV, env) if env
                   else (opt.flag, config.getini(opt.ini)))
    url = str(url or "").strip()
    if not url:
        return None
    register_url(url)  # a password in it is masked from here on, in whatever is written
    try:
        return limits_url.check_url(url)
    except limits_url.LimitsURLError as exc:
        raise pytest.UsageError(f"{source}: {exc}") from None


def _check_limits_server(config: pytest.Config, settings: Settings) -> None:
    """Once, in the controller: a limits server that cannot serve is one usage line (a
    run that calls no model, or has no rate limit to share, does not ask it)."""
    call = settings.call
    limited = (call.budget.rpm or call.budget.tpm
               or any(b.rpm or b.tpm for b in call.budgets.values()))
    if (call.limits_url is None or not limited or not settings.llm_models
            or getattr(config, "workerinput", None) is not None
            or settings.cache is CacheMode.REPLAY or config.option.collectonly):
        return
    from ..llm import limits_url

    problem = limits_url.unreachable(call.limits_url)
    if problem is not None:
        raise pytest.UsageError(f"--agent-limits-url: {problem}")


def _gate(given: Given, root: Path) -> GateSettings:
    baseline_given, max_drop = given(o.BASELINE), given(o.MAX_DROP)
    if max_drop is not None and baseline_given is None:
        raise pytest.UsageError("--agent-max-drop needs --agent-baseline RUN")
    baseline = root / baseline_given if baseline_given is not None else None
    if baseline is not None and not baseline.exists():
        raise pytest.UsageError(f"--agent-baseline: {baseline} does not exist")
    try:
        on = check_gate_on(given(o.GATE_ON), registry.get(given(o.PROTOCOL)).conditions)
    except ValueError as exc:
        raise pytest.UsageError(f"--agent-gate-on: {exc}") from None
    return GateSettings(min_accuracy=given(o.MIN_ACCURACY), baseline=baseline,
                        max_drop=max_drop or 0.0, alpha=given(o.GATE_ALPHA), on=on,
                        reducer=given(o.GATE_REDUCER), subset=_subset(given).description,
                        allow_subset=given(o.GATE_ALLOW_SUBSET) == "yes")
