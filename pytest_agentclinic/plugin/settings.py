"""The ``--agent-*`` options, their ini twins, and the frozen settings resolved from them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..core.options import Option
from ..core.redact import has_userinfo, redact, register_url
from ..llm import preflight
from ..llm.cache import CacheMode
from ..llm.caller import CallSettings
from ..llm.limiter import Budget
from ..llm.retry import RetryPolicy
from ..llm.served import redact_url
from ..protocols import registry
from ..protocols.base import Protocol, RunOptions
from ..report.conditions import check_gate_on
from ..report.gate import GateSettings
from .options import OPTION_BY_NAME, OPTIONS
from .options import add_options as add_options

if TYPE_CHECKING:
    from ..grading.judging.rules import Policy


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


def _raw(config: pytest.Config, opt: Option) -> Any:
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


def _number(opt: Option, value: Any, cast: Callable[[str], Any], minimum: float) -> Any:
    try:
        number = cast(str(value).strip())
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise pytest.UsageError(f"{opt.flag}: expected a number >= {minimum}, got {value!r}")
    return number


def _convert(opt: Option, value: Any) -> Any:
    if opt.kind == "int":
        return _number(opt, value, int, 1 if opt.name != "retries" else 0)
    if opt.kind == "int0":
        return _number(opt, value, int, 0)
    if opt.kind == "float":
        return _number(opt, value, float, 0.0)
    if opt.kind == "limit":
        if value is None:
            return None
        number = _number(opt, value, float, 0.0)
        if number <= 0:
            raise pytest.UsageError(f"{opt.flag}: expected a number > 0, got {value!r}")
        return number
    if opt.kind == "fraction":
        if value is None:
            return None
        number = _number(opt, value, float, 0.0)
        if number > 1.0:
            raise pytest.UsageError(
                f"{opt.flag}: expected a fraction between 0 and 1, got {value!r}")
        return number
    if opt.kind == "money":
        return None if value in (None, "") else _number(opt, value, float, 0.0)
    if opt.kind == "ints":
        items = value if isinstance(value, list) else str(value).split(",")
        return tuple(_number(opt, v, int, 1) for v in items if str(v).strip())
    if opt.kind == "list":
        values = [v.strip() for v in value if v and v.strip()]
        if not values and opt.default:
            raise pytest.UsageError(f"{opt.flag}: give at least one value")
        return tuple(dict.fromkeys(values))
    return value.strip() if isinstance(value, str) else value


def _checked(opt: Option, value: Any) -> Any:
    """The converted value, within the option's choices and through its own check."""
    value = _convert(opt, value)
    if opt.choices is not None:
        for v in value if isinstance(value, tuple) else (value,):
            if v not in opt.choices:
                raise pytest.UsageError(f"{opt.flag}: {v!r} is not one of: "
                                        f"{', '.join(opt.choices)}")
    if opt.check is not None:
        try:
            value = opt.check(value)
        except ValueError as exc:
            raise pytest.UsageError(f"{opt.flag}: {exc}") from None
    return value


def _protocol(config: pytest.Config, name: str) -> tuple[str, dict[str, Any]]:
    """The protocol's name and its option values; unknown names are usage errors."""
    try:
        protocol = registry.get(name)
    except ValueError as exc:
        raise pytest.UsageError(f"--agent-protocol: {exc}") from None
    options = {opt.name: _checked(opt, _raw(config, opt)) for opt in protocol.options}
    for role in protocol.roles:
        if role.option is not None and not options.get(role.option):
            raise pytest.UsageError(f"--agent-{role.option.replace('_', '-')}: give "
                                    "'offline' or a litellm model string")
    return protocol.name, options


def resolve(config: pytest.Config) -> Settings:
    """Resolve CLI > ini > default once; bad values raise :class:`pytest.UsageError`."""
    v = {opt.name: _checked(opt, _raw(config, opt)) for opt in OPTIONS}
    protocol, options = _protocol(config, v["protocol"])
    try:
        cache = CacheMode(v["cache"])
    except ValueError:
        allowed = ", ".join(m.value for m in CacheMode)
        raise pytest.UsageError(f"--agent-cache: {v['cache']!r} is not one of: {allowed}") from None
    # Relative to where pytest was started, not rootdir: `pytest ../shared/x.jsonl` has its
    # rootdir beside the data, and run output must never land there.
    root = config.invocation_params.dir
    policy = RetryPolicy(attempts=v["retries"] + 1, backoff=v["backoff"],
                         retry_after_cap=v["retry_after_cap"])
    settings = Settings(
        doctors=v["doctor"], patients=v["patient"], turns=v["turns"], protocol=protocol,
        options=options,
        repeat=v["repeat"],
        concurrency=v["concurrency"], cache=cache, cache_dir=root / v["cache_dir"],
        report_dir=root / v["report_dir"], run_name=v["run_name"],
        call=CallSettings(api_base=_api_base(v["api_base"]),
                          timeout=_positive("timeout", v["timeout"]),
                          temperature=v["temperature"], max_tokens=v["max_tokens"],
                          max_reply_bytes=_at_least_one("max_reply_bytes",
                                                        v["max_reply_bytes"]),
                          policy=policy, **_transport(config, v, root, _limits_url(config))),
        gate=_gate(v, root),
        encounter_timeout=_positive("encounter_timeout", v["encounter_timeout"]),
        case_paths=tuple(Path(p) for p in config.getini("agent_cases")),
        operations=_operations(v),
        subset=_subset(v),
        encounter_tokens=(int(v["max_tokens_per_encounter"])
                          if v["max_tokens_per_encounter"] is not None else None),
        encounter_cost=v["max_cost_per_encounter"],
        grading_policy=v["grading_policy"],
    )
    _check_models(config, settings)
    _check_limits_server(config, settings)
    return settings


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


def _subset(v: dict[str, Any]) -> Subset:
    if v["limit"] is not None and v["sample"] is not None:
        raise pytest.UsageError("--agent-limit and --agent-sample: give one of them")
    return Subset(limit=int(v["limit"]) if v["limit"] is not None else None,
                  sample=int(v["sample"]) if v["sample"] is not None else None,
                  seed=v["seed"])


def _operations(v: dict[str, Any]) -> Operations:
    shard = None
    if v["shard"]:
        k, _, n = str(v["shard"]).partition("/")
        if not (k.strip().isdigit() and n.strip().isdigit() and 1 <= int(k) <= int(n)):
            raise pytest.UsageError(f"--agent-shard: expected K/N with 1 <= K <= N (e.g. 2/4), "
                                    f"got {v['shard']!r}")
        shard = (int(k), int(n))
    progress = str(v["progress"]).strip().lower()
    every: float | None = None
    if progress == "off":
        every = 0.0
    elif progress != "auto":
        try:
            every = float(progress)
        except ValueError:
            every = -1.0
        if every <= 0:
            raise pytest.UsageError(f"--agent-progress: expected auto, off or a number of "
                                    f"seconds > 0, got {v['progress']!r}")
    max_cost = None
    if v["max_cost"] is not None:
        max_cost = _number(OPTION_BY_NAME["max_cost"], v["max_cost"], float, 0.0)
    return Operations(shard=shard, progress_every=every, max_cost_usd=max_cost)


def _transport(config: pytest.Config, v: dict[str, Any], root: Path,
               limits_url: str | None = None) -> dict[str, Any]:
    """The caller's transport settings; rate limits are the provider's, split over the
    shards (``--agent-shard K/N``: N machines) and each shard's xdist workers, so the whole
    run stays within them (each process gets an even share, no coordination). With
    ``limits_url`` every process keeps the whole limits, paced on that server, and falls
    back to its even share (1/``parts``) when the server is lost."""
    from ..llm.deployments import ModelsFileError, load

    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    workers *= _shards(v.get("shard"))
    deployments = None
    if v["models"]:
        try:
            deployments = load(root / v["models"])
        except ModelsFileError as exc:
            raise pytest.UsageError(f"--agent-models: {exc}") from None
    split = 1 if limits_url else workers
    budgets = {name: b.share(split)
               for name, b in (deployments.budgets if deployments else {}).items()}
    return {"concurrency": v["concurrency"], "budget": Budget(v["rpm"], v["tpm"]).share(split),
            "budgets": budgets, "transport": v["transport"],
            "model_list": deployments.model_list if deployments else (),
            "limits_url": limits_url, "parts": workers}


def _limits_url(config: pytest.Config) -> str | None:
    """``--agent-limits-url``, else the environment's variable (a CI service sets it),
    else the ini's; a URL that is not a Redis URL is a usage error (never echoing its
    password)."""
    from ..llm import limits_url

    opt = OPTION_BY_NAME["limits_url"]
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


def _shards(value: object) -> int:
    """N of a valid ``--agent-shard K/N`` (1 without one; :func:`_operations` reports a bad
    one)."""
    _k, _, n = str(value or "").partition("/")
    return max(int(n), 1) if n.strip().isdigit() else 1


def _positive(name: str, value: float) -> float:
    if value <= 0:
        raise pytest.UsageError(f"--agent-{name.replace('_', '-')}: expected a number of "
                                f"seconds > 0, got {value!r}")
    return value


def _at_least_one(name: str, value: int) -> int:
    if value < 1:
        raise pytest.UsageError(f"--agent-{name.replace('_', '-')}: expected a number >= 1, "
                                f"got {value!r}")
    return value


def _api_base(value: str | None) -> str | None:
    """The api base; credentials in it are refused (they would be sent nowhere and could
    leak into reports), without echoing them."""
    if value and has_userinfo(value):
        raise pytest.UsageError(
            f"--agent-api-base: credentials in the URL ({redact(value)}) are not supported; "
            "give the key through the provider's variable (e.g. OPENAI_API_KEY)")
    problem = preflight.check_api_base(value) if value else None
    if problem is not None:
        raise pytest.UsageError(f"--agent-api-base: {problem}")
    return value


def _gate(v: dict[str, Any], root: Path) -> GateSettings:
    if v["max_drop"] is not None and v["baseline"] is None:
        raise pytest.UsageError("--agent-max-drop needs --agent-baseline RUN")
    baseline = root / v["baseline"] if v["baseline"] else None
    if baseline is not None and not baseline.exists():
        raise pytest.UsageError(f"--agent-baseline: {baseline} does not exist")
    try:
        on = check_gate_on(v["gate_on"], registry.get(v["protocol"]).conditions)
    except ValueError as exc:
        raise pytest.UsageError(f"--agent-gate-on: {exc}") from None
    return GateSettings(min_accuracy=v["min_accuracy"], baseline=baseline,
                        max_drop=v["max_drop"] or 0.0, alpha=v["gate_alpha"], on=on,
                        reducer=v["gate_reducer"], subset=_subset(v).description,
                        allow_subset=v["gate_allow_subset"] == "yes")
