"""The built-in protocols' option declarations, apart from the protocols themselves.

pytest registers every option of every protocol in every run, agents or not: declaring them
here costs a few dataclasses, where importing the protocols costs their agents, grading and
report code (see ``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

from ..core.options import Option

EXPERIMENTS = ("vignette", "multiturn", "singleturn", "summarized", "examonly")
ANSWERS = ("mcq", "mcq-many", "frq")


def _biases(values: tuple[str, ...]) -> tuple[str, ...]:
    """No ``--agent-bias`` means the unbiased run only."""
    from ..agents.biases import resolve_biases  # the bias catalogue, read when used

    return resolve_biases(values) if values else ("none",)


AGENTCLINIC_OPTIONS: tuple[Option, ...] = (
    Option("measurement", "measurement model: 'offline' or a litellm model string",
           "offline", metavar="MODEL"),
    Option("moderator", "moderator model, asked only what the grading rules cannot decide",
           "offline", metavar="MODEL"),
    Option("bias", "inject a bias (repeatable): doctor:recency, patient:self_diagnosis, "
           "groups doctor:all, patient:implicit, cognitive, all...; 'none' adds the "
           "unbiased variant", [], "list", "BIAS", check=_biases),
    Option("images", "image cases: 'initial' (with the doctor's first message) or "
           "'request' (after REQUEST IMAGES); repeatable", ["initial"], "list", "MODE",
           choices=("initial", "request")),
    Option("perception", "ask the patient for its 1-10 ratings after the diagnosis: yes "
           "or no", "yes", metavar="yes|no", choices=("yes", "no")),
    Option("test_budget", "the measurement agent refuses tests that would take an "
           "encounter's test spend (price table: metrics/data/test_prices.csv) over USD",
           None, "money", "USD"),
)

CRAFTMD_OPTIONS: tuple[Option, ...] = (
    Option("experiment", "CRAFT-MD experiments (repeatable): vignette, multiturn, "
           "singleturn, summarized, examonly",
           ["vignette", "multiturn", "singleturn", "summarized"], "list", "NAME",
           choices=EXPERIMENTS),
    Option("answer", "CRAFT-MD answer modes (repeatable): mcq, mcq-many, frq",
           ["mcq", "frq"], "list", "MODE", choices=ANSWERS),
    Option("many_choices", "options of a many-choice MCQ (pooled from the same "
           "specialty)", 10, "int", "N"),
    Option("summarizer", "CRAFT-MD summarizer model: 'offline' or a litellm model string",
           "offline", metavar="MODEL"),
    Option("moderator", "moderator model, asked only what the grading rules cannot decide",
           "offline", metavar="MODEL"),
)
