"""The 23 AgentClinic biases: names, groups and LLM prompt texts (how the offline agents
behave under each is :mod:`.bias_behaviour`; refusal detection is :mod:`.refusal`).

A bias is injected into one agent of an encounter, the doctor or the patient. LLM agents get
its prompt (from ``templates/biases.yaml``, versioned by :func:`bias_prompt_version`) appended
to their system prompt; the offline agents, which cannot be prompted, change as
:mod:`.bias_behaviour` describes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from types import MappingProxyType
from typing import Any, Literal

from .bias_behaviour import COGNITIVE, NAMES, NONE, SIDES, Side, description, split_name

Kind = Literal["cognitive", "implicit"]


@dataclass(frozen=True)
class Bias:
    """One bias of one agent."""

    #: ``side:bias``, e.g. ``doctor:recency``.
    name: str
    side: Side
    #: The short name, e.g. ``recency``.
    bias: str
    kind: Kind
    #: Text appended to the agent's LLM system prompt; may hold ``$distractor``.
    prompt: str
    #: What the offline agent does instead (one sentence).
    description: str


def _kind(short: str) -> Kind:
    return "cognitive" if short in (*COGNITIVE, "confirmation", "status_quo",
                                    "self_diagnosis") else "implicit"


@functools.cache
def _load() -> tuple[str, Mapping[str, Bias]]:
    """The prompt texts' version and every bias, read once, when a bias is first asked for:
    a run without biases (most runs) neither parses the texts nor imports PyYAML (~0.9 MB
    in each xdist worker)."""
    import yaml

    raw = resources.files(__package__).joinpath("templates", "biases.yaml").read_text("utf-8")
    data: Any = yaml.safe_load(raw)
    prompts: dict[str, str] = data["prompts"]
    biases: dict[str, Bias] = {}
    for side, shorts in SIDES.items():
        for short in shorts:
            name = f"{side}:{short}"
            text = f"{prompts.pop(name).strip()} {data['closing'][side].strip()}"
            # Render now, so a typo'd placeholder fails at the first bias, not its use.
            Template(text).substitute(distractor="x")
            biases[name] = Bias(name, side, short, _kind(short), text, description(side, short))
    if prompts:
        raise ValueError(f"biases.yaml: unknown biases {sorted(prompts)}")
    return str(data["version"]), MappingProxyType(biases)


class _Biases(Mapping[str, Bias]):
    """Every bias by name: the names are known at once, the prompt texts read at the first
    bias looked up (see :func:`_load`)."""

    def __getitem__(self, name: str) -> Bias:
        return _load()[1][name]

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)

    def __contains__(self, name: object) -> bool:
        return name in NAMES


#: Every bias by name (``side:bias``), in canonical order.
BIASES: Mapping[str, Bias] = _Biases()


def bias_prompt_version() -> str:
    """The version of the bias prompt texts (``templates/biases.yaml``): an encounter with
    a bias keys its cache entries on it."""
    return _load()[0]


def _build_groups() -> dict[str, tuple[str, ...]]:
    groups: dict[str, tuple[str, ...]] = {"all": NAMES}
    for kind in ("cognitive", "implicit"):
        groups[kind] = tuple(n for n in NAMES if _kind(n.split(":")[1]) == kind)
    for side in SIDES:
        groups[f"{side}:all"] = tuple(n for n in NAMES if n.startswith(side + ":"))
        for kind in ("cognitive", "implicit"):
            groups[f"{side}:{kind}"] = tuple(n for n in groups[f"{side}:all"]
                                             if _kind(n.split(":")[1]) == kind)
    return groups


#: Group name -> the bias names it expands to.
GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(_build_groups())
#: Everything :func:`resolve_biases` accepts: ``none``, the groups, then every bias.
ALLOWED: tuple[str, ...] = (NONE, *GROUPS, *BIASES)


def resolve_biases(values: Sequence[str]) -> tuple[str, ...]:
    """Expand ``--agent-bias`` values into bias names (``none`` for the unbiased variant).

    Each value is a bias (``doctor:recency``), a group (``doctor:all``, ``patient:implicit``,
    ``cognitive``, ``all``...), ``none``, or several of these separated by commas; case and
    surrounding spaces are ignored. The result has no duplicates and a fixed order whatever
    the order given: ``none`` first (only when asked for), then the doctor biases, then the
    patient biases, each in :data:`BIASES` order. Empty input gives an empty tuple.
    """
    wanted: set[str] = set()
    for value in values:
        for part in value.split(","):
            item = part.strip().lower()
            if item == NONE or item in BIASES:
                wanted.add(item)
            elif item in GROUPS:
                wanted.update(GROUPS[item])
            else:
                raise ValueError(f"unknown bias {part.strip()!r}; allowed: {', '.join(ALLOWED)}")
    return tuple(n for n in (NONE, *BIASES) if n in wanted)


def _bias(name: str) -> Bias | None:
    return None if split_name(name) is None else BIASES[name]


def bias_prompt(name: str, *, distractor: str, side: Side | None = None) -> str:
    """The prompt text of bias ``name``, ``$distractor`` filled in.

    ``distractor`` is a plausible wrong diagnosis chosen by the caller (see
    :func:`.distractors.pick_distractor`); it is required only by the prompts that mention
    it. ``none``, or a bias of the other ``side`` when one is given, gives ``""`` so callers
    can always append.
    """
    bias = _bias(name)
    if bias is None or (side is not None and bias.side != side):
        return ""
    if "$distractor" in bias.prompt and not distractor.strip():
        raise ValueError(f"bias {name!r} needs a distractor diagnosis")
    return Template(bias.prompt).substitute(distractor=distractor.strip())

